package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/ctxsleep"
	"github.com/caffeine-go/caffeine/internal/diskspace"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// FeederOptions configure a Feeder.
type FeederOptions struct {
	// Poll is the first wait after a look at an empty queue: an export
	// committed by this process ends a wait at once (percolator.DB.Watch),
	// so the waits are for other processes' exports. Each further empty
	// look doubles the wait, up to MaxPoll, and a look that applies
	// something, or an export of this process, starts again from Poll: an
	// idle feeder looks about once a MaxPoll, a busy one every Poll. On an
	// ExclusiveStore no other process exports, and the waits go up to
	// LagScan (the looks that find late commits). Defaults: Poll 25ms,
	// MaxPoll 1s.
	Poll, MaxPoll time.Duration
	// Batch bounds the entries applied at once. Default 500.
	Batch int
	// BatchBytes bounds the bytes of queue entries (documents, their
	// text included) applied at once, so that a batch of long pages does
	// not take the memory: Bleve's analysis and segment building hold
	// many times a batch's text. A batch holds one entry at least.
	// Default 2 MiB.
	BatchBytes int
	// Lag is how far behind the newest applied entry a look every LagScan
	// starts, for entries whose transactions committed after newer ones
	// were applied; the looks between start at the newest applied entry,
	// so that they do not read again the entries applied (and deleted)
	// since. An entry whose transaction took longer than Lag to commit is
	// found by the full look every FullScan. Defaults: Lag 5s, LagScan
	// 1s, FullScan 10s.
	Lag, LagScan, FullScan time.Duration
	// Gather is the shortest time between Bleve batches while exports
	// keep coming: an export that arrives at the empty queue within
	// Gather of the last batch waits for the rest of Gather before the
	// feeder looks, so the exports of a burst reach the index as one
	// batch (one segment to persist and later merge) instead of one
	// each. One that arrives after a quiet spell is applied at once. It
	// adds at most Gather to a latency, and nothing to the first update
	// after a pause. Default 20ms; negative: none.
	Gather time.Duration
	// Hold is how long an upsert that brings no new content (a document
	// whose rank, anchors or duplicates changed, fetched no later than the
	// one the index has) may wait in the queue, so that the exports of one
	// row that follow within Hold (a bulk crawl's linkers arrive one by
	// one) reach the index in one write. New pages, new content and
	// deletes never wait. Once the oldest held entry's Hold is over, the
	// feeder looks back for it (a look from Lag before the newest applied
	// entry, at most four a Hold), so it is applied within 1.25 Hold of
	// its export (Hold must be below Lag). Default 1s; negative: none.
	Hold time.Duration
	// Name names the index the feeder feeds (webtable.CheckIndexName).
	// On a store other processes reach too (one that is not a
	// percolator.ExclusiveStore: Cloud Bigtable), every index name has its
	// own export queue (IndexQueue) and gets every export once it is
	// registered (webtable.IndexPrefix; the feeder registers it when it
	// first runs); the feeder applies the queue only while it holds the
	// lease of its name (webtable.FeederLeaseRow); another feeder of the
	// same name stands by and takes over when the holder closes or its
	// lease expires. On an ExclusiveStore (embedded Badger: one process)
	// the feeder always feeds, from the default index's queue whatever its
	// name. Default DefaultIndexName.
	Name string
	// Lease is how long a lease lasts unrenewed; the holder renews it every
	// Lease/5, and a standby looks every Lease/4. Default 10s.
	Lease time.Duration
	// ClockSkew bounds how far apart the wall clocks of the processes
	// sharing the table are: a holder stops applying ClockSkew before its
	// lease expires. Default Lease/5; it must be below Lease.
	ClockSkew time.Duration
	// Logger receives failures. Nil discards them.
	Logger *slog.Logger
}

// DefaultIndexName is the name of an index whose FeederOptions give none.
const DefaultIndexName = webtable.DefaultIndex

