package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

var bg = context.Background()

func TestTxBasics(t *testing.T) {
	db := openDB(t, percolator.Options{})
	set(t, db, "r", "a", "1")
	set(t, db, "r", "empty", "")

	tests := []struct {
		name string
		fn   func(tx *percolator.Tx) error
	}{
		{"reads committed value", func(tx *percolator.Tx) error {
			return want(tx, "r", "a", "1", true)
		}},
		{"missing cell is nil", func(tx *percolator.Tx) error {
			return want(tx, "r", "nope", "", false)
		}},
		{"empty value is present", func(tx *percolator.Tx) error {
			return want(tx, "r", "empty", "", true)
		}},
		{"reads own writes", func(tx *percolator.Tx) error {
			tx.Set("r", "a", []byte("2"))
			return want(tx, "r", "a", "2", true)
		}},
		{"own delete hides value", func(tx *percolator.Tx) error {
			tx.Delete("r", "a")
			return want(tx, "r", "a", "", false)
		}},
		{"empty row is invalid", func(tx *percolator.Tx) error {
			if err := tx.Set("", "a", nil); !errors.Is(err, percolator.ErrInvalid) {
				return fmt.Errorf("Set(\"\") = %v, want ErrInvalid", err)
			}
			return nil
		}},
		{"reserved row is invalid", func(tx *percolator.Tx) error {
			if _, err := tx.Get(bg, "\x00meta/oracle", "hwm"); !errors.Is(err, percolator.ErrInvalid) {
				return fmt.Errorf("Get(meta) = %v, want ErrInvalid", err)
			}
			return nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := db.Begin(bg)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if err := tc.fn(tx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func want(tx *percolator.Tx, row, col, val string, present bool) error {
	v, err := tx.Get(bg, row, col)
	if err != nil {
		return err
	}
	if (v != nil) != present || string(v) != val {
		return fmt.Errorf("Get(%q,%q) = %q (present %v), want %q (present %v)", row, col, v, v != nil, val, present)
	}
	return nil
}

func TestTxDoneAndReadOnly(t *testing.T) {
	db := openDB(t, percolator.Options{})
	tx, _ := db.Begin(bg)
	tx.Set("r", "c", []byte("x"))
	if err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set("r", "c", nil); !errors.Is(err, percolator.ErrTxDone) {
		t.Errorf("Set after Commit = %v, want ErrTxDone", err)
	}
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrTxDone) {
		t.Errorf("second Commit = %v, want ErrTxDone", err)
	}
	err := db.View(bg, func(tx *percolator.Tx) error { return tx.Set("r", "c", nil) })
	if !errors.Is(err, percolator.ErrReadOnly) {
		t.Errorf("Set in View = %v, want ErrReadOnly", err)
	}
}

func TestSnapshotIsolation(t *testing.T) {
	db := openDB(t, percolator.Options{})
	set(t, db, "r", "c", "old")
	reader, _ := db.Begin(bg)
	defer reader.Rollback()
	set(t, db, "r", "c", "new")
	if err := want(reader, "r", "c", "old", true); err != nil {
		t.Fatal(err)
	}
	if v, _ := get(t, db, "r", "c"); v != "new" {
		t.Fatalf("fresh read = %q, want new", v)
	}
}

// Exactly one of many transactions that all started before any of them
// committed can write the same cell, for single-row (one-phase) and
// multi-row (two-phase) transactions alike.
func TestExactlyOneWinner(t *testing.T) {
	for _, multiRow := range []bool{false, true} {
		t.Run(fmt.Sprintf("multirow=%v", multiRow), func(t *testing.T) {
			db := openDB(t, percolator.Options{})
			for round := 0; round < 30; round++ {
				const n = 16
				txs := make([]*percolator.Tx, n)
				for i := range txs {
					txs[i], _ = db.Begin(bg)
					txs[i].Set(fmt.Sprintf("win/%d", round), "c", []byte(fmt.Sprint(i)))
					if multiRow {
						txs[i].Set(fmt.Sprintf("win/%d/other%d", round, i), "c", []byte("x"))
					}
				}
				var wins atomic.Int32
				var wg sync.WaitGroup
				for _, tx := range txs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						switch err := tx.Commit(bg); {
						case err == nil:
							wins.Add(1)
						case !errors.Is(err, percolator.ErrConflict):
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				if wins.Load() != 1 {
					t.Fatalf("round %d: %d winners, want exactly 1", round, wins.Load())
				}
			}
		})
	}
}

func TestWriteConflictIsSentinel(t *testing.T) {
	db := openDB(t, percolator.Options{})
	a, _ := db.Begin(bg)
	b, _ := db.Begin(bg)
	a.Set("r", "c", []byte("a"))
	b.Set("r", "c", []byte("b"))
	if err := a.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(bg); !errors.Is(err, percolator.ErrConflict) {
		t.Fatalf("second writer: %v, want ErrConflict", err)
	}
}

func TestUpdateRetriesAndGivesUp(t *testing.T) {
	db := openDB(t, percolator.Options{MaxAttempts: 4, BackoffBase: time.Microsecond, BackoffMax: time.Millisecond})
	attempts := 0
	err := db.Update(bg, func(tx *percolator.Tx) error {
		attempts++
		tx.Set("r", "c", []byte("mine"))
		set(t, db, "r", "c", fmt.Sprint("theirs", attempts)) // always beats us
		return nil
	})
	if !errors.Is(err, percolator.ErrGaveUp) || !errors.Is(err, percolator.ErrConflict) {
		t.Fatalf("Update = %v, want ErrGaveUp wrapping ErrConflict", err)
	}
	if attempts != 4 {
		t.Fatalf("%d attempts, want 4", attempts)
	}

	attempts = 0
	err = db.Update(bg, func(tx *percolator.Tx) error {
		attempts++
		tx.Set("r", "c", []byte("mine"))
		if attempts < 3 {
			set(t, db, "r", "c", "theirs")
		}
		return nil
	})
	if err != nil || attempts != 3 {
		t.Fatalf("Update = %v after %d attempts, want success on the 3rd", err, attempts)
	}
	if v, _ := get(t, db, "r", "c"); v != "mine" {
		t.Fatalf("value %q, want mine", v)
	}
}

func TestUpdateErrorAndPanicRollBack(t *testing.T) {
	db := openDB(t, percolator.Options{})
	boom := errors.New("boom")
	if err := db.Update(bg, func(tx *percolator.Tx) error {
		tx.Set("r", "c", []byte("x"))
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic was swallowed")
			}
		}()
		db.Update(bg, func(tx *percolator.Tx) error {
			tx.Set("r", "c", []byte("y"))
			panic("kaboom")
		})
	}()
	if _, ok := get(t, db, "r", "c"); ok {
		t.Fatal("a failed Update left a value")
	}
	if n, _ := percolator.CountLocks(db); n != 0 {
		t.Fatalf("%d locks left", n)
	}
}

func TestScan(t *testing.T) {
	db := openDB(t, percolator.Options{})
	for _, c := range []struct{ row, col, val string }{
		{"a", "anchor:x", "1"}, {"a", "anchor:y", "2"}, {"a", "body", "b"},
		{"b", "anchor:x", "3"}, {"c", "anchor:z", "4"}, {"d", "anchor:x", "5"},
	} {
		set(t, db, c.row, c.col, c.val)
	}
	tx, _ := db.Begin(bg)
	defer tx.Rollback()
	tx.Set("a", "anchor:w", []byte("own"))  // before stored columns
	tx.Delete("b", "anchor:x")              // hides a stored cell
	tx.Set("bb", "anchor:q", []byte("new")) // a row only we have
	tx.Set("c", "other", []byte("no"))      // wrong prefix

	var got []string
	err := tx.Scan(bg, "a", "d", "anchor:", func(row, col string, v []byte) bool {
		got = append(got, row+"/"+col+"="+string(v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "[a/anchor:w=own a/anchor:x=1 a/anchor:y=2 bb/anchor:q=new c/anchor:z=4]"
	if fmt.Sprint(got) != want {
		t.Fatalf("scan = %v\nwant   %v", got, want)
	}

	var first []string
	tx.Scan(bg, "", "", "", func(row, col string, v []byte) bool {
		first = append(first, row+"/"+col)
		return len(first) < 2
	})
	if len(first) != 2 {
		t.Fatalf("stop after 2 returned %v", first)
	}
}

// A reader meeting the locks of abandoned transactions rolls them forward
// when the primary committed and back when it did not.
func TestLockCleanup(t *testing.T) {
	for _, tc := range []struct {
		at        percolator.CrashPoint
		committed bool
	}{
		{percolator.CrashAfterPrimaryPrewrite, false},
		{percolator.CrashAfterPrewrites, false},
		{percolator.CrashAfterPrimaryCommit, true},
		{percolator.CrashMidSecondaries, true},
	} {
		t.Run(fmt.Sprint(tc.at), func(t *testing.T) {
			db := openDB(t, percolator.Options{})
			tx, _ := db.Begin(bg)
			for i := range 4 {
				tx.Set(fmt.Sprintf("row%d", i), "c", []byte("new"))
			}
			percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == tc.at })
			if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
				t.Fatalf("Commit = %v, want the injected crash", err)
			}
			for i := 3; i >= 0; i-- { // secondaries first: they must consult the primary
				v, ok := get(t, db, fmt.Sprintf("row%d", i), "c")
				if ok != tc.committed || (ok && v != "new") {
					t.Fatalf("row%d = %q (present %v), committed %v", i, v, ok, tc.committed)
				}
			}
			if n, _ := percolator.CountLocks(db); n != 0 {
				t.Fatalf("%d locks left", n)
			}
			// Short values travel in the lock and the write record, never
			// in a data cell, even when a cleaner rolls the write forward.
			var dump strings.Builder
			if err := db.Dump(bg, &dump, "", ""); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(dump.String(), "\tdata@") {
				t.Fatalf("data cells for short values:\n%s", dump.String())
			}
		})
	}
}

// pausedWriter starts a two-row commit of "new" to r1 and r2 and returns
// once it has prewritten both; it commits when release is closed, and
// reports the result on done.
func pausedWriter(db *percolator.DB) (release chan struct{}, done chan error) {
	prewritten := make(chan struct{})
	release, done = make(chan struct{}), make(chan error)
	w, _ := db.Begin(bg)
	w.Set("r1", "c", []byte("new"))
	w.Set("r2", "c", []byte("new"))
	percolator.SetCrash(w, func(p percolator.CrashPoint) bool {
		if p == percolator.CrashAfterPrewrites {
			close(prewritten)
			<-release
		}
		return false
	})
	go func() { done <- w.Commit(bg) }()
	<-prewritten
	return release, done
}

// A reader waits for a live writer's lock, and after it commits still reads
// its own snapshot, which the writer's later commit is not part of.
func TestReaderWaitsForLiveWriter(t *testing.T) {
	db := openDB(t, percolator.Options{})
	set(t, db, "r1", "c", "old")
	release, done := pausedWriter(db)

	r, _ := db.Begin(bg) // starts after the prewrite, before the commit
	defer r.Rollback()
	got := make(chan string)
	go func() {
		v, err := r.Get(bg, "r1", "c")
		if err != nil {
			t.Error(err)
		}
		got <- string(v)
	}()
	select {
	case v := <-got:
		t.Fatalf("reader did not wait for the live lock; read %q", v)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "old" {
		t.Fatalf("reader saw %q, want old: the writer committed after the reader started", v)
	}
}

// A writer that stays silent past its LockTTL is treated as stuck: a reader
// rolls it back and the writer's commit then fails.
func TestStuckWriterIsRolledBack(t *testing.T) {
	db := openDB(t, percolator.Options{LockTTL: 30 * time.Millisecond})
	set(t, db, "r1", "c", "old")
	release, done := pausedWriter(db)
	if v, _ := get(t, db, "r2", "c"); v != "old" && v != "" {
		t.Fatalf("read %q", v)
	}
	close(release)
	if err := <-done; !errors.Is(err, percolator.ErrConflict) {
		t.Fatalf("stuck writer's Commit = %v, want ErrConflict", err)
	}
	if v, _ := get(t, db, "r1", "c"); v != "old" {
		t.Fatalf("r1 = %q after rollback, want old", v)
	}
	if n, _ := percolator.CountLocks(db); n != 0 {
		t.Fatalf("%d locks left", n)
	}
}

// Locks left by a process that died survive on disk and are cleaned up by
// the next one as it opens the table.
func TestLocksSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	db, err := percolator.Open(bg, st, percolator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin(bg)
	tx.Set("a", "c", []byte("1"))
	tx.Set("b", "c", []byte("1"))
	percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == percolator.CrashAfterPrimaryCommit })
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatal(err)
	}
	db.Close()
	st.Close()

	st = openStore(t, dir)
	defer st.Close()
	db, err = percolator.Open(bg, st, percolator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, _ := percolator.CountLocks(db); n != 0 {
		t.Fatalf("%d locks after restart, want the secondary's resolved", n)
	}
	if v, _ := get(t, db, "b", "c"); v != "1" {
		t.Fatalf("b = %q, want rolled forward to 1", v)
	}
}

func TestLargeValuesAreNotInlined(t *testing.T) {
	db := openDB(t, percolator.Options{InlineMax: 8})
	big := string(make([]byte, 4096))
	set(t, db, "r", "big", big)
	tx, _ := db.Begin(bg)
	tx.Set("r", "big2", []byte(big))
	tx.Set("s", "big2", []byte(big))
	if err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	for _, rc := range [][2]string{{"r", "big"}, {"r", "big2"}, {"s", "big2"}} {
		if v, _ := get(t, db, rc[0], rc[1]); v != big {
			t.Fatalf("%v: %d bytes back", rc, len(v))
		}
	}
}

// slowStore is the real store with latency added to prewrites of some rows,
// to make one commit take much longer than its LockTTL.
type slowStore struct {
	percolator.Store
	prefix string
	delay  time.Duration
}

func (s slowStore) CheckAndMutateRow(ctx context.Context, row string, pred []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	if strings.HasPrefix(row, s.prefix) {
		time.Sleep(s.delay)
	}
	return s.Store.CheckAndMutateRow(ctx, row, pred, ifMatch, ifNoMatch)
}

// A commit that keeps making progress refreshes its primary lock, so readers
// wait for it instead of rolling it back, however long it takes.
func TestLongCommitStaysAlive(t *testing.T) {
	st := openStore(t, t.TempDir())
	db := percolatortest.OpenOn(t, slowStore{st, "slow/", 50 * time.Millisecond},
		percolator.Options{LockTTL: 300 * time.Millisecond, CommitParallelism: 1})

	tx, _ := db.Begin(bg)
	tx.Set("a", "c", []byte("primary"))
	for i := range 30 { // ~1.5 s of prewrites: five TTLs
		tx.Set(fmt.Sprintf("slow/%02d", i), "c", []byte("x"))
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { // keeps meeting the primary lock
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			db.View(bg, func(r *percolator.Tx) error { _, err := r.Get(bg, "a", "c"); return err })
			time.Sleep(5 * time.Millisecond)
		}
	}()
	err := tx.Commit(bg)
	close(stop)
	readers.Wait()
	if err != nil {
		t.Fatalf("a long but live commit was cleaned up: %v", err)
	}
	if v, _ := get(t, db, "slow/29", "c"); v != "x" {
		t.Fatalf("slow/29 = %q", v)
	}
}
