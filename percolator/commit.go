package percolator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// CrashPoint names a step of Commit at which tests abandon a transaction, as
// a worker that dies there would.
type CrashPoint int

const (
	CrashAfterPrimaryPrewrite CrashPoint = iota + 1
	CrashAfterPrewrites
	CrashAfterPrimaryCommit
	CrashMidSecondaries
	// CrashAfterIndexEntry: the lock index entry is written, no lock yet.
	CrashAfterIndexEntry
)

// errCrashed is returned by a Commit abandoned at a CrashPoint.
var errCrashed = errors.New("percolator: injected crash")

// Commit applies the buffered writes atomically. It returns ErrConflict if
// another transaction wrote or locked one of the cells since the start
// timestamp; the transaction is then rolled back. After Commit returns nil
// the writes are visible to every transaction that starts later.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.done {
		return ErrTxDone
	}
	defer tx.Rollback()
	if len(tx.writes) == 0 {
		return nil
	}
	if tx.readOnly {
		return ErrReadOnly
	}
	rows := tx.rows()
	if tx.db.ex != nil && tx.crash == nil {
		return tx.commitOnePhase(ctx, rows)
	}
	return tx.commitTwoPhase(ctx, rows)
}

// rowWrites is one row's share of a transaction's writes, columns sorted.
type rowWrites struct {
	row  string
	cols []string
	ps   []pending
}

// rows groups the writes by row, sorted, so the primary (the first cell of
// the first row) is chosen deterministically.
func (tx *Tx) rows() []rowWrites {
	keys := make([]cellKey, 0, len(tx.writes))
	for k := range tx.writes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	var out []rowWrites
	for _, k := range keys {
		if len(out) == 0 || out[len(out)-1].row != k.row {
			out = append(out, rowWrites{row: k.row})
		}
		r := &out[len(out)-1]
		r.cols = append(r.cols, k.col)
		r.ps = append(r.ps, tx.writes[k])
	}
	return out
}

// conflictPredicate matches what makes a prewrite of r impossible: a lock
// at any timestamp, or a write committed at or after our start.
func (tx *Tx) conflictPredicate(r rowWrites) []Filter {
	fs := make([]Filter, 0, 2*len(r.cols))
	for _, col := range r.cols {
		fs = append(fs,
			Filter{Family: famLock, Column: col, KeysOnly: true},
			Filter{Family: famWrite, Column: col, MinTs: tx.startTs, Latest: true, KeysOnly: true})
	}
	return fs
}

func (tx *Tx) inline(p pending) bool {
	return p.kind == kindPut && len(p.value) <= tx.db.opt.InlineMax
}

func (tx *Tx) record(p pending, inline bool) []byte {
	w := write{kind: p.kind, startTs: tx.startTs}
	if inline {
		w.inline, w.value = true, p.value
	}
	return w.encode()
}

// commitOnePhase commits a transaction on an exclusive store in one
// store operation, without locks: the store holds the rows while the
// commit timestamp is taken and writes them at once, so no reader can see
// a row without the write once the timestamp exists (the job the locks do
// in two-phase commit), and a crash keeps all of the commit or none.
func (tx *Tx) commitOnePhase(ctx context.Context, rows []rowWrites) error {
	for {
		err := tx.commitOnePhaseOnce(ctx, rows)
		if !errors.Is(err, errRangeUsed) {
			return err
		}
		// The store holds the row's lock while it asks for the timestamp:
		// persist the oracle's next range (a write to its row) without it.
		if err := tx.db.orc.refill(ctx); err != nil {
			return err
		}
	}
}

// errRangeUsed: the oracle must persist a new range before it hands out
// another timestamp.
var errRangeUsed = errors.New("percolator: the oracle's timestamp range is used up")

