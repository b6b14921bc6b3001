package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// The registry of index names (webtable.IndexPrefix): every registered
// name has its own export queue and served column, and every export
// transaction writes one entry per name it sees registered. A feeder
// registers its name when it first runs. A name registered at R (a
// timestamp after its registration committed) misses the exports of the
// transactions that began before R; once the GC safe point has passed R
// all of those are over, and the holder of the name's lease backfills
// them from the table (every page's last export, webtable.ExportLast at
// webtable.ExportVer) and marks the name live.

// ErrDropIndex is returned by DropIndex when the name cannot be dropped.
var ErrDropIndex = errors.New("serving: cannot drop the index")

// IndexQueue returns the export queue that the feeder of the index named
// name applies: on an ExclusiveStore (one process, one index) the default
// index's whatever the name, else name's (webtable.QueueOf).
func IndexQueue(db *percolator.DB, name string) webtable.Queue {
	if _, ok := db.Store().(percolator.ExclusiveStore); ok {
		return webtable.QueueOf(webtable.DefaultIndex)
	}
	return webtable.QueueOf(name)
}

// The values of Feeder.indexState.
const (
	indexBackfilling = 1
	indexLive        = 2
)

// IndexState returns the registry state of the feeder's index as the
// feeder last saw it: webtable.IndexLive, webtable.IndexBackfilling (the
// index may miss exports from before its registration until the backfill
// ran), or "" before the feeder looked. It is safe for concurrent use.
func (f *Feeder) IndexState() string {
	switch f.indexState.Load() {
	case indexBackfilling:
		return webtable.IndexBackfilling
	case indexLive:
		return webtable.IndexLive
	}
	return ""
}

// registration is an index's registry row.
type registration struct {
	found bool   // a row, or the default index of an empty registry
	state string // webtable.IndexState
	since uint64 // webtable.IndexSince, 0 if not written yet
}

// registered returns every registered name's row.
func registered(ctx context.Context, tx *percolator.Tx) (map[string]registration, error) {
	regs := make(map[string]registration)
	err := tx.Scan(ctx, webtable.IndexPrefix, webtable.IndexPrefix+"\xff", "index:", func(row, col string, v []byte) bool {
		name := strings.TrimPrefix(row, webtable.IndexPrefix)
		r := regs[name]
		r.found = true
		switch col {
		case webtable.IndexState:
			r.state = string(v)
		case webtable.IndexSince:
			r.since, _ = strconv.ParseUint(string(v), 10, 64)
		}
		regs[name] = r
		return true
	})
	return regs, err
}

// readRegistration returns name's registry row as tx sees it; with no
// name registered the default index is live.
func readRegistration(ctx context.Context, tx *percolator.Tx, name string) (registration, error) {
	regs, err := registered(ctx, tx)
	if err != nil {
		return registration{}, err
	}
	if len(regs) == 0 && name == webtable.DefaultIndex {
		return registration{found: true, state: webtable.IndexLive}, nil
	}
	return regs[name], nil
}

// setRegistration records what the feeder learnt of its registry row.
func (f *Feeder) setRegistration(r registration) {
	switch {
	case !r.found:
	case r.state == webtable.IndexBackfilling:
		f.indexState.Store(indexBackfilling)
		if r.since > 0 {
			f.since = r.since
		}
	default:
		f.indexState.Store(indexLive)
		f.since = 0
	}
}

