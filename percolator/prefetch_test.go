package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// readCounter counts ReadRow calls of a store.
type readCounter struct {
	percolator.Store
	reads atomic.Int64
}

func (r *readCounter) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	r.reads.Add(1)
	return r.Store.ReadRow(ctx, row, filters...)
}

// On a shared store a transaction that reads the columns another read in
// a row reads them with one store call, and sees exactly what it would
// have read one by one, its own writes included.
func TestPrefetch(t *testing.T) {
	st := &readCounter{Store: percolatortest.Shared(openStore(t, t.TempDir()))}
	db := percolatortest.OpenOn(t, st, percolator.Options{})
	cols := []string{"p:a", "p:b", "p:c", "p:d"}
	for r := range 3 {
		for i, c := range cols[:3] { // p:d is never written
			set(t, db, fmt.Sprintf("row%d", r), c, fmt.Sprintf("v%d%d", r, i))
		}
	}
	readAll := func(row string, own bool) (int64, []string) {
		before := st.reads.Load()
		var got []string
		err := db.Update(bg, func(tx *percolator.Tx) error {
			got = got[:0]
			if own {
				tx.Set(row, "p:b", []byte("mine"))
			}
			for _, c := range cols {
				v, err := tx.Get(bg, row, c)
				if err != nil {
					return err
				}
				got = append(got, string(v))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return st.reads.Load() - before, got
	}
	first, got := readAll("row0", false)
	if want := []string{"v00", "v01", "v02", ""}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("row0: %q, want %q", got, want)
	}
	second, got := readAll("row1", false)
	if want := []string{"v10", "v11", "v12", ""}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("row1: %q, want %q", got, want)
	}
	t.Logf("store reads: %d for the first transaction, %d once learned", first, second)
	if second >= first || second > 2 {
		t.Errorf("store reads: %d for the first transaction, %d for the second; want the second to read the row once", first, second)
	}
	if _, got := readAll("row2", true); fmt.Sprint(got) != fmt.Sprint([]string{"v20", "mine", "v22", ""}) {
		t.Errorf("row2 with an own write: %q", got)
	}
}

// A column a prefetch finds locked is read from the store, which resolves
// the lock: here a crashed writer's, whose commit point was reached, so
// the reader rolls it forward and sees its value.
func TestPrefetchLocked(t *testing.T) {
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	db := percolatortest.OpenOn(t, st, percolator.Options{LockTTL: 100 * time.Millisecond})
	for _, row := range []string{"r1", "r2"} {
		set(t, db, row, "p:a", "a0")
		set(t, db, row, "p:b", "b0")
	}
	get2 := func(row string) (a, b string) {
		err := db.View(bg, func(tx *percolator.Tx) error {
			va, err := tx.Get(bg, row, "p:a")
			if err != nil {
				return err
			}
			vb, err := tx.Get(bg, row, "p:b")
			a, b = string(va), string(vb)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	get2("r1") // learn p:a → p:b
	tx, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	tx.Set("r2", "p:a", []byte("a1")) // the primary
	tx.Set("r2", "p:b", []byte("b1"))
	tx.Set("r3", "p:b", []byte("x"))
	percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == percolator.CrashAfterPrimaryCommit })
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatalf("Commit = %v, want the crash", err)
	}
	if a, b := get2("r2"); a != "a1" || b != "b1" {
		t.Errorf("r2 after a commit whose secondary lock was left: %q %q, want a1 b1", a, b)
	}
	if _, err := db.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}
}

// A scan reads the values too long to travel in their write records with
// one store call a row, not one a value, and sees each column's newest
// committed value, a deleted column not at all, and its own writes.
func TestScanReadsValuesOfARowAtOnce(t *testing.T) {
	st := &readCounter{Store: percolatortest.Shared(openStore(t, t.TempDir()))}
	db := percolatortest.OpenOn(t, st, percolator.Options{InlineMax: 4})
	const n = 50
	want := make(map[string]string)
	for i := range n {
		col := fmt.Sprintf("g:%03d", i)
		set(t, db, "block", col, fmt.Sprintf("old value %d", i))
		if i%3 == 0 { // a newer version to pick
			want[col] = fmt.Sprintf("new value %d", i)
			set(t, db, "block", col, want[col])
		} else {
			want[col] = fmt.Sprintf("old value %d", i)
		}
	}
	set(t, db, "block", "h:short", "x") // inline, outside the prefix
	if err := db.Update(bg, func(tx *percolator.Tx) error { return tx.Delete("block", "g:007") }); err != nil {
		t.Fatal(err)
	}
	delete(want, "g:007")
	before := st.reads.Load()
	got := make(map[string]string)
	err := db.Update(bg, func(tx *percolator.Tx) error {
		clear(got)
		tx.Set("block", "g:010", []byte("mine, not yet committed"))
		return tx.Scan(bg, "block", "block\x00", "g:", func(_, col string, v []byte) bool {
			got[col] = string(v)
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want["g:010"] = "mine, not yet committed"
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scan saw %v\nwant %v", got, want)
	}
	if reads := st.reads.Load() - before; reads > 2 {
		t.Errorf("a scan of %d long values made %d ReadRow calls, want at most 2", n, reads)
	}
}