// A Feeder applies the export queue to an index: it reads a batch of
// entries, applies it (newest version per row wins; older than the index
// is ignored), and then deletes the entries and records when each page
// became searchable (webtable.SearchableAt) in one transaction. A crash
// between the two replays the batch, which changes nothing.
type Feeder struct {
	db     *percolator.DB
	ix     *serving.Index
	opt    FeederOptions
	q      webtable.Queue // the index's queue and served column; its Spread is set by queue
	spread atomic.Int32   // the table's spread, once read (queue)
	lease  *lease         // nil on an ExclusiveStore: always the only feeder
	// holder is the fencing id (webtable.FedBy) the looks check while
	// the feeder holds its lease; "" for none (an ExclusiveStore, Drain).
	holder string
	state  atomic.Int32 // a FeederState
	// indexState is the index's registry state as the feeder last saw
	// it: 0 not known yet, 1 backfilling, 2 live.
	indexState atomic.Int32
	// since is, while the index backfills, the registry's IndexSince: the
	// holder backfills once the GC safe point has passed it. 0 when live.
	// Used by Run's goroutine only.
	since uint64

	applied atomic.Int64 // entries applied
	looks   atomic.Int64 // looks at the queue
	held    atomic.Int64 // entries left waiting by the last look (Hold)
	queued  atomic.Int64 // entries seen by the last look
	cursor  uint64       // the newest version applied, for quick looks
	// heldDue is when the Hold of the oldest entry the last looks held is
	// over (zero if none): feed looks back for it then.
	heldDue time.Time
	// filledBytes: the last look stopped at FeederOptions.BatchBytes
	// before it had Batch entries.
	filledBytes bool
	// floor is where full looks start: the table's commit bound
	// (percolator.DB.CommitBound) when the last complete full look began.
	// An entry below it had committed by then (a transaction that began
	// below it is over), so that look applied it; the dead entries below it
	// need not be read again, by full looks nor by the looks back Lag.
	// Written by Run's goroutine only; atomic for Floor.
	floor atomic.Uint64
}

// Floor returns a queue version below which every entry has been applied
// (and deleted): where a count of the queue may start, past the dead
// entries that GC has not collected yet. 0 until a full look completes.
func (f *Feeder) Floor() uint64 { return f.floor.Load() }

