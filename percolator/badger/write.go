package badger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
)

// A rowOp is the mutations of one row, whose stripe the writer holds.
type rowOp struct {
	st   *stripe
	row  string
	muts []percolator.Mutation
}

// Kinds of batch entries.
const (
	opSet  = iota + 1 // a live cell
	opTomb            // a Badger tombstone
	opDel             // a metaDeleted marker
)

type entry struct {
	key []byte
	ver uint64
	op  byte
	val []byte // opSet only
}

type entryID struct {
	key string
	ver uint64
}

// colState is what a write knows about one column beyond Badger's current
// state: the live versions and tombstones, with the write's own earlier
// mutations applied. Only columns that need it have one.
type colState struct {
	key []byte
	f   *family
	st  *stripe
	row string
	col string
	// live are the live versions, newest first; with values for sparse
	// families only.
	live []version
	// tombs are the Badger versions of real tombstones, newest first. It
	// is complete above floor, which is all the rescue in set needs.
	tombs []uint64
	// needRaw asks for live and tombs to be loaded from Badger; tombs
	// only above floor, the lowest version a SetCell of the write puts.
	needRaw bool
	floor   uint64
}

// colStates holds the column states of a write, by key.
type colStates struct {
	list []*colState
	// by indexes list once it is long; most writes touch a column or two.
	by map[string]*colState
}

const smallCols = 8

func (c *colStates) get(key []byte) *colState {
	if c.by != nil {
		return c.by[string(key)]
	}
	for _, cs := range c.list {
		if bytes.Equal(cs.key, key) {
			return cs
		}
	}
	return nil
}

func (c *colStates) add(cs *colState) {
	c.list = append(c.list, cs)
	switch {
	case c.by != nil:
		c.by[string(cs.key)] = cs
	case len(c.list) > smallCols:
		c.by = make(map[string]*colState, 2*len(c.list))
		for _, cs := range c.list {
			c.by[string(cs.key)] = cs
		}
	}
}

// A batch collects the entries of one atomic write.
type batch struct {
	entries []entry
	at      map[entryID]int // later entries for the same key and version replace earlier ones
}

func (b *batch) add(e entry) {
	// Most writes have a handful of entries: a linear search beats hashing.
	const small = 16
	if b.at == nil {
		for i := range b.entries {
			if b.entries[i].ver == e.ver && bytes.Equal(b.entries[i].key, e.key) {
				b.entries[i] = e
				return
			}
		}
		if len(b.entries) < small {
			b.entries = append(b.entries, e)
			return
		}
		b.at = make(map[entryID]int, 2*small)
		for i, e := range b.entries {
			b.at[entryID{string(e.key), e.ver}] = i
		}
	}
	id := entryID{string(e.key), e.ver}
	if i, ok := b.at[id]; ok {
		b.entries[i] = e
		return
	}
	b.at[id] = len(b.entries)
	b.entries = append(b.entries, e)
}

// checkMutation returns the family of m, or why m is invalid.
func checkMutation(fams *famSet, m percolator.Mutation) (*family, error) {
	f, ok := fams.get(m.Family)
	if !ok {
		return nil, fmt.Errorf("%w: %q in %v", ErrUnknownFamily, m.Family, m)
	}
	switch m.Op {
	case percolator.SetCell, percolator.DeleteCell:
		if m.Ts > percolator.MaxTs {
			return nil, fmt.Errorf("%w: %v: timestamp above MaxTs", ErrBadMutation, m)
		}
	case percolator.DeleteOlder:
	default:
		return nil, fmt.Errorf("%w: %v", ErrBadMutation, m)
	}
	return f, nil
}

func checkMutations(fams *famSet, muts []percolator.Mutation) error {
	for _, m := range muts {
		if _, err := checkMutation(fams, m); err != nil {
			return err
		}
	}
	return nil
}

