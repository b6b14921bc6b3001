package badger

import (
	"context"
	"slices"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
)

// sparseOnly reports whether every family of the plans ps is sparse, so
// that a scan can read their in-memory copy and not Badger.
func sparseOnly(ps []famPlan) bool {
	return !slices.ContainsFunc(ps, func(p famPlan) bool { return !p.f.sparse })
}

// A sparseHit is a row that a scan of sparse families found in their
// in-memory copy, with the cells it selects.
type sparseHit struct {
	row   string
	cells []percolator.Cell
}

// readRowsMirror is ReadRows with the plans ps, all of sparse families: it
// reads their in-memory copy, and no Badger iterator, so it does not walk
// the deleted versions that Badger keeps until compaction. It takes the
// cells of each stripe's rows in [start, end) with the stripe held for
// reading, so a write to a row is seen whole or not at all, and calls fn,
// in row order, once it holds no stripe (fn may write to the store).
func (s *Store) readRowsMirror(ctx context.Context, start, end string, ps []famPlan, fn func(row string, cells []percolator.Cell) bool) error {
	hits, err := s.collectSparse(ctx, start, end, ps)
	if err != nil {
		return err
	}
	slices.SortFunc(hits, func(a, b sparseHit) int { return strings.Compare(a.row, b.row) })
	for i, h := range hits {
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !fn(h.row, h.cells) {
			return nil
		}
	}
	return nil
}

// collectSparse returns the rows in [start, end) ("" end: unbounded) with
// cells that the plans ps of sparse families select, in no order, reading
// each stripe with it held for reading.
func (s *Store) collectSparse(ctx context.Context, start, end string, ps []famPlan) ([]sparseHit, error) {
	var hits []sparseHit
	var buf []percolator.Cell
	for i := range s.stripes {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		st := &s.stripes[i]
		if !st.mayHoldSparse() {
			continue
		}
		st.mu.RLock()
		hits, buf = st.collectSparse(start, end, ps, hits, buf)
		st.mu.RUnlock()
	}
	return hits, nil
}

// mayHoldSparse reports whether st may hold sparse cells, without its
// lock: false means that, at the moment of the call, st had no sparse cells
// and no writer had started changing it, which a read under the lock would
// have found too. A holder for writing sets seqWriting before it changes
// anything (and, in CheckAndMutateRowAt, before it passes atGate), so a
// write in progress always sends the caller to the lock.
func (st *stripe) mayHoldSparse() bool {
	return st.seq.Load()&(seqWriting|seqSparse) != 0
}

// collectSparse appends to hits the rows of st in [start, end) ("" end:
// unbounded) with cells that the plans ps of sparse families select. The
// cells go to buf, which it returns grown, each row's cells being a clipped
// part of it that later appends do not touch. The caller holds st.
func (st *stripe) collectSparse(start, end string, ps []famPlan, hits []sparseHit, buf []percolator.Cell) ([]sparseHit, []percolator.Cell) {
	for row := range st.sparse {
		if row < start || (end != "" && row >= end) {
			continue
		}
		n := len(buf)
		for i := range ps {
			buf = st.readSparse(row, &ps[i], buf)
		}
		if len(buf) > n {
			hits = append(hits, sparseHit{row, buf[n:len(buf):len(buf)]})
		}
	}
	return hits, buf
}
