package badger

import (
	"math"
	"path/filepath"

	bdb "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"
)

// HoldMapped implements budget.Holder, for the memory budget's trimmer
// to drop the resident pages of the tables' mappings rather than page
// them out. Badger maps each table whole and unmaps it once compaction
// has replaced it and nothing refers to it any more; an iterator refers
// to every table of the tree until it is closed. So HoldMapped makes
// one (no key is read) and returns the files of the tables it surely
// refers to: those listed both before and after it was made (table ids
// are never reused). Memtables and value log files are not held. The
// store registers itself on Open and unregisters on Close, before the
// tables are unmapped.
func (s *Store) HoldMapped() (files []string, release func()) {
	if s.mem || s.usable() != nil {
		return nil, func() {}
	}
	before := make(map[uint64]bool)
	for _, t := range s.db.Tables() {
		before[t.ID] = true
	}
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	it := txn.NewIterator(bdb.IteratorOptions{})
	for _, t := range s.db.Tables() {
		if before[t.ID] {
			files = append(files, filepath.Join(s.dir, table.IDToFilename(t.ID)))
		}
	}
	return files, func() {
		it.Close()
		txn.Discard()
	}
}
