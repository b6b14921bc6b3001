package percolator

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Notifications (section 2.4 of the paper). Writing an observed column sets
// a cell n:C@start_ts in the same prewrite as the data and the lock, so a
// notification exists exactly when its write may: it is never lost between
// the two phases of a commit (the bug Apache Fluo had when it wrote
// notifications after commit), and a rollback erases it with the lock. The
// notify family is its own locality group: scanning it reads nothing else.
//
// A notification n:C@v is deleted by the worker once an observer
// transaction has seen the write it announces: when the newest write of C
// visible to that transaction was started at or after v. Anything newer keeps
// its notification and runs the observer again.

// ackColumn names the column holding the start timestamp of an observer's
// last successful run on a row. Columns starting with 0x00 cannot be written
// by users.
func ackColumn(observer string) string { return "\x00ack:" + observer }

// notifyMutations adds the notify cells of r's observed columns to a
// prewrite's mutations.
func (db *DB) notifyMutations(r rowWrites, startTs uint64, muts []Mutation) []Mutation {
	for _, col := range r.cols {
		if db.observed[col] {
			muts = append(muts, Mutation{Op: SetCell, Family: famNotify, Column: col, Ts: startTs})
		}
	}
	return muts
}

// notified records that committed rows may have set notifications, and
// tells this process's workers the rows, unless all are background work.
func (db *DB) notified(rows []rowWrites) {
	set := false
	var fgRows []string
	for _, r := range rows {
		fg := false
		for _, col := range r.cols {
			m, weak := commitNotify(col, 0)
			if weak {
				col = m.Column
			}
			if weak || db.observed[col] {
				set, fg = true, fg || !db.isQuiet(col)
			}
		}
		if fg {
			fgRows = append(fgRows, r.row)
		}
	}
	if set {
		db.bump(fgRows...)
	}
	db.watched(rows)
}

// A watch is a Watch call's: ch gets a token when a commit writes a row
// with the prefix.
type watch struct {
	prefix string
	ch     chan struct{}
}

// Watch returns a channel that receives a value soon after a transaction
// of this DB commits a write to a row beginning with prefix, or a worker
// of this DB deletes the notifications of such a row that it answered
// (several may give one value), for readers that would otherwise poll,
// such as a queue's consumer or a count of pending notifications. Commits
// of other processes are not seen. Call stop when done.
func (db *DB) Watch(prefix string) (ch <-chan struct{}, stop func()) {
	w := &watch{prefix: prefix, ch: make(chan struct{}, 1)}
	db.hintMu.Lock()
	defer db.hintMu.Unlock()
	ws := append(slices.Clone(db.watches()), w)
	db.watchList.Store(&ws)
	return w.ch, func() {
		db.hintMu.Lock()
		defer db.hintMu.Unlock()
		ws := slices.DeleteFunc(slices.Clone(db.watches()), func(x *watch) bool { return x == w })
		db.watchList.Store(&ws)
	}
}

func (db *DB) watches() []*watch {
	if p := db.watchList.Load(); p != nil {
		return *p
	}
	return nil
}

func (db *DB) watched(rows []rowWrites) {
	for _, w := range db.watches() {
		for _, r := range rows {
			if strings.HasPrefix(r.row, w.prefix) {
				select {
				case w.ch <- struct{}{}:
				default:
				}
				break
			}
		}
	}
}

// isQuiet reports whether col is observed by a background observer
// (Observer.Background), whose notifications are not hinted to workers.
func (db *DB) isQuiet(col string) bool {
	_, ok := db.quiet.Load(col)
	return ok
}

// bump counts a notification set, and gives the rows of those that are not
// background work to the workers' followers.
func (db *DB) bump(rows ...string) {
	db.epoch.Add(1)
	if len(rows) == 0 {
		return
	}
	db.hintMu.Lock()
	for _, q := range db.followers {
		q.put(rows)
	}
	db.hintMu.Unlock()
}

// follow makes q receive the rows of every foreground notification this
// DB sets from now on, until unfollow.
func (db *DB) follow(q *hintQueue) {
	db.hintMu.Lock()
	db.followers = append(db.followers, q)
	db.hintMu.Unlock()
}

func (db *DB) unfollow(q *hintQueue) {
	db.hintMu.Lock()
	db.followers = slices.DeleteFunc(db.followers, func(f *hintQueue) bool { return f == q })
	db.hintMu.Unlock()
}

// maxHints bounds a hint queue. Rows beyond it are left to the scanners.
const maxHints = 4096

