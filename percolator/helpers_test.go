package percolator_test

import (
	"context"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// openStore opens a real Badger store in a temporary directory.
func openStore(t testing.TB, dir string) *badger.Store {
	t.Helper()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openDB opens a DB on a fresh Badger store; at cleanup it checks that no
// transaction is still running and no lock is left, and closes both (see
// percolatortest.Open).
func openDB(t testing.TB, opt percolator.Options) *percolator.DB {
	t.Helper()
	db, _ := percolatortest.Open(t, opt)
	return db
}

func set(t testing.TB, db *percolator.DB, row, col, val string) uint64 {
	t.Helper()
	tx, err := db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Set(row, col, []byte(val)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tx.CommitTs()
}

func get(t testing.TB, db *percolator.DB, row, col string) (string, bool) {
	t.Helper()
	var v []byte
	err := db.View(context.Background(), func(tx *percolator.Tx) error {
		var err error
		v, err = tx.Get(context.Background(), row, col)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(v), v != nil
}