// write applies ops atomically. The caller holds the stripes of all rows
// for writing. Nothing is written if a mutation is invalid.
func (s *Store) write(fams *famSet, ops []rowOp) error {
	// Pass 1: validate, and find the columns whose state the write needs:
	// those of sparse families (to update the in-memory copy), those with a
	// deletion (which versions, tombstone or marker?), and those written at
	// or below a version where a tombstone may be (rescue).
	var kbuf [4][]byte
	var fbuf [4]*family
	keys, famOf := kbuf[:0], fbuf[:0]
	var cols colStates
	for _, op := range ops {
		for _, m := range op.muts {
			f, err := checkMutation(fams, m)
			if err != nil {
				return err
			}
			famOf = append(famOf, f)
			if s.mem && m.Op == percolator.SetCell && int64(len(m.Value)) >= s.maxMem {
				return fmt.Errorf("%w: %v: too large for an in-memory store", ErrBadMutation, m)
			}
			key := cellKey(f.gp, op.row, m.Family, m.Column)
			keys = append(keys, key)
			del := m.Op != percolator.SetCell
			raw := (del && !f.sparse) || (!del && m.Ts+1 <= op.st.tomb)
			if !raw && !f.sparse && !del {
				continue
			}
			cs := cols.get(key)
			if cs == nil {
				cs = &colState{key: key, f: f, st: op.st, row: op.row, col: m.Column, floor: math.MaxUint64}
				cols.add(cs)
			}
			cs.needRaw = cs.needRaw || raw
			if raw && !del {
				cs.floor = min(cs.floor, m.Ts+1)
			}
		}
	}
	for _, cs := range cols.list {
		if cs.f.sparse {
			cs.live = slices.Clone(cs.st.sparseCol(cs.row, famCol{cs.f.name, cs.col}))
		}
		if cs.needRaw {
			if err := s.loadRaw(cs.key, cs); err != nil {
				return err
			}
		}
	}

	// Pass 2: turn mutations into entries, in order, and the changes of
	// the newest-version cache they make.
	var b batch
	var vbuf [4]verChange
	vers := vbuf[:0]
	i := 0
	for _, op := range ops {
		for _, m := range op.muts {
			key, f := keys[i], famOf[i]
			i++
			var cs *colState
			if len(cols.list) > 0 {
				cs = cols.get(key)
			}
			switch m.Op {
			case percolator.SetCell:
				ver := m.Ts + 1
				top := op.st.top.Load()
				if ver > top {
					op.st.top.Store(ver)
				}
				if cs != nil {
					cs.set(&b, key, m.Ts, m.Value)
				}
				b.add(entry{key: key, ver: ver, op: opSet, val: m.Value})
				if f.newest {
					// Above every version of the stripe, the column's
					// newest; otherwise maybe not.
					vers = append(vers, verChange{op.st, key, ver, ver >= top})
				}
			case percolator.DeleteCell:
				j := slices.IndexFunc(cs.live, func(v version) bool { return v.ts == m.Ts })
				if j < 0 {
					continue // nothing to delete
				}
				if f.newest && j == 0 {
					vers = append(vers, verChange{st: op.st, key: key})
				}
				cs.live = slices.Delete(cs.live, j, j+1)
				ver := m.Ts + 1
				if j < len(cs.live) {
					// An older version stays visible: hide this one only.
					b.add(entry{key: key, ver: ver, op: opDel})
					continue
				}
				b.add(entry{key: key, ver: ver, op: opTomb})
				cs.tombs = insertDesc(cs.tombs, ver)
				op.st.tomb = max(op.st.tomb, ver)
			case percolator.DeleteOlder:
				// A marker at Ts-1 with Badger's discard bit would be
				// cheaper, but a read bounded below it would not see it.
				// Tombstones on every deleted version are seen by every
				// read that could see the version.
				j := slices.IndexFunc(cs.live, func(v version) bool { return v.ts < m.Ts })
				if j < 0 {
					continue
				}
				if f.newest && j == 0 {
					vers = append(vers, verChange{st: op.st, key: key})
				}
				for _, v := range cs.live[j:] {
					b.add(entry{key: key, ver: v.ts + 1, op: opTomb})
					cs.tombs = insertDesc(cs.tombs, v.ts+1)
				}
				op.st.tomb = max(op.st.tomb, cs.live[j].ts+1)
				cs.live = cs.live[:j]
			}
		}
	}
	if len(b.entries) == 0 {
		return nil
	}
	err := s.flush(b.entries)
	for _, v := range vers {
		if !v.set || err != nil {
			v.ver = 0 // unknown; a failed write may have reached Badger in part
		}
		v.st.setVer(s.vh, v.key, v.ver)
	}
	// Even a failed write may have reached Badger in part: scans must look.
	seq := s.wseq.Add(1)
	for _, op := range ops {
		op.st.last = seq
	}
	for _, cs := range cols.list {
		if !cs.f.sparse {
			continue
		}
		vs := cs.live
		if err != nil {
			// Re-read what the in-memory copy must mirror.
			var rerr error
			if vs, rerr = s.loadLive(cs.key); rerr != nil {
				vs = nil
			}
		}
		cs.st.setSparse(cs.row, famCol{cs.f.name, cs.col}, vs)
	}
	return err
}