func (tx *Tx) commitOnePhaseOnce(ctx context.Context, rows []rowWrites) error {
	tx.db.gate.RLock()
	defer tx.db.gate.RUnlock()
	checks := make([]RowPredicate, len(rows))
	for i, r := range rows {
		checks[i] = RowPredicate{Row: r.row, Filters: tx.conflictPredicate(r)}
	}
	matched, err := tx.db.ex.CheckAndMutateRowsAt(ctx, checks,
		func() (uint64, error) {
			if ts, ok := tx.db.orc.take(); ok {
				return ts, nil
			}
			return 0, errRangeUsed
		},
		func(commitTs uint64) []RowMutation {
			tx.commitTs = commitTs
			muts := make([]RowMutation, len(rows))
			for i, r := range rows {
				muts[i] = RowMutation{Row: r.row, Mutations: tx.onePhaseMutations(r, commitTs)}
			}
			return muts
		})
	if err != nil {
		tx.commitTs = 0
		return fmt.Errorf("percolator: commit %q: %w", rows[0].row, err)
	}
	if matched != "" {
		tx.commitTs = 0
		for _, r := range rows {
			if r.row == matched {
				tx.resolveBlockers(ctx, r)
			}
		}
		return fmt.Errorf("%w: row %q", ErrConflict, matched)
	}
	tx.db.notified(rows)
	return nil
}

// onePhaseMutations are the mutations of a one-phase commit of r at
// commitTs: each value (at the start timestamp) and its write record, and
// the notifications.
func (tx *Tx) onePhaseMutations(r rowWrites, commitTs uint64) []Mutation {
	muts := make([]Mutation, 0, 2*len(r.cols))
	for i, col := range r.cols {
		p := r.ps[i]
		in := tx.inline(p)
		if p.kind == kindPut && !in {
			muts = append(muts, Mutation{Op: SetCell, Family: famData, Column: col, Ts: tx.startTs, Value: p.value})
		}
		muts = append(muts, Mutation{Op: SetCell, Family: famWrite, Column: col, Ts: commitTs, Value: tx.record(p, in)})
		if n, ok := commitNotify(col, commitTs); ok {
			muts = append(muts, n)
		}
	}
	return tx.db.notifyMutations(r, tx.startTs, muts)
}

func (tx *Tx) commitTwoPhase(ctx context.Context, rows []rowWrites) error {
	primary := cellKey{rows[0].row, rows[0].cols[0]}
	lk := lock{primaryRow: primary.row, primaryCol: primary.col, writer: tx.db.id, wallMs: time.Now().UnixMilli(), ttlMs: tx.db.opt.LockTTL.Milliseconds()}

	// The lock index entry before any lock, so that the sweep finds
	// every lock a crash leaves (lockindex.go).
	indexed := tx.db.ex == nil
	var entry RowMutation
	if indexed {
		entry = tx.indexEntryMutation(rows, lk.wallMs)
		if err := tx.db.st.MutateRows(ctx, []RowMutation{entry}); err != nil {
			return fmt.Errorf("percolator: write lock index entry: %w", err)
		}
		if tx.crashed(CrashAfterIndexEntry) {
			return errCrashed
		}
	}
	// Each row's pieces (a row of more cells than one conditional
	// mutation checks is prewritten in several).
	split := make([][]rowWrites, len(rows))
	for i, r := range rows {
		split[i] = tx.pieces(r)
	}
	// Prewrite the primary's row first: secondaries exist only once the
	// primary lock does, which is what lets a cleaner decide by the primary.
	ref := &refresher{tx: tx, lk: lk, last: time.Now()}
	if err := tx.prewrite(ctx, split[0], lk, ref.maybe); err != nil {
		if errors.Is(err, ErrConflict) { // no lock written; else the sweep decides
			tx.unindex(rows)
		}
		return err
	}
	if indexed && time.Since(time.UnixMilli(lk.wallMs)) > tx.db.opt.LockTTL {
		// The sweep may have taken the entry for one whose prewrite
		// never lands (DB.indexGrace): write it again.
		if err := tx.db.st.MutateRows(ctx, []RowMutation{entry}); err != nil {
			tx.rollbackRows(rows[:1])
			return fmt.Errorf("percolator: write lock index entry: %w", err)
		}
	}
	if tx.crashed(CrashAfterPrimaryPrewrite) {
		return errCrashed
	}
	if err := tx.prewriteSecondaries(ctx, rows[1:], split[1:], lk, ref); err != nil {
		tx.rollbackRows(rows)
		return err
	}
	if tx.crashed(CrashAfterPrewrites) {
		return errCrashed
	}

	commitTs, err := tx.db.orc.Next(ctx)
	if err != nil {
		tx.rollbackRows(rows)
		return err
	}
	// Past the prewrites, finishing costs less than leaving locks that
	// readers of a live writer wait for: the commit point and the
	// secondaries do not stop when ctx ends (a process stopping mid-commit),
	// only after finishTimeout.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	// The commit point: replace the primary lock by a write record, if the
	// lock is still ours (a cleaner may have rolled us back).
	// The primary's row commits with it, but for the cells past its first
	// piece (a row of more cells than one call takes), which are
	// secondaries like any other.
	first := split[0]
	matched, err := tx.db.st.CheckAndMutateRow(ctx, primary.row,
		[]Filter{{Family: famLock, Column: primary.col, MinTs: tx.startTs, MaxTs: tx.startTs, KeysOnly: true}},
		tx.commitMutations(first[0], commitTs), nil)
	if err != nil {
		// Unknown outcome: leave the locks; readers resolve them by the primary.
		return fmt.Errorf("percolator: commit primary %q %q: %w", primary.row, primary.col, err)
	}
	if !matched {
		tx.rollbackRows(rows)
		return fmt.Errorf("%w: primary lock %q %q was cleaned up", ErrConflict, primary.row, primary.col)
	}
	tx.commitTs = commitTs
	if tx.crashed(CrashAfterPrimaryCommit) {
		return errCrashed
	}

	// Secondaries: committed already in effect; a failure here only leaves
	// locks that readers roll forward.
	rest := first[1:]
	for _, ps := range split[1:] {
		rest = append(rest, ps...)
	}
	muts := make([]RowMutation, 0, len(rest))
	for i, r := range rest {
		if i == len(rest)/2 && tx.crashed(CrashMidSecondaries) {
			tx.db.st.MutateRows(ctx, muts)
			return errCrashed
		}
		muts = append(muts, RowMutation{Row: r.row, Mutations: tx.commitMutations(r, commitTs)})
	}
	// The index entry goes in the same call: should a row fail, the
	// entry is written again for the sweep to roll the row forward.
	if indexed {
		muts = append(muts, indexDeleteMutation(primary.row, primary.col, tx.startTs))
	}
	if len(muts) > 0 {
		if err := tx.db.st.MutateRows(ctx, muts); err != nil {
			tx.db.opt.Logger.Warn("commit secondaries failed; readers and the lock sweep will roll them forward", "start_ts", tx.startTs, "err", err)
			if indexed && len(rest) > 0 {
				tx.db.st.MutateRows(ctx, []RowMutation{entry})
			}
		}
	}
	tx.db.notified(rows)
	return nil
}

