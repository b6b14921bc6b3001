package badger

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
)

// sparseRow holds the live versions of the sparse-family columns of a row.
type sparseRow map[famCol][]version

type famCol struct{ fam, col string }

// version is a live cell version, in the in-memory copy of sparse families
// and in the column states of a write. Stored slices and values are never
// modified, only replaced, so readers may share them.
type version struct {
	ts  uint64
	val []byte
	// blob is the id of the version's blob (see blob.go), 0 if none; in
	// column states only.
	blob uint64
}

// readSparse appends the cells of row in the sparse family p.f that p
// selects. The caller holds st.
func (st *stripe) readSparse(row string, p *famPlan, out []percolator.Cell) []percolator.Cell {
	r := st.sparse[row]
	if r == nil {
		return out
	}
	cols := p.cols
	if cols == nil {
		for fc := range r {
			if fc.fam == p.f.name {
				cols = append(cols, fc.col)
			}
		}
		slices.Sort(cols)
	}
	var pk picker
	for _, col := range cols {
		vs := r[famCol{p.f.name, col}]
		if len(vs) == 0 {
			continue
		}
		pk = newPicker(forColumn(p.fs, col))
		for _, v := range vs {
			if pk.take(v.ts) {
				c := percolator.Cell{Family: p.f.name, Column: col, Ts: v.ts}
				if pk.vals && len(v.val) > 0 {
					c.Value = bytes.Clone(v.val)
				}
				out = append(out, c)
			}
			if pk.left == 0 {
				break
			}
		}
	}
	return out
}

// readSparseCol appends the cells of one column of row in the sparse family
// f that fs, the filters of the column, select. The caller holds st.
func (st *stripe) readSparseCol(row string, f *family, col string, fs []percolator.Filter, out []percolator.Cell) []percolator.Cell {
	if st.sparse == nil {
		return out
	}
	vs := st.sparse[row][famCol{f.name, col}]
	if len(vs) == 0 {
		return out
	}
	pk := newPicker(fs)
	for _, v := range vs {
		if pk.take(v.ts) {
			c := percolator.Cell{Family: f.name, Column: col, Ts: v.ts}
			if pk.vals && len(v.val) > 0 {
				c.Value = bytes.Clone(v.val)
			}
			out = append(out, c)
		}
		if pk.left == 0 {
			break
		}
	}
	return out
}

// sparseCol returns the live versions of a sparse column, newest first. The
// caller holds st and must not modify the result.
func (st *stripe) sparseCol(row string, fc famCol) []version {
	return st.sparse[row][fc]
}

// setSparse replaces the live versions of a sparse column. The caller holds
// st for writing.
func (st *stripe) setSparse(row string, fc famCol, vs []version) {
	r := st.sparse[row]
	if len(vs) == 0 {
		if r != nil {
			delete(r, fc)
			if len(r) == 0 {
				delete(st.sparse, row)
				if len(st.sparse) == 0 {
					st.sparse = nil
				}
			}
		}
		return
	}
	if r == nil {
		if st.sparse == nil {
			st.sparse = make(map[string]sparseRow)
		}
		r = make(sparseRow)
		st.sparse[row] = r
	}
	r[fc] = vs
}

// loadSparse copies the live cells of family f into memory. No write to f
// may run meanwhile: the caller holds every stripe, or the store is still
// opening.
func (s *Store) loadSparse(f *family) error {
	return s.scanSparse(f, func(row string, fc famCol, vs []version) {
		s.stripe(row).setSparse(row, fc, vs)
	})
}

// scanSparse calls fn with the live versions of every column of family f
// that has any, reading Badger.
func (s *Store) scanSparse(f *family, fn func(row string, fc famCol, vs []version)) error {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewIterator(bdb.IteratorOptions{Prefix: f.gp, AllVersions: true})
	defer it.Close()
	var pk picker
	all := []percolator.Filter{{Family: f.name}}
	var cells []percolator.Cell
	for it.Seek(f.gp); it.Valid(); {
		key := it.Item().Key()
		row, fam, col, ok := parseCell(key, len(f.gp))
		if !ok {
			return fmt.Errorf("%w: key %q", ErrCorrupt, key)
		}
		if fam != f.name {
			// The family's keys are interleaved with the other families of
			// its group, row by row: jump over the others.
			rp := rowPrefix(f.gp, row)
			if fam < f.name {
				it.Seek(append(rp, f.esc...))
			} else {
				it.Seek(after(rp))
			}
			continue
		}
		key = it.Item().KeyCopy(nil)
		pk = newPicker(all)
		var err error
		if cells, err = s.walkKey(it, key, &pk, fam, col, cells[:0]); err != nil {
			return err
		}
		skipKey(it, key)
		if len(cells) == 0 {
			continue
		}
		vs := make([]version, len(cells))
		for i, c := range cells {
			vs[i] = version{ts: c.Ts, val: c.Value}
		}
		fn(row, famCol{fam, col}, vs)
	}
	return nil
}

// dropSparse forgets the in-memory copy of a family. The caller holds every
// stripe.
func (s *Store) dropSparse(name string) {
	for i := range s.stripes {
		st := &s.stripes[i]
		for row, r := range st.sparse {
			for fc := range r {
				if fc.fam == name {
					delete(r, fc)
				}
			}
			if len(r) == 0 {
				delete(st.sparse, row)
			}
		}
		if len(st.sparse) == 0 {
			st.sparse = nil
		}
	}
}