// A verChange is what a write does to the newest-version cache of its
// stripe: the column key's newest version is ver if set, else unknown.
type verChange struct {
	st  *stripe
	key []byte
	ver uint64
	set bool
}

// set records a SetCell at ts in cs. Every tombstone above the new version
// would make compaction drop the new cell, so it is overwritten with a
// metaDeleted marker at the same version, which reads the same.
func (cs *colState) set(b *batch, key []byte, ts uint64, val []byte) {
	ver := ts + 1
	n := 0
	for _, t := range cs.tombs {
		switch {
		case t > ver:
			b.add(entry{key: key, ver: t, op: opDel})
		case t < ver:
			cs.tombs[n] = t
			n++
		}
	}
	cs.tombs = cs.tombs[:n]
	v := version{ts: ts}
	if cs.f.sparse && len(val) > 0 {
		v.val = bytes.Clone(val)
	}
	j, found := slices.BinarySearchFunc(cs.live, ts, func(v version, ts uint64) int {
		switch {
		case v.ts > ts:
			return -1
		case v.ts < ts:
			return 1
		}
		return 0
	})
	if found {
		cs.live[j] = v
	} else {
		cs.live = slices.Insert(cs.live, j, v)
	}
}

func insertDesc(s []uint64, v uint64) []uint64 {
	j := 0
	for j < len(s) && s[j] > v {
		j++
	}
	if j < len(s) && s[j] == v {
		return s
	}
	return slices.Insert(s, j, v)
}

// loadRaw reads the live versions (of non-sparse families) and the
// tombstones above cs.floor of the column key into cs.
func (s *Store) loadRaw(key []byte, cs *colState) error {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewKeyIterator(key, bdb.IteratorOptions{})
	defer it.Close()
	live := !cs.f.sparse
	for it.Seek(key); it.Valid(); it.Next() {
		item := it.Item()
		ver := item.Version()
		if !live && ver <= cs.floor {
			break // a column's history may be long: read no more than needed
		}
		if item.IsDeletedOrExpired() {
			if ver > cs.floor {
				cs.tombs = append(cs.tombs, ver)
			}
			live = false // nothing below a tombstone is live
			continue
		}
		switch item.UserMeta() {
		case metaDeleted:
		case metaLive, metaEmpty:
			if live {
				cs.live = append(cs.live, version{ts: ver - 1})
			}
		default:
			return fmt.Errorf("%w: key %q has user meta %d", ErrCorrupt, key, item.UserMeta())
		}
	}
	return nil
}