// register registers the feeder's index name if it is not yet, and loads
// its state. The default index of an empty registry is registered by
// nobody: such a table behaves as before registries (one queue). A name
// registered into an empty registry registers the default index too, live,
// which every export fed while none was registered.
func (f *Feeder) register(ctx context.Context) error {
	name := f.q.Name
	var reg registration
	err := f.db.Update(ctx, func(tx *percolator.Tx) error {
		regs, err := registered(ctx, tx)
		if err != nil {
			return err
		}
		if r, ok := regs[name]; ok {
			reg = r
			return nil
		}
		if len(regs) == 0 {
			if name == webtable.DefaultIndex {
				reg = registration{found: true, state: webtable.IndexLive}
				return nil
			}
			if err := tx.Set(webtable.IndexRow(webtable.DefaultIndex), webtable.IndexState, []byte(webtable.IndexLive)); err != nil {
				return err
			}
		}
		reg = registration{found: true, state: webtable.IndexBackfilling}
		return tx.Set(webtable.IndexRow(name), webtable.IndexState, []byte(webtable.IndexBackfilling))
	})
	if err != nil {
		return fmt.Errorf("serving: register index %q: %w", name, err)
	}
	if reg.state == webtable.IndexBackfilling && reg.since == 0 {
		// R: webtable.RegistryTTL after a timestamp taken once the
		// registration committed. Every export transaction that begins
		// after it sees the name, even through a registry read that much
		// older.
		var since uint64
		ttl := percolator.TsFromTime(time.UnixMilli(0).Add(webtable.RegistryTTL))
		if err := f.db.View(ctx, func(tx *percolator.Tx) error { since = tx.StartTs() + ttl; return nil }); err != nil {
			return fmt.Errorf("serving: register index %q: %w", name, err)
		}
		err := f.db.Update(ctx, func(tx *percolator.Tx) error {
			cur, err := readRegistration(ctx, tx, name)
			if err != nil {
				return err
			}
			if reg = cur; cur.state != webtable.IndexBackfilling || cur.since != 0 {
				return nil // written meanwhile
			}
			reg.since = since
			return tx.Set(webtable.IndexRow(name), webtable.IndexSince, []byte(strconv.FormatUint(since, 10)))
		})
		if err != nil {
			return fmt.Errorf("serving: register index %q: %w", name, err)
		}
	}
	f.setRegistration(reg)
	if reg.state == webtable.IndexBackfilling {
		f.opt.Logger.Info("serving: index registered; it backfills once every export begun before is over", "index", name, "since", reg.since)
	}
	return nil
}

// pageRows is where the page rows start: every row of the '!' prefix
// (queues, registry, clusters) sorts before it.
const pageRows = "\""

// backfill applies to the index every page's last export that is newer
// than what the served column records (the exports that began before the
// index was registered wrote no entry in its queue), records them as a
// batch of the queue would be, and marks the index live. It reads the
// table in one snapshot, begun once the GC safe point passed the
// registration: every export that began before is over.
func (f *Feeder) backfill(ctx context.Context) error {
	had := make(map[string]Searchable) // the served column, by row
	n := 0
	err := f.db.View(ctx, func(tx *percolator.Tx) error {
		err := tx.Scan(ctx, pageRows, "", f.q.Served, func(row, col string, v []byte) bool {
			if s, ok := ParseSearchable(v); ok && col == f.q.Served && !strings.HasPrefix(row, "!") {
				had[row] = s
			}
			return true
		})
		if err != nil {
			return err
		}
		var (
			batch   []queued
			updates []serving.Update
			known   []serving.Applied // what the index copy has already (built from the table)
			row     string
			cells   = make(map[string][]byte)
			bad     error
		)
		finish := func() {
			if row == "" || strings.HasPrefix(row, "!") {
				return
			}
			v, _ := strconv.ParseUint(string(cells[webtable.ExportVer]), 10, 64)
			have := had[row]
			if v == 0 || v <= have.Version {
				return
			}
			cur, in, err := f.ix.Version(row)
			if err != nil {
				bad = err
				return
			}
			e := webtable.Export{Version: v, Row: row}
			prev := have.Fetched
			if cells[webtable.ExportDigest] != nil && cells[webtable.ExportLast] != nil {
				var d webtable.Doc
				if err := json.Unmarshal(cells[webtable.ExportLast], &d); err != nil {
					f.opt.Logger.Error("serving: backfill: bad exported document", "row", row, "err", err)
					return
				}
				// Not new content: its latency was counted where it was fed.
				e.Op, e.URL, e.Doc, prev = webtable.OpUpsert, d.URL, &d, d.FetchedAt
			} else {
				if !in && have.Version == 0 {
					return // never had it
				}
				e.Op = webtable.OpDelete
				e.URL, _ = webtable.URL(row)
			}
			batch = append(batch, queued{e: e})
			if e.Op == webtable.OpUpsert && in && cur >= v || e.Op == webtable.OpDelete && !in {
				// The copy has it (a new directory's index is built from
				// the table): recorded, not applied again.
				a := serving.Applied{URL: e.URL, Row: row, Op: e.Op, Version: v, IndexedAt: time.Now().UTC()}
				if e.Doc != nil {
					a.FetchedAt = e.Doc.FetchedAt
				}
				known = append(known, a)
				return
			}
			updates = append(updates, serving.Update{Export: e, Prev: prev})
		}
		// A batch at a time: the scan stops when one is full, records
		// it, and goes on at the row it stopped at.
		for start := pageRows; ; {
			next := ""
			err := tx.Scan(ctx, start, "", "export:", func(r, col string, v []byte) bool {
				if r != row {
					finish()
					if bad != nil {
						return false
					}
					if len(batch) >= f.opt.Batch {
						next = r
						return false
					}
					row = r
					clear(cells)
				}
				cells[col] = v
				return true
			})
			if err != nil {
				return err
			}
			if next == "" && bad == nil {
				finish() // the last row
			}
			if bad != nil {
				return bad
			}
			row = ""
			if len(batch) > 0 {
				if err := f.record(ctx, batch, nil, updates, had, known); err != nil {
					return err
				}
				n += len(updates)
				batch, updates, known = batch[:0], updates[:0], known[:0]
			}
			if next == "" {
				return nil
			}
			start = next
		}
	})
	if err != nil {
		return fmt.Errorf("serving: backfill: %w", err)
	}
	err = f.db.Update(ctx, func(tx *percolator.Tx) error {
		if err := f.fence(ctx, tx); err != nil {
			return err
		}
		reg, err := readRegistration(ctx, tx, f.q.Name)
		if err != nil || reg.state != webtable.IndexBackfilling {
			return err
		}
		return tx.Set(webtable.IndexRow(f.q.Name), webtable.IndexState, []byte(webtable.IndexLive))
	})
	if err != nil {
		if errors.Is(err, errFenced) {
			return err
		}
		return fmt.Errorf("serving: backfill: %w", err)
	}
	f.since = 0
	f.indexState.Store(indexLive)
	f.opt.Logger.Info("serving: backfilled the index; it is live", "index", f.q.Name, "applied", n)
	return nil
}