// NewFeeder returns a feeder of ix from db's export queue.
func NewFeeder(db *percolator.DB, ix *serving.Index, opt FeederOptions) *Feeder {
	if opt.Poll <= 0 {
		opt.Poll = 25 * time.Millisecond
	}
	if opt.MaxPoll <= 0 {
		opt.MaxPoll = time.Second
	}
	opt.MaxPoll = max(opt.MaxPoll, opt.Poll)
	if opt.Batch <= 0 {
		opt.Batch = 500
	}
	if opt.BatchBytes <= 0 {
		opt.BatchBytes = 2 << 20
	}
	if opt.Lag <= 0 {
		opt.Lag = 5 * time.Second
	}
	if opt.LagScan <= 0 {
		opt.LagScan = time.Second
	}
	if opt.FullScan <= 0 {
		opt.FullScan = 10 * time.Second
	}
	switch {
	case opt.Gather == 0:
		opt.Gather = 20 * time.Millisecond
	case opt.Gather < 0:
		opt.Gather = 0
	}
	switch {
	case opt.Hold == 0:
		opt.Hold = time.Second
	case opt.Hold < 0:
		opt.Hold = 0
	}
	opt.Hold = min(opt.Hold, opt.Lag/2)
	if opt.Name == "" {
		opt.Name = DefaultIndexName
	}
	if opt.Lease <= 0 {
		opt.Lease = 10 * time.Second
	}
	if opt.ClockSkew <= 0 || opt.ClockSkew >= opt.Lease {
		opt.ClockSkew = opt.Lease / 5
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	f := &Feeder{db: db, ix: ix, opt: opt, q: IndexQueue(db, opt.Name)}
	if _, ok := db.Store().(percolator.ExclusiveStore); !ok {
		f.lease = newLease(db.Store(), opt.Name, opt.Lease, opt.ClockSkew)
	}
	return f
}

// Applied returns how many queue entries the feeder applied.
func (f *Feeder) Applied() int64 { return f.applied.Load() }

// Queued returns the queue entries seen by the last look (applied or not
// yet deleted).
func (f *Feeder) Queued() int64 { return f.queued.Load() }

// Run applies the queue until ctx is done. On a store other processes
// reach, it first stands by until it holds the lease of its index's name,
// catches the index up with what the table says it has (another process
// may have fed it meanwhile), and then applies the queue while it holds
// the lease; it stands by again if it loses the lease, and releases it
// when ctx ends. It returns the error of a full disk (diskspace.ErrFull,
// the index's or the table's) or of a broken index (ErrIndexBroken),
// which retrying cannot cure; other failures are logged and retried.
func (f *Feeder) Run(ctx context.Context) error {
	defer f.state.Store(int32(FeederStopped))
	if f.lease == nil {
		f.indexState.Store(indexLive)
		f.state.Store(int32(FeederFeeding))
		return f.feed(ctx)
	}
	f.state.Store(int32(FeederStandby))
	for {
		err := f.register(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		f.opt.Logger.Warn("serving: register the index", "index", f.opt.Name, "err", err)
		if ctxsleep.Sleep(ctx, time.Second) != nil {
			return nil
		}
	}
	for {
		f.state.Store(int32(FeederStandby))
		if err := f.standby(ctx); err != nil {
			return nil
		}
		f.state.Store(int32(FeederFeeding))
		f.opt.Logger.Info("serving: feeding the index", "index", f.opt.Name)
		err := f.hold(ctx)
		if ctx.Err() != nil {
			return nil
		}
		f.opt.Logger.Warn("serving: lost the feeder lease; standing by", "index", f.opt.Name, "err", err)
	}
}

// feed applies the queue until ctx is done or the feeder loses its lease.
func (f *Feeder) feed(ctx context.Context) error {
	exported, stop := f.db.Watch(f.q.Prefix)
	defer stop()
	var lastFull, lastLag time.Time
	var lastBatch time.Time // when the last look applied something
	again := false          // the last look stopped at a full batch: go on from where it began
	empty := 0              // looks in a row that applied nothing, not woken by an export
	from := sinceNewest
	for {
		switch now := time.Now(); {
		case again:
		case now.Sub(lastFull) >= f.opt.FullScan:
			from = fromStart
		case now.Sub(lastLag) >= f.opt.LagScan,
			!f.heldDue.IsZero() && !now.Before(f.heldDue) && now.Sub(lastLag) >= f.opt.Hold/heldLooks:
			from = sinceLag
		default:
			from = sinceNewest
		}
		if from != sinceNewest {
			f.heldDue = time.Time{} // the look finds what it holds again
		}
		n, err := f.step(ctx, from)
		// A look back that filled its batch may have left more behind it
		// (held entries coming due, a burst of re-exports): the next look
		// starts there again rather than past them.
		again = err == nil && from != sinceNewest && (n >= f.opt.Batch || f.filledBytes)
		if err == nil && f.since > 0 && f.db.SafePoint() > f.since {
			// Every export that began before the index was registered is
			// over: what it missed is in the table now.
			err = f.backfill(ctx)
		}
		if err == nil && n > 0 {
			lastBatch = time.Now()
			empty = 0
		}
		// The intervals count from the end of a look: a slow one is not
		// followed by another at once.
		switch now := time.Now(); from {
		case fromStart:
			lastFull, lastLag = now, now
		case sinceLag:
			lastLag = now
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errLeaseLost) || errors.Is(err, errFenced):
			return err
		case errors.Is(err, serving.ErrIndexBroken) || errors.Is(err, diskspace.ErrFull):
			// Not to be retried: the process stops, says why, and is
			// restarted once space is freed.
			return err
		case err != nil:
			f.opt.Logger.Warn("serving: export queue", "index", f.opt.Name, "err", err)
			if err := ctxsleep.Sleep(ctx, time.Second); err != nil {
				return nil
			}
		case n == 0:
			t := time.NewTimer(f.idleWait(empty, lastLag))
			empty++
			select {
			case <-ctx.Done():
			case <-exported:
				empty = 0
				// Within Gather of the last batch, wait for the rest of
				// the burst; after a quiet spell, apply at once.
				if wait := f.opt.Gather - time.Since(lastBatch); f.opt.Gather > 0 && wait > 0 && ctxsleep.Sleep(ctx, wait) != nil {
					return nil
				}
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// idleWait is the wait after the empty-th empty look in a row: Poll
// doubled each time up to MaxPoll (LagScan on an ExclusiveStore), and no
// later than the next look back Lag (LagScan after lastLag) or the end
// of a Hold the looks left waiting.
func (f *Feeder) idleWait(empty int, lastLag time.Time) time.Duration {
	most := f.opt.MaxPoll
	if _, ok := f.db.Store().(percolator.ExclusiveStore); ok {
		most = max(most, f.opt.LagScan)
	}
	wait := most
	if empty < 16 {
		wait = min(f.opt.Poll<<empty, most)
	}
	wait = min(wait, f.opt.LagScan-time.Since(lastLag))
	if !f.heldDue.IsZero() {
		wait = min(wait, time.Until(f.heldDue))
	}
	return max(wait, f.opt.Poll)
}

// heldLooks bounds the looks back for held entries coming due to this many
// a Hold: in a burst of re-exports one comes due after another.
const heldLooks = 4

// Held returns the entries the last look left waiting (FeederOptions.Hold).
func (f *Feeder) Held() int64 { return f.held.Load() }

// Drain applies everything in the queue now (holding nothing back) and
// returns how many entries it applied.
func (f *Feeder) Drain(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := f.look(ctx, fromStart, 0)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

type queued struct {
	row string // the queue row
	e   webtable.Export
}

// indexCost is what applying a batch holds, in multiples of its queue
// entries' bytes: Bleve's analysis (a position per token) and the
// segment it builds (postings and a dictionary entry per term) took
// 30-75 times the text of a batch of pages of distinct words. A batch's
// bytes stay within what the budget lends divided by this (batchBytes),
// so that the loan covers what the batch builds.
const indexCost = 75

// batchBytes is the most bytes of entries a batch takes in:
// FeederOptions.BatchBytes, and within the budget's working share what
// indexCost says the share can index at once. A batch has one entry at
// least, whatever its size.
func (f *Feeder) batchBytes() int {
	n := f.opt.BatchBytes
	if w := budget.WorkSize(); w > 0 {
		n = min(n, int(w/indexCost))
	}
	return n
}

// step applies one batch from the queue and returns its size.
// lookFrom is where a look at the queue starts.
type lookFrom int

const (
	fromStart   lookFrom = iota // the whole queue
	sinceLag                    // Lag before the newest applied entry
	sinceNewest                 // the newest applied entry's version
)

// step is a look that holds back what FeederOptions.Hold says.
func (f *Feeder) step(ctx context.Context, from lookFrom) (int, error) {
	return f.look(ctx, from, f.opt.Hold)
}

// look applies one batch from the queue, leaving the entries that bring no
// new content and are younger than hold for a later look, and returns how
// many entries it applied or dropped.
func (f *Feeder) look(ctx context.Context, from lookFrom, hold time.Duration) (int, error) {
	f.looks.Add(1)
	q, err := f.queue(ctx)
	if err != nil {
		return 0, err
	}
	var start uint64 // the version the look starts at
	var bound uint64 // for a full look: the floor once it is done
	if from == fromStart {
		var err error
		if bound, err = f.db.CommitBound(ctx); err != nil {
			return 0, err
		}
	}
	floor := f.floor.Load()
	start = floor
	if from != fromStart && f.cursor > 0 {
		v := f.cursor // entries of one version may straddle two batches
		if from == sinceLag {
			v = percolator.TsFromTime(percolator.TimeFromTs(f.cursor).Add(-f.opt.Lag))
			v = max(v, floor) // below the floor every entry is applied
		}
		start = v
	}
	var (
		batch   []queued
		bad     []string
		updates []serving.Update
		had     = make(map[string]Searchable) // what the table says the index has, by row
		oldest  string                        // the first entry the look read
		read    int                           // entries the look read
		newest  uint64                        // the newest of them
		held    int                           // entries left for a later look
		minHeld uint64                        // the oldest of them
		size    int                           // bytes of the entries read
		full    bool                          // the look stopped at a full batch
	)
	now := time.Now()
	err = f.db.View(ctx, func(tx *percolator.Tx) error {
		batch, bad, updates, oldest, read, newest, held, minHeld = batch[:0], bad[:0], updates[:0], "", 0, 0, 0, 0
		size, full = 0, false
		maxBytes := f.batchBytes()
		clear(had)
		es, cut, err := readQueue(ctx, tx, q, start, f.opt.Batch, maxBytes)
		if err != nil {
			return err
		}
		for _, qe := range es {
			row, v := qe.row, qe.v
			if oldest == "" {
				oldest = row
			}
			if len(batch) > 0 && size+len(v) > maxBytes {
				full = true // this entry starts the next batch
				break
			}
			var e webtable.Export
			if err := json.Unmarshal(v, &e); err != nil || e.Row == "" {
				f.opt.Logger.Error("serving: bad export queue entry; dropped", "row", row, "err", err)
				bad = append(bad, row)
				continue
			}
			batch = append(batch, queued{row, e})
			read, newest, size = read+1, max(newest, e.Version), size+len(v)
			full = len(batch) >= f.opt.Batch || size >= maxBytes
			if full {
				break
			}
		}
		// The reader left entries behind the ones the look took.
		full = full || cut && len(batch)+len(bad) == len(es)
		// What the index has for each row, from the table: skip what is
		// not newer, hold what brings no new content and is young.
		keep := batch[:0]
		for _, q := range batch {
			have, ok := had[q.e.Row]
			if !ok {
				v, err := tx.Get(ctx, q.e.Row, f.q.Served)
				if err != nil {
					return err
				}
				have, _ = ParseSearchable(v)
				had[q.e.Row] = have
			}
			if q.e.Version <= have.Version {
				keep = append(keep, q) // stale: deleted unapplied
				continue
			}
			if hold > 0 && q.e.Op == webtable.OpUpsert && q.e.Doc != nil && have.Version > 0 &&
				!q.e.Doc.FetchedAt.After(have.Fetched) && now.Sub(percolator.TimeFromTs(q.e.Version)) < hold {
				held++
				if minHeld == 0 || q.e.Version < minHeld {
					minHeld = q.e.Version
				}
				continue
			}
			keep = append(keep, q)
			updates = append(updates, serving.Update{Export: q.e, Prev: have.Fetched})
		}
		batch = keep
		return nil
	})
	if err != nil {
		return 0, err
	}
	f.queued.Store(int64(read))
	f.held.Store(int64(held))
	f.filledBytes = full && read < f.opt.Batch
	if held > 0 {
		if due := percolator.TimeFromTs(minHeld).Add(hold); f.heldDue.IsZero() || due.Before(f.heldDue) {
			f.heldDue = due
		}
	}
	// A full look raises the floor once what it read is applied: to the
	// commit bound taken before it if it read the whole queue, else to its
	// first entry if that is older. No entry below that one is left, nor
	// can one commit later (its transaction would have begun below the
	// bound), so looks need not read the dead entries there again, even
	// while the queue never runs empty (a PageRank wave).
	raise := uint64(0)
	if from == fromStart {
		raise = bound
		if full {
			raise = min(raise, q.Version(oldest))
		}
		if held > 0 {
			raise = min(raise, minHeld)
		}
	}
	// Quick looks start past the held entries too, so that they never
	// stop at a batch of them: looks from Lag back apply them once Hold
	// is over.
	f.cursor = max(f.cursor, newest)
	if len(batch) == 0 && len(bad) == 0 {
		f.raiseFloor(raise)
		return 0, nil
	}
	release, err := budget.Hold(ctx, indexCost*int64(size))
	if err != nil {
		return 0, err
	}
	err = f.record(ctx, batch, bad, updates, had, nil)
	release()
	if err != nil {
		return 0, err
	}
	f.applied.Add(int64(len(batch)))
	f.raiseFloor(raise)
	return len(batch) + len(bad), nil
}

// queue returns the feeder's queue, with the table's spread, which it
// reads once.
func (f *Feeder) queue(ctx context.Context) (webtable.Queue, error) {
	q := f.q
	if n := f.spread.Load(); n > 0 {
		q.Spread = int(n)
		return q, nil
	}
	n, err := webtable.Spread(ctx, f.db)
	if err != nil {
		return q, err
	}
	f.spread.Store(int32(n))
	q.Spread = n
	return q, nil
}

func (f *Feeder) raiseFloor(v uint64) {
	if v > f.floor.Load() {
		f.floor.Store(v)
	}
}

// record applies updates to the index and then, in one transaction that
// the fencing cell guards, deletes the queue rows of batch and bad and
// records in each page row what the index has now (the queue's Served
// column): the updates applied, and known, which the index had already.
// had holds what the column said before. A batch entry without a queue
// row (a backfill's) has nothing to delete.
func (f *Feeder) record(ctx context.Context, batch []queued, bad []string, updates []serving.Update, had map[string]Searchable, known []serving.Applied) error {
	if f.holder != "" {
		// Apply and record only while we hold the lease, and finish
		// recording before it lapses.
		until, ok := f.lease.held()
		if !ok {
			return errLeaseLost
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, until)
		defer cancel()
	}
	applied, err := f.ix.Apply(updates)
	if err != nil {
		return err
	}
	applied = append(applied, known...)
	err = f.db.Update(ctx, func(tx *percolator.Tx) error {
		if err := f.fence(ctx, tx); err != nil {
			return err
		}
		for _, row := range bad {
			if err := tx.Delete(row, webtable.ExportDoc); err != nil {
				return err
			}
		}
		for _, q := range batch {
			if q.row == "" {
				continue
			}
			if err := tx.Delete(q.row, webtable.ExportDoc); err != nil {
				return err
			}
		}
		for _, a := range applied {
			s := Searchable{At: a.IndexedAt, Version: a.Version, Fetched: a.FetchedAt,
				Exported: percolator.TimeFromTs(a.Version).UTC()}
			if prev := had[a.Row]; !a.NewContent && a.Op == webtable.OpUpsert && prev.Version > 0 {
				// The same content again (new rank, anchors, duplicates):
				// its stage times stay those of its first export.
				s.At, s.Exported = prev.At, prev.Exported
			}
			if err := tx.Set(a.Row, f.q.Served, s.encode()); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errFenced) {
		return err
	}
	if err != nil && f.holder != "" && ctx.Err() != nil {
		// Past the deadline of the lease as it was: lost, unless renewed
		// meanwhile (a slow commit; the next look replays the batch).
		if _, ok := f.lease.held(); !ok {
			return fmt.Errorf("%w: %w", errLeaseLost, err)
		}
	}
	if err != nil {
		return fmt.Errorf("serving: delete applied queue entries: %w", err)
	}
	return nil
}

// Searchable is what webtable.SearchableAt records of the export the index
// applied last for a page.
type Searchable struct {
	Version uint64    // the export's version
	Fetched time.Time // the fetch time of its document; zero for a delete
	// When the document's content was first exported (the export
	// transaction's start) and became searchable: later exports of the same
	// content (rank, anchors, duplicates) keep them.
	Exported, At time.Time
}

func (s Searchable) encode() []byte {
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixMilli()
	}
	return fmt.Appendf(nil, "%d %d %d %d", ms(s.At), s.Version, ms(s.Fetched), ms(s.Exported))
}

// ParseSearchable parses a webtable.SearchableAt cell.
func ParseSearchable(v []byte) (Searchable, bool) {
	f := strings.Fields(string(v))
	if len(f) != 4 {
		return Searchable{}, false
	}
	var n [4]int64
	for i, x := range f {
		var err error
		if n[i], err = strconv.ParseInt(x, 10, 64); err != nil {
			return Searchable{}, false
		}
	}
	t := func(ms int64) time.Time {
		if ms <= 0 {
			return time.Time{}
		}
		return time.UnixMilli(ms).UTC()
	}
	return Searchable{At: t(n[0]), Version: uint64(n[1]), Fetched: t(n[2]), Exported: t(n[3])}, true
}
