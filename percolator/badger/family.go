package badger

import (
	"context"
	"fmt"
	"maps"
	"math"

	"github.com/caffeine-go/caffeine/percolator"
	bdb "github.com/dgraph-io/badger/v4"
)

// family is a declared column family.
type family struct {
	name   string
	group  string
	sparse bool
	newest bool   // the stripes cache its columns' newest versions (newest.go); never with sparse
	gp     []byte // groupPrefix(group)
	esc    []byte // appendEsc(nil, name)
}

func newFamily(f percolator.Family) *family {
	return &family{
		name:   f.Name,
		group:  f.LocalityGroup,
		sparse: f.Sparse,
		newest: f.Newest && !f.Sparse,
		gp:     groupPrefix(f.LocalityGroup),
		esc:    appendEsc(nil, f.Name),
	}
}

func (s *Store) families() *famSet { return s.fams.Load() }

// famSet is the declared families. It is replaced, never modified.
type famSet struct {
	byName map[string]*family
	// byByte holds the families with one-byte names, Percolator's, so
	// that the hot paths find them without hashing.
	byByte [256]*family
}

func newFamSet(byName map[string]*family) *famSet {
	fs := &famSet{byName: byName}
	for name, f := range byName {
		if len(name) == 1 {
			fs.byByte[name[0]] = f
		}
	}
	return fs
}

func (fs *famSet) get(name string) (*family, bool) {
	if len(name) == 1 {
		f := fs.byByte[name[0]]
		return f, f != nil
	}
	f, ok := fs.byName[name]
	return f, ok
}

// EnsureFamilies declares the families that do not exist yet and persists
// the declarations. Redeclaring a family in another locality group fails
// with ErrFamilyConflict; redeclaring it with another Sparse flag switches
// the in-memory copy on or off.
func (s *Store) EnsureFamilies(ctx context.Context, fams []percolator.Family) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.famMu.Lock()
	defer s.famMu.Unlock()
	next := maps.Clone(s.families().byName)
	var save, toggled []*family
	for _, pf := range fams {
		if pf.Name == "" {
			return fmt.Errorf("badger: family with an empty name")
		}
		old, ok := next[pf.Name]
		if ok && old.group != pf.LocalityGroup {
			return fmt.Errorf("%w: %q is in group %q, not %q", ErrFamilyConflict, pf.Name, old.group, pf.LocalityGroup)
		}
		f := newFamily(pf)
		if ok && old.sparse == f.sparse && old.newest == f.newest {
			continue
		}
		next[f.name] = f
		save = append(save, f)
		if ok {
			// Another Sparse flag changes where reads go; another Newest
			// flag leaves cached versions that writes meanwhile did not
			// keep. Either way no read or write may run meanwhile.
			toggled = append(toggled, f)
		}
	}
	if len(save) == 0 {
		return nil
	}
	if err := s.saveFamilies(save); err != nil {
		return err
	}
	if len(toggled) == 0 {
		// New families have no cells yet: nothing to load.
		s.fams.Store(newFamSet(next))
		return nil
	}
	// Switching a family's sparseness changes where its reads go, so no
	// read or write may run meanwhile: hold every stripe.
	for i := range s.stripes {
		s.stripes[i].lock()
	}
	defer func() {
		for i := range s.stripes {
			s.stripes[i].unlock()
		}
	}()
	for i := range s.vers {
		s.vers[i].clear()
	}
	for _, f := range toggled {
		if !f.sparse {
			s.dropSparse(f.name)
			continue
		}
		if err := s.loadSparse(f); err != nil {
			s.dropSparse(f.name)
			return err
		}
	}
	s.fams.Store(newFamSet(next))
	return nil
}

// Family declarations are stored at version 1 under tagFamily+name, the
// value being a flags byte followed by the locality group.
const (
	famSparse = 1
	famNewest = 2
)

func (s *Store) saveFamilies(fams []*family) error {
	if err := s.spaceErr(); err != nil {
		return err
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	wb := s.db.NewManagedWriteBatch()
	for _, f := range fams {
		v := []byte{0}
		if f.sparse {
			v[0] |= famSparse
		}
		if f.newest {
			v[0] |= famNewest
		}
		v = append(v, f.group...)
		if err := wb.SetEntryAt(bdb.NewEntry(append([]byte{tagFamily}, f.name...), v), 1); err != nil {
			wb.Cancel()
			return fmt.Errorf("badger: save families: %w", err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("badger: save families: %w", err)
	}
	return nil
}

func (s *Store) loadFamilies() (map[string]*family, error) {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewIterator(bdb.IteratorOptions{Prefix: []byte{tagFamily}})
	defer it.Close()
	fams := make(map[string]*family)
	for it.Rewind(); it.Valid(); it.Next() {
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			return nil, fmt.Errorf("badger: load families: %w", err)
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: family %q", ErrCorrupt, it.Item().Key()[1:])
		}
		f := newFamily(percolator.Family{
			Name:          string(it.Item().Key()[1:]),
			LocalityGroup: string(v[1:]),
			Sparse:        v[0]&famSparse != 0,
			Newest:        v[0]&famNewest != 0,
		})
		fams[f.name] = f
	}
	return fams, nil
}