// crashed reports whether a test asked to abandon the commit at p; the
// transaction is then forgotten without cleanup, like a dead worker's.
func (tx *Tx) crashed(p CrashPoint) bool {
	if tx.crash == nil || !tx.crash(p) {
		return false
	}
	tx.done = true
	tx.db.forget(tx)
	return true
}

// prewrite checks and locks the cells of a row, given as its pieces
// (pieces): a conditional mutation a piece, calling progress between two
// (ref.maybe: the primary lock's wall time kept fresh). A conflict in a
// later piece rolls back the pieces before it, so that a conflict leaves
// no lock of the row (commitTwoPhase relies on it for the primary's
// row); if that fails, the error is not a conflict and the locks wait
// for a reader or the sweep.
func (tx *Tx) prewrite(ctx context.Context, ps []rowWrites, lk lock, progress func(context.Context) error) error {
	for i, p := range ps {
		matched, err := tx.db.st.CheckAndMutateRow(ctx, p.row, tx.conflictPredicate(p), nil, tx.prewriteMutations(p, lk))
		if err != nil {
			return fmt.Errorf("percolator: prewrite %q: %w", p.row, err)
		}
		if matched {
			tx.resolveBlockers(ctx, p)
			return tx.undoPieces(ctx, ps[:i], fmt.Errorf("%w: row %q", ErrConflict, p.row))
		}
		if i+1 < len(ps) {
			if err := progress(ctx); err != nil {
				return tx.undoPieces(ctx, ps[:i+1], err)
			}
		}
	}
	return nil
}

// undoPieces rolls back the pieces of a row prewritten before err, and
// returns err; or, if that fails, an error that is not a conflict: the
// locks left then wait for a reader or the lock sweep.
func (tx *Tx) undoPieces(ctx context.Context, done []rowWrites, err error) error {
	for _, p := range done {
		for _, col := range p.cols {
			if rerr := tx.db.rollbackCell(ctx, p.row, col, tx.startTs); rerr != nil {
				return fmt.Errorf("percolator: prewrite %q: rolling back after %v: %w", p.row, err, rerr)
			}
		}
	}
	return err
}

