package percolator_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// Passes start at rows with notifications, picked at random from those
// the last whole pass read: anywhere among them, not at the table's first
// rows. Rows whose keys share a prefix ("zz/…") after a few at the start
// ("!a…") are where a random string would almost never start a pass.
func TestPassesStartAmongTheRows(t *testing.T) {
	ctx := context.Background()
	db, _ := percolatortest.Open(t, percolator.Options{Observed: []string{"c:o"}})
	rows := make(map[string]bool)
	err := db.Update(ctx, func(tx *percolator.Tx) error {
		for i := range 3 {
			r := fmt.Sprintf("!a/%d", i)
			rows[r] = true
			if err := tx.Set(r, "c:o", []byte("v")); err != nil {
				return err
			}
		}
		for i := range 200 {
			r := fmt.Sprintf("zz/%03d", i)
			rows[r] = true
			if err := tx.Set(r, "c:o", []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{}, percolator.Observer{Name: "o", Column: "c:o",
		Run: func(context.Context, *percolator.Tx, string, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if s := percolator.PassStart(w); s != "" {
		t.Fatalf("before any pass, passes start at %q, want the table's start", s)
	}
	// A pass of background work: it reads every row and dispatches none
	// (the observer is not a background one).
	if n, err := percolator.Pass(ctx, w, "", true); err != nil || n != 0 {
		t.Fatalf("background pass: %d dispatched, %v", n, err)
	}
	picked := make(map[string]bool)
	late := 0
	for range 400 {
		s := percolator.PassStart(w)
		if !rows[s] {
			t.Fatalf("a pass starts at %q, not a row with notifications", s)
		}
		picked[s] = true
		if s >= "zz/100" {
			late++
		}
	}
	if len(picked) < 30 || late < 100 {
		t.Errorf("400 starts picked %d rows, %d of them in the second half of the table: want them spread", len(picked), late)
	}
}
