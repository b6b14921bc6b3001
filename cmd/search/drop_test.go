package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestDropIndex: search -drop-index NAME deletes the name's registry row
// and its queue, and refuses to drop the last registered name.
func TestDropIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	withDB := func(fn func(tx *percolator.Tx) error) {
		t.Helper()
		st, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		db, err := percolator.Open(ctx, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	withDB(func(tx *percolator.Tx) error {
		tx.Set(webtable.IndexRow("main"), webtable.IndexState, []byte(webtable.IndexLive))
		tx.Set(webtable.IndexRow("r2"), webtable.IndexState, []byte(webtable.IndexLive))
		return tx.Set(webtable.QueueOf("r2").Row(7, "com.example/a"), webtable.ExportDoc, []byte("{}"))
	})
	var out bytes.Buffer
	if code := run(ctx, []string{"-data", dir, "-drop-index", "r2"}, &out, nil); code != 0 || !strings.Contains(out.String(), "deleted 1 queue entries") {
		t.Fatalf("-drop-index r2: exit %d, %s", code, out.String())
	}
	withDB(func(tx *percolator.Tx) error {
		for _, row := range []string{webtable.IndexRow("r2"), webtable.QueueOf("r2").Row(7, "com.example/a")} {
			err := tx.Scan(ctx, row, row+"\x00", "", func(_, col string, _ []byte) bool {
				t.Errorf("%s %s left", row, col)
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	out.Reset()
	if code := run(ctx, []string{"-data", dir, "-drop-index", "main"}, &out, nil); code != 2 || !strings.Contains(out.String(), "only index") {
		t.Fatalf("-drop-index of the last name: exit %d, %s", code, out.String())
	}
}