// refresher keeps a committing transaction's primary lock fresh: while
// its prewrites make progress it writes the lock's wall time again every
// LockTTL/3, so readers do not take a long commit for a stuck one; a
// writer that stops making progress stops refreshing and is cleaned up
// after the TTL, as the paper wants for live but stuck workers.
type refresher struct {
	tx   *Tx
	lk   lock
	mu   sync.Mutex // guards last, serializes refreshes
	last time.Time
}

func (r *refresher) maybe(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.last) < r.tx.db.opt.LockTTL/3 {
		return nil
	}
	r.last = time.Now()
	return r.tx.refreshPrimary(ctx, r.lk)
}

// maxPieceCells bounds the cells of one conditional mutation or one row's
// share of a commit (Cloud Bigtable takes at most 100,000 mutations a
// call; a prewrite writes up to three a cell). (A variable so that tests
// can cut rows small.)
var maxPieceCells = 10_000

// pieces cuts r into runs of its cells that one conditional mutation can
// check and write (PredicateLimiter, maxPieceCells), in column order: r
// itself when it fits.
func (tx *Tx) pieces(r rowWrites) []rowWrites {
	lim, _ := tx.db.st.(PredicateLimiter)
	if len(r.cols) == 1 || lim == nil && len(r.cols) <= maxPieceCells {
		return []rowWrites{r}
	}
	var fs []Filter
	if lim != nil {
		fs = tx.conflictPredicate(r) // two filters a cell, in column order
	}
	var out []rowWrites
	for at := 0; at < len(r.cols); {
		n := min(len(r.cols)-at, maxPieceCells)
		if lim != nil {
			n = max(1, min(n, lim.FitPredicate(fs[2*at:2*(at+n)])/2))
		}
		out = append(out, rowWrites{row: r.row, cols: r.cols[at : at+n], ps: r.ps[at : at+n]})
		at += n
	}
	return out
}

// prewriteMutations are the locks (and long values) of r's writes, and
// the notify cells of its observed columns.
func (tx *Tx) prewriteMutations(r rowWrites, lk lock) []Mutation {
	muts := make([]Mutation, 0, 2*len(r.cols))
	for i, col := range r.cols {
		p := r.ps[i]
		if p.kind == kindPut && !tx.inline(p) {
			muts = append(muts, Mutation{Op: SetCell, Family: famData, Column: col, Ts: tx.startTs, Value: p.value})
		}
		muts = append(muts, Mutation{Op: SetCell, Family: famLock, Column: col, Ts: tx.startTs, Value: tx.lockOf(lk, p).encode()})
	}
	return tx.db.notifyMutations(r, tx.startTs, muts)
}

// notifyOnly reports whether r writes only the internal cells that carry
// Tx.Notify's notifications. Their names hold the start timestamp, so no
// other transaction writes or locks them: the prewrite has no conflict to
// check.
func notifyOnly(r rowWrites) bool {
	for _, col := range r.cols {
		if !strings.HasPrefix(col, notifyPrefix) {
			return false
		}
	}
	return true
}

// resolveBlockers resolves the locks on r's cells whose writers are dead
// or stuck, as a reader meeting them does, so that a retry of a
// transaction that found them in its way can commit: a blind writer (one
// that writes cells it never reads) would otherwise conflict with a dead
// writer's lock until a reader or a sweep came by. Locks of live writers
// stay; errors leave the conflict as it is.
func (tx *Tx) resolveBlockers(ctx context.Context, r rowWrites) {
	fs := make([]Filter, len(r.cols))
	for i, col := range r.cols {
		fs[i] = Filter{Family: famLock, Column: col}
	}
	cells, err := tx.db.st.ReadRow(ctx, r.row, fs...)
	if err != nil {
		return
	}
	for _, c := range cells {
		if c.Ts == tx.startTs {
			continue
		}
		l, err := decodeLock(c.Value)
		if err != nil {
			continue
		}
		if _, err := tx.db.resolve(ctx, r.row, c.Column, c.Ts, l); err != nil {
			return
		}
	}
}

