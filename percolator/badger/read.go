package badger

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
)

// Badger user meta of a cell entry. A Badger tombstone (written with
// DeleteAt) is the fourth kind of entry; it has no user meta.
const (
	// metaLive is a live cell; the Badger value is the cell's value.
	metaLive byte = iota
	// metaEmpty is a live cell with an empty value. The Badger value is one
	// placeholder byte, because Badger takes an entry with an empty value
	// and no internal meta bits for a missing one once it is in a table.
	metaEmpty
	// metaDeleted hides this version only, where a tombstone would hide
	// older live versions too. Its value is a placeholder byte.
	metaDeleted
	// metaBlob is a live cell whose value is a blob (see blob.go); the
	// Badger value is the blob's id.
	metaBlob
)

// walkKey consumes the versions of key from it, which must be positioned at
// key's newest version of interest, and appends the cells p selects. It
// applies the deletion rules: a tombstone ends the column (nothing older is
// live), a metaDeleted entry hides its own version. It may leave it at any
// version of key; callers that go on call skipKey.
func (s *Store) walkKey(it *bdb.Iterator, key []byte, p *picker, fam, col string, out []percolator.Cell) ([]percolator.Cell, error) {
	for ; it.Valid(); it.Next() {
		item := it.Item()
		if !bytes.Equal(item.Key(), key) || item.IsDeletedOrExpired() {
			return out, nil
		}
		switch item.UserMeta() {
		case metaDeleted:
			continue
		case metaLive, metaEmpty, metaBlob:
		default:
			return out, fmt.Errorf("%w: key %q has user meta %d", ErrCorrupt, key, item.UserMeta())
		}
		ts := item.Version() - 1
		if p.take(ts) {
			c := percolator.Cell{Family: fam, Column: col, Ts: ts}
			if p.vals {
				v, err := s.itemValue(item)
				if err != nil {
					return out, fmt.Errorf("badger: read %q: %w", key, err)
				}
				c.Value = v
			}
			out = append(out, c)
		}
		if p.left == 0 {
			return out, nil
		}
	}
	return out, nil
}

// skipKey moves it past the versions of key: a few steps, then a seek,
// since a column's history may be long.
func skipKey(it *bdb.Iterator, key []byte) {
	for n := 0; it.Valid() && bytes.Equal(it.Item().Key(), key); n++ {
		if n == 4 {
			// key+0x00 is the smallest key above key.
			it.Seek(append(key[:len(key):len(key)], 0))
			return
		}
		it.Next()
	}
}

// ReadRow implements percolator.Store.
func (s *Store) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	out, _, err := s.ReadPoint(ctx, nil, row, filters, nil)
	return out, err
}

// AppendRow is ReadRow appending the cells to dst, which it may overwrite
// up to its capacity, and taking the filters as a slice; it keeps neither
// dst nor filters. Reusing dst saves an allocation per read.
func (s *Store) AppendRow(ctx context.Context, dst []percolator.Cell, row string, filters []percolator.Filter) ([]percolator.Cell, error) {
	out, _, err := s.ReadPoint(ctx, dst, row, filters, nil)
	return out, err
}

// ReadPoint is AppendRow building the key it looks up first (see
// Store.prepare) in buf, which it may overwrite up to its capacity. It
// returns buf, grown if it had to be, for the caller's next read; it keeps
// none of dst, filters and buf. Reusing buf saves another allocation per
// read.
func (s *Store) ReadPoint(ctx context.Context, dst []percolator.Cell, row string, filters []percolator.Filter, buf []byte) ([]percolator.Cell, []byte, error) {
	if err := s.usable(); err != nil {
		return nil, buf, err
	}
	if err := ctx.Err(); err != nil {
		return nil, buf, err
	}
	dst = dst[:0]
	st := s.stripe(row)
	// A point read of a Newest family's column (Percolator's write
	// record) builds its key and the key's hash now.
	// pre is filled in place and passed by address: copying its nine
	// words costs more than the rest of what ReadPoint does itself.
	var pre preKey
	s.prepare(&pre, row, filters, buf)
	if pre.key == nil {
		out, err := s.appendRow(st, dst, row, filters, pre)
		return out, buf, err
	}
	buf = pre.key[:0]
	if out, ok := s.readCached(st, dst, filters, &pre); ok {
		return out, buf, nil
	}
	out, err := s.appendRow(st, dst, row, filters, pre)
	return out, buf, err
}