// DropIndex retires the index named name: it deletes its registry row, so
// that exports stop writing its queue, and then the queue's entries, and
// returns how many it deleted. Run it when no feeder of name runs (one
// would stop getting exports). An export that began before the drop may
// still write an entry after it: run DropIndex again later to delete those
// (a name not registered just has its queue deleted). It refuses to drop
// the last registered name, or the default index while none is registered:
// every export goes somewhere. The served column of the name stays in the
// page rows; a feeder that registers the name again backfills over it.
func DropIndex(ctx context.Context, db *percolator.DB, name string) (int, error) {
	if err := webtable.CheckIndexName(name); err != nil {
		return 0, err
	}
	err := db.Update(ctx, func(tx *percolator.Tx) error {
		regs, err := registered(ctx, tx)
		if err != nil {
			return err
		}
		if _, ok := regs[name]; !ok {
			if len(regs) == 0 && name == webtable.DefaultIndex {
				return fmt.Errorf("%w %q: no other index is registered", ErrDropIndex, name)
			}
			return nil
		}
		if len(regs) == 1 {
			return fmt.Errorf("%w %q: it is the only index registered", ErrDropIndex, name)
		}
		for _, col := range []string{webtable.IndexState, webtable.IndexSince} {
			if err := tx.Delete(webtable.IndexRow(name), col); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	q := webtable.QueueOf(name)
	n := 0
	for {
		var rows []string
		err := db.View(ctx, func(tx *percolator.Tx) error {
			rows = rows[:0]
			return tx.Scan(ctx, q.Prefix, q.End(), webtable.ExportDoc, func(row, _ string, _ []byte) bool {
				rows = append(rows, row)
				return len(rows) < 500
			})
		})
		if err != nil || len(rows) == 0 {
			return n, err
		}
		err = db.Update(ctx, func(tx *percolator.Tx) error {
			for _, row := range rows {
				if err := tx.Delete(row, webtable.ExportDoc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += len(rows)
	}
}
