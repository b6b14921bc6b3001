package percolator_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// Views reuse their transactions: each View's function gets one with
// nothing left of an earlier View (its reads, its point read scratch
// space, what a shared store's prefetching kept), one kept past its View
// is done, and a View that panics or fails to begin leaves nothing
// running.
func TestViewTxLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) *percolator.DB
	}{
		{"exclusive", func(t *testing.T) *percolator.DB { return openDB(t, percolator.Options{}) }},
		{"shared", func(t *testing.T) *percolator.DB {
			return percolatortest.OpenOn(t, percolatortest.Shared(openStore(t, t.TempDir())), percolator.Options{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			if got, want := percolator.ReadsThroughPointReader(db), tc.name == "exclusive"; got != want {
				t.Fatalf("point reads through the store's key buffer: %v, want %v", got, want)
			}
			long := strings.Repeat("long row \x00", 200) // a key past the kept buffer's bound
			rows := []string{"a", "b", long, "c"}
			for _, r := range rows {
				set(t, db, r, "x", "x of "+r)
				set(t, db, r, "y", "y of "+r)
			}
			var kept *percolator.Tx
			for i := range 200 {
				err := db.View(bg, func(tx *percolator.Tx) error {
					if s := percolator.TxLeftovers(tx); s != "" {
						return fmt.Errorf("View %d begins with%s", i, s)
					}
					for j, r := range rows[i%len(rows):] {
						col := []string{"x", "y"}[(i+j)%2]
						v, err := tx.Get(bg, r, col)
						if err != nil {
							return err
						}
						if want := col + " of " + r; string(v) != want {
							return fmt.Errorf("View %d read %q, want %q", i, v, want)
						}
					}
					kept = tx
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := kept.Get(bg, "a", "x"); !errors.Is(err, percolator.ErrTxDone) {
					t.Fatalf("Get on a View's transaction after it returned: %v, want ErrTxDone", err)
				}
				if n := db.Running(); n != 0 {
					t.Fatalf("%d transactions running after View %d", n, i)
				}
			}

			func() {
				defer func() {
					if r := recover(); r != "boom" {
						t.Fatalf("recovered %v, want the View's panic", r)
					}
				}()
				db.View(bg, func(tx *percolator.Tx) error {
					tx.Get(bg, "a", "x")
					panic("boom")
				})
			}()
			if n := db.Running(); n != 0 {
				t.Fatalf("%d transactions running after a View panicked", n)
			}

			db.Close()
			if err := db.View(bg, func(*percolator.Tx) error { return nil }); !errors.Is(err, percolator.ErrClosed) {
				t.Fatalf("View on a closed DB: %v, want ErrClosed", err)
			}
			if n := db.Running(); n != 0 {
				t.Fatalf("%d transactions running after a View that could not begin", n)
			}
		})
	}
}

// A View that is still running holds GC below its snapshot while other
// Views come and go (and reuse transactions) around it: its reads keep
// returning its snapshot, and the safe point never passes it.
func TestViewHoldsGC(t *testing.T) {
	db := openDB(t, percolator.Options{GCGrace: time.Nanosecond})
	set(t, db, "r", "c", "v0")
	inView, release := make(chan uint64), make(chan struct{})
	var wg sync.WaitGroup
	var viewErr error
	wg.Go(func() {
		viewErr = db.View(bg, func(tx *percolator.Tx) error {
			inView <- tx.StartTs()
			<-release
			v, err := tx.Get(bg, "r", "c")
			if err == nil && string(v) != "v0" {
				err = fmt.Errorf("running View read %q, want its snapshot's v0", v)
			}
			return err
		})
	})
	start := <-inView
	for i := 1; i <= 50; i++ {
		set(t, db, "r", "c", fmt.Sprint("v", i))
		for range 10 {
			if err := db.View(bg, func(tx *percolator.Tx) error {
				_, err := tx.Get(bg, "r", "c")
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		if i%10 == 0 {
			time.Sleep(2 * time.Millisecond) // past the grace
			st, err := db.GC(bg)
			if err != nil {
				t.Fatal(err)
			}
			if st.SafePoint > start {
				t.Fatalf("safe point %d passed a running View at %d", st.SafePoint, start)
			}
		}
	}
	close(release)
	wg.Wait()
	if viewErr != nil {
		t.Fatal(viewErr)
	}
	time.Sleep(2 * time.Millisecond)
	st, err := db.GC(bg)
	if err != nil {
		t.Fatal(err)
	}
	if st.SafePoint <= start {
		t.Fatalf("safe point %d stayed at or below a View that ended (at %d)", st.SafePoint, start)
	}
	if err := db.ViewAt(bg, start, func(*percolator.Tx) error { return nil }); !errors.Is(err, percolator.ErrTooOld) {
		t.Fatalf("ViewAt(%d) below the safe point %d: %v, want ErrTooOld", start, st.SafePoint, err)
	}
	if n := db.Running(); n != 0 {
		t.Fatalf("%d transactions running after a View that was too old", n)
	}
}
