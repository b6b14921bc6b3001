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
	c := cursor{s: s, it: txn.NewIterator(bdb.IteratorOptions{Prefix: prefix, AllVersions: true})}
	defer c.it.Close()
	return c.scanFamily(prefix, p, false, out)
}

// A cursor is an iterator that knows how old its position is.
type cursor struct {
	s  *Store
	it *bdb.Iterator
	// seq is the store's write sequence number read before the last seek:
	// the iterator's view of a row whose stripe has not been written
	// since (stripe.last <= seq) is current.
	seq uint64
}

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
			if out, err = walkKey(it, key, &pk, p.f.name, col, out); err != nil {
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
		if out, err = walkKey(it, key, &pk, p.f.name, col, out); err != nil {
			return nil, err
		}
		skipKey(it, key)
	}
	return out, nil
}

// ReadRows implements percolator.Store. It reads each locality group that a
// filter names with its own iterator and no other group. Each row is read
// with its stripe held, from an iterator position taken after the last
// write to the stripe (seeking back if need be), so a write to the row is
// seen whole or not at all.
func (s *Store) ReadRows(ctx context.Context, start, end string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if s.closed.Load() {
		return ErrClosed
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
	// One scan per locality group, with its families in name order.
	type scan struct {
		gp  []byte
		ps  []famPlan
		end []byte
		c   cursor
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
		sc.c = cursor{s: s, it: txn.NewIterator(bdb.IteratorOptions{Prefix: sc.gp, AllVersions: true})}
		defer sc.c.it.Close()
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
			fresh := st.last <= sc.c.seq
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