// loadLive reads the live versions of the column key, with values.
func (s *Store) loadLive(key []byte) ([]version, error) {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewKeyIterator(key, bdb.IteratorOptions{})
	defer it.Close()
	p := newPicker([]percolator.Filter{{}})
	it.Seek(key)
	cells, err := walkKey(it, key, &p, "", "", nil)
	if err != nil {
		return nil, err
	}
	vs := make([]version, len(cells))
	for i, c := range cells {
		vs[i] = version{c.Ts, c.Value}
	}
	return vs, nil
}

// flush writes entries to Badger atomically, as far as Badger allows.
//
// Entries that all have one version go in a managed transaction committed
// at that version: Badger marks its entries as one transaction in the value
// log, so that a crash keeps all or none of them, and it is the cheapest way
// to write. Entries of several versions need a managed write batch, which
// Badger commits without those marks (so a crash in mid-write may keep part
// of it) and, when it outgrows a transaction, in several commits.
func (s *Store) flush(entries []entry) error {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if sameVersion(entries) {
		err := s.commitAt(entries)
		if !errors.Is(err, bdb.ErrTxnTooBig) {
			if err != nil {
				return fmt.Errorf("badger: write: %w", err)
			}
			return nil
		}
	}
	wb := s.db.NewManagedWriteBatch()
	for _, e := range entries {
		var err error
		if e.op == opTomb {
			err = wb.DeleteAt(e.key, e.ver)
		} else {
			err = wb.SetEntryAt(e.badger(), e.ver)
		}
		if err != nil {
			wb.Cancel()
			return fmt.Errorf("badger: write: %w", err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("badger: write: %w", err)
	}
	return nil
}

func sameVersion(entries []entry) bool {
	for _, e := range entries[1:] {
		if e.ver != entries[0].ver {
			return false
		}
	}
	return true
}

// commitAt writes entries, which all have one version, in one managed
// transaction. Nothing is written if it returns bdb.ErrTxnTooBig.
func (s *Store) commitAt(entries []entry) error {
	// Without conflict detection, the read timestamp of a transaction that
	// reads nothing does not matter.
	txn := s.db.NewTransactionAt(math.MaxUint64, true)
	defer txn.Discard()
	for _, e := range entries {
		var err error
		if e.op == opTomb {
			err = txn.Delete(e.key)
		} else {
			err = txn.SetEntry(e.badger())
		}
		if err != nil {
			return err
		}
	}
	return txn.CommitAt(entries[0].ver, nil)
}

// badger returns the Badger entry of e, a live cell or a marker, without
// its version.
func (e *entry) badger() *bdb.Entry {
	switch {
	case e.op == opDel:
		return bdb.NewEntry(e.key, []byte{0}).WithMeta(metaDeleted)
	case len(e.val) == 0:
		return bdb.NewEntry(e.key, []byte{0}).WithMeta(metaEmpty)
	}
	return bdb.NewEntry(e.key, e.val)
}

func (s *Store) slot(row string) int {
	return int(maphash.String(s.seed, row) & (nStripes - 1))
}

// MutateRows implements percolator.Store. All rows are written in one
// Badger write (see flush) while their stripes are held, so readers see them
// applied all or none, and so does a crash if all have one timestamp and
// fit in one Badger transaction.
func (s *Store) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	var slots []int
	var ops []rowOp
	if len(rows) <= 4 {
		var sbuf [4]int
		var obuf [4]rowOp
		slots, ops = sbuf[:len(rows)], obuf[:len(rows)]
	} else {
		slots, ops = make([]int, len(rows)), make([]rowOp, len(rows))
	}
	for i, r := range rows {
		slots[i] = s.slot(r.Row)
		ops[i] = rowOp{st: &s.stripes[slots[i]], row: r.Row, muts: r.Mutations}
	}
	// Lock in ascending order so that concurrent calls cannot deadlock.
	slices.Sort(slots)
	slots = slices.Compact(slots)
	for _, i := range slots {
		s.stripes[i].lock()
	}
	defer func() {
		for _, i := range slots {
			s.stripes[i].unlock()
		}
	}()
	return s.write(s.families(), ops)
}

// CheckAndMutateRow implements percolator.Store.
func (s *Store) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	st := s.stripe(row)
	st.lock()
	defer st.unlock()
	fams := s.families()
	if err := checkMutations(fams, ifMatch); err != nil {
		return false, err
	}
	if err := checkMutations(fams, ifNoMatch); err != nil {
		return false, err
	}
	matched, err := s.matches(st, fams, row, predicate)
	if err != nil {
		return false, err
	}
	muts := ifNoMatch
	if matched {
		muts = ifMatch
	}
	return matched, s.write(fams, []rowOp{{st, row, muts}})
}