// prewriteSecondaries prewrites the secondary rows (split: their pieces)
// in parallel, keeping the primary lock fresh with ref as rows and pieces
// are done. The rows that only carry notifications (notifyOnly: the
// targets of a page's links, say) have nothing to check: their locks are
// written together, with one MutateRows, instead of a conditional
// mutation a row.
func (tx *Tx) prewriteSecondaries(ctx context.Context, rows []rowWrites, split [][]rowWrites, lk lock, ref *refresher) error {
	if len(rows) == 0 {
		return nil
	}
	var checked [][]rowWrites // the pieces of each row to check
	var blind []rowWrites
	for i, r := range rows {
		if notifyOnly(r) {
			blind = append(blind, r)
		} else {
			checked = append(checked, split[i])
		}
	}
	if len(blind) < 2 {
		checked, blind = split, nil // one conditional mutation costs the same
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(tx.db.opt.CommitParallelism)
	if len(blind) > 0 {
		g.Go(func() error {
			muts := make([]RowMutation, len(blind))
			for i, r := range blind {
				muts[i] = RowMutation{Row: r.row, Mutations: tx.prewriteMutations(r, lk)}
			}
			if err := tx.db.st.MutateRows(gctx, muts); err != nil {
				return fmt.Errorf("percolator: prewrite %d rows' notifications: %w", len(blind), err)
			}
			return nil
		})
	}
	for _, ps := range checked {
		g.Go(func() error {
			if err := tx.prewrite(gctx, ps, lk, ref.maybe); err != nil {
				return err
			}
			return ref.maybe(gctx)
		})
	}
	return g.Wait()
}

func (tx *Tx) refreshPrimary(ctx context.Context, lk lock) error {
	lk.wallMs = time.Now().UnixMilli()
	l := tx.lockOf(lk, tx.writes[cellKey{lk.primaryRow, lk.primaryCol}])
	matched, err := tx.db.st.CheckAndMutateRow(ctx, lk.primaryRow,
		[]Filter{{Family: famLock, Column: lk.primaryCol, MinTs: tx.startTs, MaxTs: tx.startTs, KeysOnly: true}},
		[]Mutation{{Op: SetCell, Family: famLock, Column: lk.primaryCol, Ts: tx.startTs, Value: l.encode()}}, nil)
	if err != nil {
		return fmt.Errorf("percolator: refresh primary lock: %w", err)
	}
	if !matched {
		return fmt.Errorf("%w: primary lock was cleaned up during commit", ErrConflict)
	}
	return nil
}

// lockOf returns the lock lk of a cell whose pending write is p. A short
// value travels in the lock instead of a d:C cell: the write record will
// inline it anyway, and a cleaner rolling the write forward finds it there.
func (tx *Tx) lockOf(lk lock, p pending) lock {
	lk.kind = p.kind
	if tx.inline(p) {
		lk.inline, lk.value = true, p.value
	}
	return lk
}

func (tx *Tx) commitMutations(r rowWrites, commitTs uint64) []Mutation {
	muts := make([]Mutation, 0, 2*len(r.cols))
	for i, col := range r.cols {
		muts = append(muts,
			Mutation{Op: SetCell, Family: famWrite, Column: col, Ts: commitTs, Value: tx.record(r.ps[i], tx.inline(r.ps[i]))},
			Mutation{Op: DeleteCell, Family: famLock, Column: col, Ts: tx.startTs})
		if n, ok := commitNotify(col, commitTs); ok {
			muts = append(muts, n)
		}
	}
	return muts
}

// finishTimeout bounds the commit point and the secondaries' commit once
// the prewrites are done, and a rollback.
const finishTimeout = 10 * time.Second

// rollbackRows erases the locks and data this transaction prewrote, where
// they are still its own. Errors are ignored: leftover locks are cleaned up
// by readers.
func (tx *Tx) rollbackRows(rows []rowWrites) {
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	// The primary first: once it is gone the transaction is decided.
	failed := false
	for _, r := range rows {
		for _, col := range r.cols {
			if err := tx.db.rollbackCell(ctx, r.row, col, tx.startTs); err != nil {
				failed = true // the entry stays for the sweep
			}
		}
	}
	if !failed {
		tx.unindex(rows)
	}
}

// unindex deletes the lock index entry of tx, whose locks are gone (or
// were never written). An error leaves it for the sweep.
func (tx *Tx) unindex(rows []rowWrites) {
	if tx.db.ex != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	tx.db.st.MutateRows(ctx, []RowMutation{indexDeleteMutation(rows[0].row, rows[0].cols[0], tx.startTs)})
}
