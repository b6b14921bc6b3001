package percolator_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// On a shared store a transaction that reads the columns another read in
// a row reads them with one store call, and sees exactly what it would
// have read one by one, its own writes included.
func TestPrefetch(t *testing.T) {
	calls := new(percolatortest.Calls)
	st := percolatortest.SharedCounting(openStore(t, t.TempDir()), calls)
	db := percolatortest.OpenOn(t, st, percolator.Options{})
	cols := []string{"p:a", "p:b", "p:c", "p:d"}
	for r := range 3 {
		for i, c := range cols[:3] { // p:d is never written
			set(t, db, fmt.Sprintf("row%d", r), c, fmt.Sprintf("v%d%d", r, i))
		}
	}
	readAll := func(row string, own bool) (int64, []string) {
		before := calls.ReadRow.Load()
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
		return calls.ReadRow.Load() - before, got
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
	calls := new(percolatortest.Calls)
	st := percolatortest.SharedCounting(openStore(t, t.TempDir()), calls)
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
	before := calls.ReadRow.Load()
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
	if reads := calls.ReadRow.Load() - before; reads > 2 {
		t.Errorf("a scan of %d long values made %d ReadRow calls, want at most 2", n, reads)
	}
}

// Prefetch reads a column of many rows with one call a batch, and the
// Gets that follow see exactly what they would have read one by one: long
// values, deleted and never written cells, the snapshot (not a commit
// after the start), the transaction's own writes, and a crashed writer's
// lock, which Get resolves.
func TestPrefetchRows(t *testing.T) {
	calls := new(percolatortest.Calls)
	st := percolatortest.SharedCounting(openStore(t, t.TempDir()), calls)
	db := percolatortest.OpenOn(t, st, percolator.Options{InlineMax: 8, LockTTL: 100 * time.Millisecond})
	const n = 450 // three batches
	rows := make([]string, n)
	long := 0
	for i := range rows {
		rows[i] = fmt.Sprintf("row%03d", i)
		switch i % 5 {
		case 0: // never written
		case 1:
			set(t, db, rows[i], "p:c", fmt.Sprint(i))
		case 2:
			set(t, db, rows[i], "p:c", fmt.Sprintf("a long value of row %d", i))
			long++
		case 3:
			set(t, db, rows[i], "p:c", "gone")
			if err := db.Update(bg, func(tx *percolator.Tx) error { return tx.Delete(rows[i], "p:c") }); err != nil {
				t.Fatal(err)
			}
		case 4:
			set(t, db, rows[i], "p:other", "x")
		}
	}
	read := func(tx *percolator.Tx) map[string]string {
		got := make(map[string]string)
		for _, r := range rows {
			v, err := tx.Get(bg, r, "p:c")
			if err != nil {
				t.Fatal(err)
			}
			if v != nil {
				got[r] = string(v)
			}
		}
		return got
	}
	var want map[string]string
	if err := db.View(bg, func(tx *percolator.Tx) error { want = read(tx); return nil }); err != nil {
		t.Fatal(err)
	}

	tx, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	set(t, db, rows[1], "p:c", "committed after the start")
	// A crashed writer (its commit point reached) that started after tx:
	// tx must not see its value, but its lock is in the rows.
	crashCommit(t, db, percolator.CrashAfterPrimaryCommit, "p:c", "later", rows[6], rows[11])
	tx.Set(rows[2], "p:c", []byte("mine"))
	reads, lists := calls.ReadRow.Load(), calls.ReadRowList.Load()
	if err := tx.Prefetch(bg, append(rows, rows[:10]...), "p:c"); err != nil {
		t.Fatal(err)
	}
	got := read(tx)
	want[rows[2]] = "mine"
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after Prefetch the Gets saw\n%v\nwant\n%v", got, want)
	}
	reads, lists = calls.ReadRow.Load()-reads, calls.ReadRowList.Load()-lists
	t.Logf("%d rows: %d list reads, %d row reads (%d long values)", n, lists, reads, long)
	if lists != 3 || reads > int64(long) {
		t.Errorf("%d rows: %d list reads and %d row reads, want 3 and at most %d (the long values' data)", n, lists, reads, long)
	}
	if _, err := db.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}

	// One row, several columns: one read for all of them.
	set(t, db, "solo", "p:c", "c")
	set(t, db, "solo", "p:d", "d")
	reads = calls.ReadRow.Load()
	err = db.View(bg, func(tx *percolator.Tx) error {
		if err := tx.Prefetch(bg, []string{"solo"}, "p:c", "p:d", "p:e"); err != nil {
			return err
		}
		var got []string
		for _, c := range []string{"p:c", "p:d", "p:e"} {
			v, err := tx.Get(bg, "solo", c)
			if err != nil {
				return err
			}
			got = append(got, string(v))
		}
		if want := []string{"c", "d", ""}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("one row: %q, want %q", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.ReadRow.Load() - reads; n != 1 {
		t.Errorf("one row's three columns: %d reads, want 1", n)
	}
}

// A lock a prefetch finds below the start timestamp is resolved by Get:
// a crashed writer whose commit point was reached is rolled forward.
func TestPrefetchRowsLocked(t *testing.T) {
	calls := new(percolatortest.Calls)
	st := percolatortest.SharedCounting(openStore(t, t.TempDir()), calls)
	db := percolatortest.OpenOn(t, st, percolator.Options{LockTTL: 100 * time.Millisecond})
	rows := []string{"a", "b", "c", "d"}
	for _, r := range rows {
		set(t, db, r, "p:c", "old "+r)
	}
	crashCommit(t, db, percolator.CrashAfterPrimaryCommit, "p:c", "new", "b", "c")
	var got []string
	err := db.View(bg, func(tx *percolator.Tx) error {
		got = got[:0]
		if err := tx.Prefetch(bg, rows, "p:c"); err != nil {
			return err
		}
		for _, r := range rows {
			v, err := tx.Get(bg, r, "p:c")
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
	if want := []string{"old a", "new", "new", "old d"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if calls.ReadRowList.Load() != 1 {
		t.Errorf("%d list reads, want 1", calls.ReadRowList.Load())
	}
}

// ScanRanges sees what the scans of its ranges one after the other see,
// own writes, deletes, locks and an early stop included, with one store
// call on a store that reads lists of ranges; bad ranges are refused.
func TestScanRanges(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			var st percolator.Store = openStore(t, t.TempDir())
			calls := new(percolatortest.Calls)
			if shared {
				st = percolatortest.SharedCounting(st, calls)
			}
			db := percolatortest.OpenOn(t, st, percolator.Options{InlineMax: 8, LockTTL: 100 * time.Millisecond})
			for _, p := range []string{"a", "b", "c", "d"} {
				for i := range 4 {
					row := fmt.Sprintf("%s/%d", p, i)
					set(t, db, row, "f:x", fmt.Sprintf("value of %s", row))
					set(t, db, row, "g:y", "y")
				}
			}
			if err := db.Update(bg, func(tx *percolator.Tx) error { return tx.Delete("b/2", "f:x") }); err != nil {
				t.Fatal(err)
			}
			crashCommit(t, db, percolator.CrashAfterPrimaryCommit, "f:x", "rolled forward", "d/1", "a/9")
			ranges := []percolator.KeyRange{{Start: "a/", End: "a0"}, {Start: "b/1", End: "b/3"}, {Start: "d/", End: "d0"}}
			collect := func(many bool, limit int) []string {
				var got []string
				err := db.Update(bg, func(tx *percolator.Tx) error {
					got = got[:0]
					tx.Set("b/1", "f:x", []byte("mine"))
					tx.Set("d/7", "f:x", []byte("mine too"))
					tx.Set("c/0", "f:x", []byte("outside"))
					fn := func(row, col string, v []byte) bool {
						got = append(got, row+" "+col+" "+string(v))
						return len(got) < limit
					}
					if many {
						return tx.ScanRanges(bg, ranges, "f:", func(r int, row, col string, v []byte) bool {
							if !strings.HasPrefix(row, ranges[r].Start[:1]) {
								t.Errorf("row %s reported in range %d, %q", row, r, ranges[r])
							}
							return fn(row, col, v)
						})
					}
					for _, r := range ranges {
						if err := tx.Scan(bg, r.Start, r.End, "f:", fn); err != nil || len(got) >= limit {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			for _, limit := range []int{1000, 3, 7} {
				want := collect(false, limit)
				lists := calls.ReadRanges.Load()
				got := collect(true, limit)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("limit %d: ScanRanges saw\n%q\nthe scans\n%q", limit, got, want)
				}
				if shared && calls.ReadRanges.Load()-lists != 1 {
					t.Errorf("limit %d: %d ReadRanges calls, want 1", limit, calls.ReadRanges.Load()-lists)
				}
				t.Logf("limit %d: %d cells", limit, len(got))
			}
			for _, bad := range [][]percolator.KeyRange{
				{{Start: "b", End: "c"}, {Start: "a", End: "b"}},
				{{Start: "a", End: "c"}, {Start: "b", End: "d"}},
				{{Start: "a", End: ""}, {Start: "b", End: "d"}},
				{{Start: "c", End: "b"}},
			} {
				err := db.View(bg, func(tx *percolator.Tx) error {
					return tx.ScanRanges(bg, bad, "", func(int, string, string, []byte) bool { return true })
				})
				if !errors.Is(err, percolator.ErrInvalid) {
					t.Errorf("ScanRanges(%q) = %v, want ErrInvalid", bad, err)
				}
			}
		})
	}
}