// readCached is the short way of a point read like Percolator's: its
// filters name one column each; one reads the newest version of pre's
// column, whose version the cache holds, and the others are of sparse
// families, of which no row of st has cells. It reports false, having
// read nothing, when the read is not of that shape or a write held st
// meanwhile; the read then goes the general way (appendRow), which
// comes to the same cells.
func (s *Store) readCached(st *stripe, dst []percolator.Cell, filters []percolator.Filter, pre *preKey) ([]percolator.Cell, bool) {
	seq := st.seq.Load()
	if seq&(seqWriting|seqSparse) != 0 {
		return nil, false
	}
	// The families are loaded after seq, as in appendRow.
	fams := s.families()
	var fl *percolator.Filter
	for k := range filters {
		f, ok := fams.get(filters[k].Family)
		switch {
		case !ok || filters[k].Column == "":
			return nil, false
		case f.sparse:
			// No cell to select: st has no sparse cells.
		case fl == nil && f.name == pre.fam && filters[k].Column == pre.col && filters[k].Latest:
			fl = &filters[k]
		default:
			return nil, false
		}
	}
	if fl == nil {
		return nil, false
	}
	ver, ok := s.versOf(st).get(pre.b, pre.tag)
	if !ok || ver-1 > upper(fl) {
		return nil, false
	}
	out := dst
	if ts := ver - 1; ts >= fl.MinTs {
		var v []byte
		if !fl.KeysOnly {
			txn := s.db.NewTransactionAt(ver, false)
			item, err := txn.Get(pre.key)
			if err != nil || item.Version() != ver || !isLive(item.UserMeta()) {
				// Not what the cache said (see readColumn).
				txn.Discard()
				return nil, false
			}
			v, err = s.itemValue(item)
			txn.Discard()
			if err != nil {
				return nil, false
			}
		}
		// Filled in place: a Cell built first and appended is copied.
		out = append(out, percolator.Cell{})
		c := &out[len(out)-1]
		c.Family, c.Column, c.Ts, c.Value = pre.fam, pre.col, ts, v
	}
	if st.seq.Load() != seq {
		return nil, false
	}
	return out, true
}

