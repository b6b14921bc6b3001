package badger

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/caffeine-go/caffeine/percolator"
	bdb "github.com/dgraph-io/badger/v4"
)

// readFamily appends the cells of row in family p.f that p selects, for a
// plan with a filter selecting every column.
func (s *Store) readFamily(row string, p *famPlan, out []percolator.Cell) ([]percolator.Cell, error) {
	prefix := append(rowPrefix(p.f.gp, row), p.f.esc...)
	txn := s.db.NewTransactionAt(maxOf(p.fs)+1, false)
	defer txn.Discard()
	c := newCursor(s, txn, bdb.IteratorOptions{Prefix: prefix, AllVersions: true})
	defer c.close()
	return c.scanFamily(prefix, p, false, out)
}

// A cursor is an iterator that knows how old its view is. A Badger
// iterator reads the memtables there were when it was made: a seek sees
// later writes to those, but not the writes that went to a memtable made
// since. So a cursor can be trusted for a row written before it was made,
// and at its position for a row written before its last seek too unless
// the write came after it was made; otherwise it must be made anew.
type cursor struct {
	s   *Store
	txn *bdb.Txn
	opt bdb.IteratorOptions
	it  *bdb.Iterator
	// born is the store's write sequence number read before the iterator
	// was made: it sees every write to a stripe with stripe.last <= born.
	born uint64
	// seq is the store's write sequence number read before the last seek:
	// if stripe.last <= born, the iterator's view of a row of the stripe
	// at its position is current when stripe.last <= seq too.
	seq uint64
}

func newCursor(s *Store, txn *bdb.Txn, opt bdb.IteratorOptions) *cursor {
	c := &cursor{s: s, txn: txn, opt: opt}
	c.born = s.wseq.Load()
	c.seq = c.born
	c.it = txn.NewIterator(opt)
	return c
}

// current reports whether the cursor's view of a row last written at
// write sequence number last is current where it stands; if not, and the
// write may be in a memtable the iterator does not read, it makes the
// iterator anew, and the caller must seek.
func (c *cursor) current(last uint64) bool {
	if last <= c.born {
		return last <= c.seq
	}
	c.it.Close()
	c.born = c.s.wseq.Load()
	c.seq = c.born
	c.it = c.txn.NewIterator(c.opt)
	return false
}

func (c *cursor) close() { c.it.Close() }

// testHookScanCursor, if set, runs in ReadRows after each locality group's
// cursor is made.
var testHookScanCursor func()

func (c *cursor) seek(key []byte) {
	c.seq = c.s.wseq.Load()
	c.it.Seek(key)
}

// scanFamily appends the cells p selects from the keys with prefix, the
// keys of one row and family. The caller holds the row's stripe. If fresh,
// the cursor's view of the row is current and it need not seek back.
func (c *cursor) scanFamily(prefix []byte, p *famPlan, fresh bool, out []percolator.Cell) ([]percolator.Cell, error) {
	it := c.it
	var pk picker
	var err error
	if p.cols != nil {
		for _, col := range p.cols {
			key := appendEsc(slices.Clip(prefix), col)
			c.seek(key)
			if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
				continue
			}
			pk = newPicker(forColumn(p.fs, col))
			if out, err = c.s.walkKey(it, key, &pk, p.f.name, col, out); err != nil {
				return nil, err
			}
		}
		return out, nil // the caller seeks
	}
	bound := prefix // the keys to visit
	if cp := commonPrefix(p.fs); cp != "" {
		// Only the columns beginning with cp: their keys share the escaped
		// prefix (escaping is per byte), without the column terminator.
		esc := appendEsc(slices.Clip(prefix), cp)
		bound = esc[:len(esc)-2]
		fresh = false
	}
	if !fresh || (it.Valid() && bytes.Compare(it.Item().Key(), bound) < 0) {
		c.seek(bound)
	}
	for it.Valid() {
		key := it.Item().Key()
		if !bytes.HasPrefix(key, bound) {
			break
		}
		col, rest, ok := cutEsc(key[len(prefix):])
		if !ok || len(rest) != 0 {
			return nil, fmt.Errorf("%w: key %q", ErrCorrupt, key)
		}
		key = it.Item().KeyCopy(nil)
		pk = newPicker(forColumn(p.fs, col))
		if out, err = c.s.walkKey(it, key, &pk, p.f.name, col, out); err != nil {
			return nil, err
		}
		skipKey(it, key)
	}
	return out, nil
}

