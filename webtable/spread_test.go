package webtable_test

import (
	"context"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestSpreadRecordedOnce: a new table records the spread asked for, a
// table with queue or frontier rows and no spread keeps 1 (its keys have
// no bucket), and a recorded spread is never changed.
func TestSpreadRecordedOnce(t *testing.T) {
	ctx := context.Background()
	open := func() *percolator.DB {
		db, _ := percolatortest.Open(t, percolator.Options{})
		return db
	}
	set := func(db *percolator.DB, row, col string) {
		err := db.Update(ctx, func(tx *percolator.Tx) error { return tx.Set(row, col, []byte("x")) })
		if err != nil {
			t.Fatal(err)
		}
	}
	spread := func(db *percolator.DB, n int) int {
		got, err := webtable.InitSpread(ctx, db, n)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if db := open(); spread(db, 16) != 16 || spread(db, 4) != 16 {
		t.Error("a new table does not keep the spread it recorded")
	}
	if db := open(); func() int { got, _ := webtable.Spread(ctx, db); return got }() != 1 {
		t.Error("a new table on the embedded store is spread")
	}
	for _, row := range []string{webtable.ExportRow(7, "com.example/a"), webtable.QueueOf("r2").Row(7, "com.example/a")} {
		db := open()
		set(db, row, webtable.ExportDoc)
		if got := spread(db, 16); got != 1 {
			t.Errorf("a table with queue row %q got spread %d", row, got)
		}
	}
	db := open()
	set(db, webtable.DueRow(1_700_000_000_000, "com.example/a"), webtable.DuePage)
	if got := spread(db, 16); got != 1 {
		t.Errorf("a table with a frontier row got spread %d", got)
	}
	db = open()
	set(db, webtable.SchemaRow, webtable.SchemaSpread)
	if _, err := webtable.InitSpread(ctx, db, 16); err == nil {
		t.Error("a bad recorded spread read without error")
	}
	if _, err := webtable.InitSpread(ctx, open(), 0); err == nil {
		t.Error("spread 0 recorded")
	}
}
