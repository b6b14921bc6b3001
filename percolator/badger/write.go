package badger

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/caffeine-go/caffeine/percolator"
)

// A rowOp is the mutations of one row, whose stripe the writer holds.
type rowOp struct {
	st   *stripe
	row  string
	muts []percolator.Mutation
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
//
// It runs in steps: resolve validates the mutations and finds the columns
// whose state the write needs, loadCols reads that state, toEntries turns
// the mutations into Badger entries and newest-version cache changes,
// flush writes the entries, and publish brings the in-memory state (the
// newest-version cache, the stripes' write sequence, the sparse mirror) up
// to date with what Badger now holds.
func (s *Store) write(fams *famSet, ops []rowOp) error {
	// Most writes touch a few cells: small buffers on the stack.
	var kbuf [4][]byte
	var fbuf [4]*family
	var cols colStates
	keys, famOf, err := s.resolve(fams, ops, kbuf[:0], fbuf[:0], &cols)
	if err != nil {
		return err
	}
	if err := s.loadCols(&cols); err != nil {
		return err
	}
	var b batch
	var vbuf [4]verChange
	vers := s.toEntries(ops, keys, famOf, &cols, &b, vbuf[:0])
	if len(b.entries) == 0 {
		return nil
	}
	if err := s.replacedBlobs(&b); err != nil {
		return err
	}
	err = s.flush(b.entries)
	s.publish(ops, &cols, vers, err)
	return err
}

// resolve validates the mutations of ops and appends the key and family of
// each, in order, to keys and famOf. It adds to cols the columns whose state
// the write needs: those of sparse families (to update the in-memory copy),
// those with a deletion (which versions, tombstone or marker?), and those
// written at or below a version where a tombstone may be (rescue).
func (s *Store) resolve(fams *famSet, ops []rowOp, keys [][]byte, famOf []*family, cols *colStates) ([][]byte, []*family, error) {
	for _, op := range ops {
		for _, m := range op.muts {
			f, err := checkMutation(fams, m)
			if err != nil {
				return nil, nil, err
			}
			famOf = append(famOf, f)
			if s.mem && m.Op == percolator.SetCell && int64(len(m.Value)) >= s.maxMem {
				return nil, nil, fmt.Errorf("%w: %v: too large for an in-memory store", ErrBadMutation, m)
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
	return keys, famOf, nil
}

// loadCols reads the state of the columns in cols: the in-memory copy of
// sparse ones, and from Badger what needRaw asks for.
func (s *Store) loadCols(cols *colStates) error {
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
	return nil
}

// toEntries turns the mutations of ops, whose keys and families resolve
// found, into entries of b, in order, and appends to vers the changes of
// the newest-version cache they make. It updates the column states and the
// stripes' highest version and tombstone as it goes.
func (s *Store) toEntries(ops []rowOp, keys [][]byte, famOf []*family, cols *colStates, b *batch, vers []verChange) []verChange {
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
				var id uint64
				if s.blobbed(f, m.Value) {
					id = s.newBlob()
					b.add(entry{key: blobKey(id), ver: ver, op: opSet, val: m.Value})
				}
				if cs != nil {
					cs.set(b, key, m.Ts, m.Value, id)
				} else if p := b.find(key, ver); p != nil && p.op == opBlob {
					// The write set this cell already, as a blob that
					// this value replaces (cs.set sees to that itself).
					deleteBlob(b, version{ts: m.Ts, blob: binary.BigEndian.Uint64(p.val)})
				}
				if ver <= top && s.mayBlob(f) && (cs == nil || !cs.needRaw) {
					// The write may replace a cell whose value is a blob.
					b.probes = append(b.probes, entry{key: key, ver: ver})
				}
				if id != 0 {
					b.add(entry{key: key, ver: ver, op: opBlob, val: binary.BigEndian.AppendUint64(nil, id)})
				} else {
					b.add(entry{key: key, ver: ver, op: opSet, val: m.Value})
				}
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
				deleteBlob(b, cs.live[j])
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
					deleteBlob(b, v)
				}
				op.st.tomb = max(op.st.tomb, cs.live[j].ts+1)
				cs.live = cs.live[:j]
			}
		}
	}
	return vers
}

// publish updates the in-memory state after flush returned err: the
// newest-version cache, the write sequence that scans check, and the
// sparse mirror. After a failed flush, which may have reached Badger in
// part, cached versions become unknown and the mirror is re-read.
func (s *Store) publish(ops []rowOp, cols *colStates, vers []verChange, err error) {
	for _, v := range vers {
		if !v.set || err != nil {
			v.ver = 0 // unknown; a failed write may have reached Badger in part
		}
		s.versOf(v.st).set(s.vh, v.key, v.ver)
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
}

// A verChange is what a write does to the newest-version cache of its
// stripe: the column key's newest version is ver if set, else unknown.
type verChange struct {
	st  *stripe
	key []byte
	ver uint64
	set bool
}