// A hintQueue holds rows this process just notified, for a worker to look
// at before its scanners get there: a hint saves a new notification the
// wait for a pass to reach it. Hints are only that: the notify cells decide
// what runs, and a row whose hint was dropped is found by a pass.
type hintQueue struct {
	mu    sync.Mutex
	rows  []string
	has   map[string]bool
	ready chan struct{} // holds a token while rows is not empty
}

func newHintQueue() *hintQueue {
	return &hintQueue{has: make(map[string]bool), ready: make(chan struct{}, 1)}
}

func (q *hintQueue) put(rows []string) {
	q.mu.Lock()
	for _, r := range rows {
		if !q.has[r] && len(q.rows) < maxHints {
			q.has[r] = true
			q.rows = append(q.rows, r)
		}
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// len returns the number of rows queued.
func (q *hintQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.rows)
}

// take returns the rows and empties the queue.
func (q *hintQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	rows := q.rows
	q.rows = nil
	clear(q.has)
	return rows
}

// Notify sets a weak notification on (row, col): it writes only the notify
// cell, outside any transaction, so many notifiers of one hot row never
// conflict. col must be listed in Options.Weak. Several observer runs may
// follow one weak notification, and one run may answer many.
func (db *DB) Notify(ctx context.Context, row, col string) error {
	if err := checkCell(row, col); err != nil {
		return err
	}
	if !db.weak[col] {
		return fmt.Errorf("%w: column %q is not weak (Options.Weak)", ErrInvalid, col)
	}
	ts, err := db.orc.Next(ctx)
	if err != nil {
		return err
	}
	return db.setNotify(ctx, row, col, ts)
}

func (db *DB) setNotify(ctx context.Context, row, col string, ts uint64) error {
	err := db.st.MutateRows(ctx, []RowMutation{{Row: row, Mutations: []Mutation{
		{Op: SetCell, Family: famNotify, Column: col, Ts: ts},
	}}})
	if err != nil {
		return fmt.Errorf("percolator: notify %q %q: %w", row, col, err)
	}
	if db.isQuiet(col) {
		db.bump()
	} else {
		db.bump(row)
	}
	return nil
}

// notifyPrefix marks the internal cell a transaction writes in a row to
// carry a weak notification of that row (Tx.Notify): the notification is set
// with the row's commit, at the commit timestamp, by the writer or by a
// cleaner rolling the transaction forward. The cell is named
// notifyPrefix + column + 0x00 + start ts, so transactions notifying one hot
// row never write the same cell (no conflicts), and it is written as a
// deletion, so GC removes it completely.
const notifyPrefix = "\x00n:"

// commitNotify returns the notification mutation that committing the
// internal cell col implies, if col is one.
func commitNotify(col string, commitTs uint64) (Mutation, bool) {
	if !strings.HasPrefix(col, notifyPrefix) {
		return Mutation{}, false
	}
	weak := col[len(notifyPrefix):]
	if i := strings.LastIndexByte(weak, 0); i >= 0 {
		weak = weak[:i]
	}
	return Mutation{Op: SetCell, Family: famNotify, Column: weak, Ts: commitTs}, true
}

// Notify sets a weak notification on (row, col) when the transaction
// commits, and not if it does not. Unlike DB.Notify it cannot be lost to a
// crash between the commit and the notification, and the observer it
// triggers always sees the transaction's writes. Any number of transactions
// may notify one row concurrently without conflicting. col must be in
// Options.Weak.
func (tx *Tx) Notify(row, col string) error {
	if err := tx.writable(row, col); err != nil {
		return err
	}
	if !tx.db.weak[col] {
		return fmt.Errorf("%w: column %q is not weak (Options.Weak)", ErrInvalid, col)
	}
	return tx.bufferInternal(row, notifyPrefix+col+"\x00"+strconv.FormatUint(tx.startTs, 16), pending{kind: kindDelete})
}

// Pending counts the notifications in the table per column, whether or not
// an observer for the column runs anywhere.
func (db *DB) Pending(ctx context.Context) (map[string]int, error) {
	n := make(map[string]int)
	err := db.st.ReadRows(ctx, "", "", func(_ string, cells []Cell) bool {
		seen := ""
		for _, c := range cells {
			if c.Column != seen { // several versions are one notification
				n[c.Column]++
				seen = c.Column
			}
		}
		return true
	}, Filter{Family: famNotify, KeysOnly: true})
	if err != nil {
		return nil, fmt.Errorf("percolator: count notifications: %w", err)
	}
	return n, nil
}