// appendRow is the rest of ReadPoint, which prepared pre.
func (s *Store) appendRow(st *stripe, dst []percolator.Cell, row string, filters []percolator.Filter, pre preKey) ([]percolator.Cell, error) {
	var c colFilters
	if seq := st.seq.Load(); seq&seqWriting == 0 {
		// No write holds the row: try without the lock (see the package
		// comment). The families are loaded after seq, so a change of
		// sparseness, which holds every stripe, is caught too.
		ok, err := c.load(s.families(), filters, false)
		if err != nil {
			return nil, err
		}
		if ok && !(c.sparse && seq&seqSparse != 0) {
			out, err := s.readCols(st, row, &c, false, seq, pre, dst)
			if st.seq.Load() == seq {
				return out, err
			}
		}
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	fams := s.families()
	if ok, err := c.load(fams, filters, false); err != nil {
		return nil, err
	} else if ok {
		return s.readCols(st, row, &c, true, st.seq.Load(), pre, dst)
	}
	ps, err := plan(fams, filters)
	if err != nil {
		return nil, err
	}
	return s.readRow(st, row, ps, dst)
}

// maxCols is the most filters that colFilters holds.
const maxCols = 8

// colFilters is the plan of a read whose filters each name one column, the
// shape of Percolator's point reads and predicates. Unlike plan, it needs no
// allocation: it lives on the caller's stack, and refers to the caller's
// filters rather than copying them.
type colFilters struct {
	n      int
	sparse bool // some filter is of a sparse family
	exists bool // read every filter as Latest and KeysOnly
	src    []percolator.Filter
	// ord holds the indexes in src of the filters that can match, sorted
	// by family and column so that the filters of one column are adjacent;
	// fams[i] is the family of src[ord[i]].
	ord  [maxCols]uint8
	fams [maxCols]*family
}

// load fills c from filters and reports whether they fit: false when there
// are too many or one selects every column, and plan must do. Filters that
// can match nothing are dropped. With exists, every filter is read as
// Latest and KeysOnly, which keeps whether a column has a selected cell.
func (c *colFilters) load(fams *famSet, filters []percolator.Filter, exists bool) (bool, error) {
	if len(filters) > maxCols {
		return false, nil
	}
	c.n, c.sparse, c.exists, c.src = 0, false, exists, filters
	for k := range filters {
		fl := &filters[k]
		f, ok := fams.get(fl.Family)
		if !ok {
			return false, fmt.Errorf("%w: %q", ErrUnknownFamily, fl.Family)
		}
		if fl.Column == "" {
			return false, nil
		}
		if fl.MinTs > fl.Max() {
			continue
		}
		i := c.n
		for ; i > 0; i-- {
			prev := &filters[c.ord[i-1]]
			if fl.Family > prev.Family || fl.Family == prev.Family && fl.Column >= prev.Column {
				break
			}
			c.ord[i], c.fams[i] = c.ord[i-1], c.fams[i-1]
		}
		c.ord[i], c.fams[i] = uint8(k), f
		c.n++
		c.sparse = c.sparse || f.sparse
	}
	return true, nil
}

// column returns the column of the i-th filter in order.
func (c *colFilters) column(i int) string { return c.src[c.ord[i]].Column }

// next returns the end of the run of filters of the column of filter i.
func (c *colFilters) next(i int) int {
	j := i + 1
	for j < c.n && c.fams[j] == c.fams[i] && c.column(j) == c.column(i) {
		j++
	}
	return j
}

// run returns the filters i to j-1, one column's, as a slice: of the
// caller's filters where it can, else in one (a single filter) or a new
// slice.
func (c *colFilters) run(i, j int, one *[1]percolator.Filter) []percolator.Filter {
	if j == i+1 {
		k := int(c.ord[i])
		if !c.exists {
			return c.src[k : k+1]
		}
		one[0] = c.src[k]
		one[0].KeysOnly, one[0].Latest = true, true
		return one[:]
	}
	fs := make([]percolator.Filter, j-i)
	for x := range fs {
		fs[x] = c.src[c.ord[i+x]]
		if c.exists {
			fs[x].KeysOnly, fs[x].Latest = true, true
		}
	}
	return fs
}

// readCols appends the cells of row that c selects to out. If held, the
// caller holds st, the stripe of row; if not, the stripe has no sparse cells
// (or the caller discards the result).
func (s *Store) readCols(st *stripe, row string, c *colFilters, held bool, seq uint64, pre preKey, out []percolator.Cell) ([]percolator.Cell, error) {
	var err error
	rt := readTxn{fill: true, seq: seq, pre: pre}
	var one [1]percolator.Filter
	for i := 0; i < c.n; {
		j := c.next(i)
		f, fs := c.fams[i], c.run(i, j, &one)
		if f.sparse {
			if held {
				out = st.readSparseCol(row, f, fs[0].Column, fs, out)
			}
		} else if out, err = s.readColumn(&rt, st, row, f, fs[0].Column, fs, out); err != nil {
			rt.done()
			return nil, err
		}
		i = j
	}
	rt.done()
	return out, nil
}

// anyCol reports whether a column of row has a cell that c, loaded with
// exists, selects. It looks at sparse families, in memory, first, and skips
// columns whose filters all ask for timestamps that no cell of the stripe
// has (see stripe.top). The caller holds st for writing.
func (s *Store) anyCol(st *stripe, row string, c *colFilters) (bool, error) {
	var buf [1]percolator.Cell
	var one [1]percolator.Filter
	for i := 0; i < c.n; {
		j := c.next(i)
		if f := c.fams[i]; f.sparse {
			fs := c.run(i, j, &one)
			if len(st.readSparseCol(row, f, fs[0].Column, fs, buf[:0])) > 0 {
				return true, nil
			}
		}
		i = j
	}
	var rt readTxn
	defer rt.done()
	for i := 0; i < c.n; {
		j := c.next(i)
		if f := c.fams[i]; !f.sparse {
			if fs := c.run(i, j, &one); minOf(fs) < st.top.Load() {
				cells, err := s.readColumn(&rt, st, row, f, fs[0].Column, fs, buf[:0])
				if err != nil || len(cells) > 0 {
					return len(cells) > 0, err
				}
			}
		}
		i = j
	}
	return false, nil
}

// readRow appends the cells of row selected by ps to out. The caller holds
// st, the stripe of row.
func (s *Store) readRow(st *stripe, row string, ps []famPlan, out []percolator.Cell) ([]percolator.Cell, error) {
	var err error
	for i := range ps {
		p := &ps[i]
		switch {
		case p.f.sparse:
			out = st.readSparse(row, p, out)
		case p.cols != nil:
			var rt readTxn
			for _, col := range p.cols {
				if out, err = s.readColumn(&rt, st, row, p.f, col, forColumn(p.fs, col), out); err != nil {
					rt.done()
					return nil, err
				}
			}
			rt.done()
		default:
			if out, err = s.readFamily(row, p, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// readTxn is a read-only Badger transaction that the column reads of one
// row read share while they read at the same timestamp.
type readTxn struct {
	txn *bdb.Txn
	ts  uint64
	// fill lets reads of the stripe fill its newest-version cache, when
	// its sequence number is still seq (see Store.fillVer).
	fill bool
	seq  uint64
	pre  preKey // a key built before the read
}

// preKey is the key of a column of a Newest family built before a read
// (see Store.prepare).
type preKey struct {
	fam, col string
	key      []byte
	b        int    // the key's bucket
	tag      uint64 // and tag
}

// prepare sets *pre, which is zero, for a read of at most two filters
// (Percolator's point read: a lock and a write record): to the key of the
// first column of a Newest family that they read the newest version of,
// if there is one, with its bucket and tag in the newest-version cache.
// It builds the key in buf if buf is large enough.
//
// It does not load the bucket. For most reads of many columns the bucket
// is a miss to memory; loading it here, as soon as the hash is known and
// ahead of the stripe's line, made BenchmarkFigure8's transactional reads
// 2-3% slower (in processor time) than leaving it to readCached, which
// looks at it right before the Badger read: the processor then overlaps
// the miss with the start of that read rather than with the little work
// in between.
func (s *Store) prepare(pre *preKey, row string, filters []percolator.Filter, buf []byte) {
	if len(filters) > 2 {
		return
	}
	fams := s.families()
	for k := range filters {
		fl := &filters[k]
		if !fl.Latest || fl.Column == "" {
			continue
		}
		// A family's group never changes, so the key holds even if the
		// families change before the read loads them.
		f, ok := fams.get(fl.Family)
		if !ok || !f.newest {
			continue
		}
		if n := len(f.gp) + len(row) + len(f.name) + len(fl.Column) + 6; cap(buf) < n {
			buf = make([]byte, 0, n)
		}
		key := appendCellKey(buf[:0], f.gp, row, f.name, fl.Column)
		b, tag := s.vh.of(key)
		pre.fam, pre.col, pre.key, pre.b, pre.tag = f.name, fl.Column, key, b, tag
		return
	}
}

// key returns the key of (row, f, col), and whether it is pre's.
func (r *readTxn) key(f *family, row, col string) ([]byte, bool) {
	if r.pre.key != nil && r.pre.fam == f.name && r.pre.col == col {
		return r.pre.key, true
	}
	return cellKey(f.gp, row, f.name, col), false
}

// at returns a transaction reading at ts.
func (r *readTxn) at(db *bdb.DB, ts uint64) *bdb.Txn {
	if r.txn == nil || r.ts != ts {
		r.done()
		r.txn, r.ts = db.NewTransactionAt(ts, false), ts
	}
	return r.txn
}

func (r *readTxn) done() {
	if r.txn != nil {
		r.txn.Discard()
		r.txn = nil
	}
}

// readColumn appends the cells of one column selected by fs, reading with
// a transaction from rt. st is the stripe of row.
func (s *Store) readColumn(rt *readTxn, st *stripe, row string, f *family, col string, fs []percolator.Filter, out []percolator.Cell) ([]percolator.Cell, error) {
	key, pre := rt.key(f, row, col)
	if f.newest && len(fs) == 1 && fs[0].Latest {
		b, tag := rt.pre.b, rt.pre.tag
		if !pre {
			b, tag = s.vh.of(key)
		}
		if ver, ok := s.versOf(st).get(b, tag); ok && ver-1 <= fs[0].Max() {
			// The newest version is the answer: ask Badger for exactly it.
			fl := fs[0]
			ts := ver - 1
			if ts < fl.MinTs {
				return out, nil
			}
			c := percolator.Cell{Family: f.name, Column: col, Ts: ts}
			if fl.KeysOnly {
				return append(out, c), nil
			}
			item, err := rt.at(s.db, ver).Get(key)
			if err == nil && item.Version() == ver && isLive(item.UserMeta()) {
				if c.Value, err = s.itemValue(item); err != nil {
					return nil, fmt.Errorf("badger: read %q: %w", row, err)
				}
				return append(out, c), nil
			}
			if err != nil && !errors.Is(err, bdb.ErrKeyNotFound) {
				return nil, fmt.Errorf("badger: read %q: %w", row, err)
			}
			// Not what the cache said (it cannot be, but reading the
			// versions is always right).
		}
	}
	if len(fs) == 1 && (fs[0].Latest || fs[0].MinTs == fs[0].Max()) {
		// The fast path: the newest version at or below the bound is the
		// answer unless it is a metaDeleted marker. A tombstone (Get's
		// ErrKeyNotFound) means nothing older is live. Deletions above the
		// bound do not matter: DeleteOlder tombstones every version it
		// deletes. For a filter of one timestamp, a marker at or below it
		// means that there is no cell at it either.
		//
		// When no version in the stripe is above the bound, the newest
		// version of all is the one at or below it, and the store's shared
		// transaction at the top version reads it without opening one. If
		// it finds a newer version after all (a write since top was read,
		// which the seqlock or the stripe lock then deals with), the read
		// falls back to a transaction at the bound. A tombstone as the
		// newest version answers for every bound.
		fl := fs[0]
		var item *bdb.Item
		var err error
		if st.top.Load() <= fl.Max()+1 {
			item, err = s.latest.Get(key)
			if err == nil && item.Version()-1 > fl.Max() {
				item, err = rt.at(s.db, fl.Max()+1).Get(key)
			} else if err == nil && f.newest && rt.fill && item.UserMeta() != metaDeleted {
				// The newest version of all: remember it.
				s.fillVer(st, rt.seq, key, item.Version())
			}
		} else {
			item, err = rt.at(s.db, fl.Max()+1).Get(key)
		}
		if errors.Is(err, bdb.ErrKeyNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("badger: read %q: %w", row, err)
		}
		switch item.UserMeta() {
		case metaDeleted:
			if fl.MinTs == fl.Max() {
				return out, nil
			}
		case metaLive, metaEmpty, metaBlob:
			ts := item.Version() - 1
			if ts < fl.MinTs {
				return out, nil
			}
			c := percolator.Cell{Family: f.name, Column: col, Ts: ts}
			if !fl.KeysOnly {
				if c.Value, err = s.itemValue(item); err != nil {
					return nil, fmt.Errorf("badger: read %q: %w", row, err)
				}
			}
			return append(out, c), nil
		}
	}
	it := rt.at(s.db, maxOf(fs)+1).NewKeyIterator(key, bdb.IteratorOptions{})
	defer it.Close()
	p := newPicker(fs)
	it.Seek(key)
	return s.walkKey(it, key, &p, f.name, col, out)
}
