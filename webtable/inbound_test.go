package webtable_test

import (
	"context"
	"maps"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// ScanIn reads a row's links, and its spilled ones only when the row is
// marked; a source in both places is given once, with the row's anchor.
func TestScanIn(t *testing.T) {
	ctx := context.Background()
	db, _ := percolatortest.Open(t, percolator.Options{})
	const target = "test.web:http/hub"
	write := func(f func(tx *percolator.Tx) error) {
		t.Helper()
		if err := db.Update(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	scan := func() map[string]string {
		t.Helper()
		got := make(map[string]string)
		err := db.View(ctx, func(tx *percolator.Tx) error {
			return webtable.ScanIn(ctx, tx, target, func(src string, a []byte) bool {
				if _, ok := got[src]; ok {
					t.Errorf("source %s given twice", src)
				}
				got[src] = string(a)
				return true
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	write(func(tx *percolator.Tx) error {
		tx.Set(target, webtable.InPrefix+"test.web:http/a", []byte("row a"))
		tx.Set(target, webtable.InPrefix+"test.web:http/b", []byte("row b"))
		tx.Set(webtable.InSpillRow(target, "test.web:http/b"), webtable.InSpill, []byte("spilled b"))
		return tx.Set(webtable.InSpillRow(target, "test.web:http/c"), webtable.InSpill, []byte("spilled c"))
	})
	if got, want := scan(), map[string]string{"test.web:http/a": "row a", "test.web:http/b": "row b"}; !maps.Equal(got, want) {
		t.Errorf("unmarked: %v, want the row's links only %v", got, want)
	}
	write(func(tx *percolator.Tx) error { return tx.Set(target, webtable.InSpilled, nil) })
	if got, want := scan(), map[string]string{"test.web:http/a": "row a", "test.web:http/b": "row b", "test.web:http/c": "spilled c"}; !maps.Equal(got, want) {
		t.Errorf("marked: %v, want %v", got, want)
	}
	if tg, src, ok := webtable.ParseInSpillRow(webtable.InSpillRow(target, "test.web:http/c")); !ok || tg != target || src != "test.web:http/c" {
		t.Errorf("ParseInSpillRow = %q, %q, %v", tg, src, ok)
	}
	if _, _, ok := webtable.ParseInSpillRow("!in/" + target); ok {
		t.Error("ParseInSpillRow takes a row without a source")
	}
}