// CheckAndMutateRowAt implements percolator.ExclusiveStore.
func (s *Store) CheckAndMutateRowAt(ctx context.Context, row string, predicate []percolator.Filter, ts func() (uint64, error), ifNoMatch func(ts uint64) []percolator.Mutation) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	st := s.stripe(row)
	st.lock()
	defer st.unlock()
	fams := s.families()
	matched, err := s.matches(st, fams, row, predicate)
	if err != nil || matched {
		return matched, err
	}
	s.atGate.RLock()
	defer s.atGate.RUnlock()
	t, err := ts()
	if err != nil {
		return false, err
	}
	return false, s.write(fams, []rowOp{{st, row, ifNoMatch(t)}})
}

// matches reports whether a cell of row matches one of the filters. The
// caller holds st.
func (s *Store) matches(st *stripe, fams *famSet, row string, filters []percolator.Filter) (bool, error) {
	// Whether any version is in range is whether the newest one in range
	// is, which the point read answers.
	var c colFilters
	if ok, err := c.load(fams, filters, true); err != nil {
		return false, err
	} else if ok {
		return s.anyCol(st, row, &c)
	}
	fs := make([]percolator.Filter, len(filters))
	for i, f := range filters {
		f.KeysOnly, f.Latest = true, true
		fs[i] = f
	}
	ps, err := plan(fams, fs)
	if err != nil {
		return false, err
	}
	for i := range ps {
		cells, err := s.readRow(st, row, ps[i:i+1], nil)
		if err != nil || len(cells) > 0 {
			return len(cells) > 0, err
		}
	}
	return false, nil
}

// Increment implements percolator.Store. The new value replaces the newest
// cell at its own timestamp (or is written at timestamp 1), so a counter
// does not accumulate versions.
func (s *Store) Increment(ctx context.Context, row, family, column string, delta int64) (int64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	st := s.stripe(row)
	st.lock()
	defer st.unlock()
	fams := s.families()
	f, ok := fams.get(family)
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrUnknownFamily, family)
	}
	p := famPlan{f: f, fs: []percolator.Filter{{Family: family, Column: column, Latest: true}}, cols: []string{column}}
	cells, err := s.readRow(st, row, []famPlan{p}, nil)
	if err != nil {
		return 0, err
	}
	var n int64
	ts := uint64(1)
	if len(cells) > 0 {
		c := cells[0]
		if len(c.Value) != 8 {
			return 0, fmt.Errorf("%w: %s:%s@%d of row %q holds %d bytes", ErrNotCounter, family, column, c.Ts, row, len(c.Value))
		}
		n = int64(binary.BigEndian.Uint64(c.Value))
		ts = max(c.Ts, 1)
	}
	n += delta
	m := percolator.Mutation{Op: percolator.SetCell, Family: family, Column: column, Ts: ts, Value: binary.BigEndian.AppendUint64(nil, uint64(n))}
	if err := s.write(fams, []rowOp{{st, row, []percolator.Mutation{m}}}); err != nil {
		return 0, err
	}
	return n, nil
}