// ReadRows implements percolator.Store. A scan of sparse families only
// reads their in-memory copy (readRowsMirror); any other reads Badger
// (readRowsBadger).
func (s *Store) ReadRows(ctx context.Context, start, end string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ps, err := plan(s.families(), filters)
	if err != nil {
		return err
	}
	if len(ps) == 0 || (end != "" && end <= start) {
		return nil
	}
	// Wait for the single-step commits whose timestamps are taken: a scan
	// that began after one was must see it, even in a row the iterators
	// pass before the commit lands.
	s.atGate.Lock()
	//lint:ignore SA2001 an empty critical section is the barrier.
	s.atGate.Unlock()
	if sparseOnly(ps) {
		return s.readRowsMirror(ctx, start, end, ps, fn)
	}
	return s.readRowsBadger(ctx, start, end, ps, fn)
}

// readRowsBadger is ReadRows with the plans ps, reading Badger. It reads
// each locality group that a plan names with its own iterator and no other
// group. Each row is read with its stripe held, from an iterator position
// taken after the last write to the stripe (seeking back, or making the
// iterator anew, if need be), so a write to the row is seen whole or not at
// all.
func (s *Store) readRowsBadger(ctx context.Context, start, end string, ps []famPlan, fn func(row string, cells []percolator.Cell) bool) error {
	var err error
	// One scan per locality group, with its families in name order.
	type scan struct {
		gp  []byte
		ps  []famPlan
		end []byte
		c   *cursor
	}
	var scans []*scan
	for _, p := range ps {
		i := slices.IndexFunc(scans, func(sc *scan) bool { return bytes.Equal(sc.gp, p.f.gp) })
		if i < 0 {
			scans = append(scans, &scan{gp: p.f.gp})
			i = len(scans) - 1
		}
		scans[i].ps = append(scans[i].ps, p)
	}
	// Reading at the top version and filtering by timestamp here is what
	// lets one iterator serve filters with different bounds.
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	for _, sc := range scans {
		sc.c = newCursor(s, txn, bdb.IteratorOptions{Prefix: sc.gp, AllVersions: true})
		defer sc.c.close()
		if testHookScanCursor != nil {
			testHookScanCursor()
		}
		if end != "" {
			sc.end = rowPrefix(sc.gp, end)
		}
		sc.c.seek(rowPrefix(sc.gp, start))
	}
	for n := 0; ; n++ {
		if n%64 == 63 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// The next row is the smallest at which some scan stands.
		var row string
		found := false
		for _, sc := range scans {
			if !sc.c.it.Valid() {
				continue
			}
			key := sc.c.it.Item().Key()
			if sc.end != nil && bytes.Compare(key, sc.end) >= 0 {
				continue
			}
			r, _, _, ok := parseCell(key, len(sc.gp))
			if !ok {
				return fmt.Errorf("%w: key %q", ErrCorrupt, key)
			}
			if !found || r < row {
				row, found = r, true
			}
		}
		if !found {
			return nil
		}
		var cells []percolator.Cell
		st := s.stripe(row)
		st.mu.RLock()
		for _, sc := range scans {
			rp := rowPrefix(sc.gp, row)
			// Once the cursor has sought under the lock, it is current.
			fresh := sc.c.current(st.last)
			for i := range sc.ps {
				p := &sc.ps[i]
				if cells, err = sc.c.scanFamily(append(slices.Clip(rp), p.f.esc...), p, fresh, cells); err != nil {
					st.mu.RUnlock()
					return err
				}
				fresh = true
			}
		}
		st.mu.RUnlock()
		for _, sc := range scans {
			next := after(rowPrefix(sc.gp, row))
			if sc.c.it.Valid() && bytes.Compare(sc.c.it.Item().Key(), next) < 0 {
				sc.c.seek(next)
			}
		}
		if len(cells) == 0 {
			continue
		}
		if len(scans) > 1 {
			sort.SliceStable(cells, func(i, j int) bool { return cells[i].Family < cells[j].Family })
		}
		if !fn(row, cells) {
			return nil
		}
	}
}
