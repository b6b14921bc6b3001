package badger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// writeRows writes rows r/<from>..r/<to-1>, one cell each, at ts, with a
// value that names the row and ts.
func writeRows(t testing.TB, s *badger.Store, from, to int, ts uint64) {
	t.Helper()
	if err := putRows(s, from, to, ts); err != nil {
		t.Fatal(err)
	}
}

// putRows is writeRows returning the error.
func putRows(s *badger.Store, from, to int, ts uint64) error {
	var rms []percolator.RowMutation
	for i := from; i < to; i++ {
		row := fmt.Sprintf("r/%06d", i)
		rms = append(rms, percolator.RowMutation{Row: row, Mutations: []percolator.Mutation{set("d", "c", ts, rowValue(row, ts))}})
		if len(rms) == 500 || i == to-1 {
			if err := s.MutateRows(context.Background(), rms); err != nil {
				return err
			}
			rms = rms[:0]
		}
	}
	return nil
}

// rowValue is writeRows's value of row at ts, 200 bytes.
func rowValue(row string, ts uint64) string {
	v := fmt.Sprintf("%s@%d;", row, ts)
	return strings.Repeat(v, 200/len(v)+1)[:200]
}

// HoldMapped holds the tables it names: compaction replaces them, but
// their files stay until release (Badger deletes a table's file when it
// unmaps it), and go after it.
func TestHoldMappedKeepsTables(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, badger.Options{MemTableSize: 1 << 20})
	writeRows(t, s, 0, 20000, 10)
	compact(t, s, 1)
	files, release := s.HoldMapped()
	if len(files) == 0 {
		t.Fatal("HoldMapped named no table after a compaction wrote some")
	}
	for _, f := range files {
		if filepath.Dir(f) != dir || filepath.Ext(f) != ".sst" {
			t.Fatalf("HoldMapped named %s, not a table of %s", f, dir)
		}
	}
	writeRows(t, s, 0, 20000, 20)
	compact(t, s, 1)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("held table %s after a compaction rewrote every row: %v", filepath.Base(f), err)
		}
	}
	release()
	gone := 0
	for _, f := range files {
		if _, err := os.Stat(f); os.IsNotExist(err) {
			gone++
		}
	}
	if gone == 0 {
		t.Errorf("none of the %d tables held through a compaction that rewrote every row went after release", len(files))
	}
}

// The budget's trimmer, at a budget far below the table, drops the pages
// of the held tables again and again while rows are written, compacted
// (tables made and unmapped) and read: every read finds what was
// written, and the trimmer dropped pages. A drop on a range unmapped
// meanwhile and mapped again would zero memory and fail reads (or
// crash the process).
func TestTrimDropsHeldTablesUnderCompaction(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "4GiB") // the soft limit is not this test's
	dir := t.TempDir()
	s := open(t, dir, badger.Options{MemTableSize: 1 << 20})
	const rows = 20000
	writeRows(t, s, 0, rows, 1)
	compact(t, s, 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &budget.Budget{MB: 1}
	b.Apply(ctx, dir)

	var ts atomic.Uint64 // the last round written whole
	ts.Store(1)
	var wg sync.WaitGroup
	var failed atomic.Bool
	deadline := time.Now().Add(3 * time.Second)
	if testing.Short() {
		deadline = time.Now().Add(time.Second)
	}
	wg.Go(func() { // writer and compactor
		for round := uint64(2); time.Now().Before(deadline) && !failed.Load(); round++ {
			err := putRows(s, 0, rows, round)
			ts.Store(round)
			if err == nil && round%3 == 0 {
				err = s.Compact(ctx, round-1)
			}
			if err != nil {
				t.Errorf("round %d: %v", round, err)
				failed.Store(true)
			}
		}
	})
	for r := range 2 {
		wg.Go(func() { // readers
			rnd := rand.New(rand.NewPCG(uint64(r), 7))
			for time.Now().Before(deadline) && !failed.Load() {
				low := ts.Load()
				row := fmt.Sprintf("r/%06d", rnd.IntN(rows))
				cs, err := s.ReadRow(ctx, row, percolator.Filter{Family: "d", Column: "c", Latest: true})
				if err != nil {
					t.Errorf("ReadRow(%s): %v", row, err)
					failed.Store(true)
					return
				}
				if len(cs) != 1 || cs[0].Ts < low || string(cs[0].Value) != rowValue(row, cs[0].Ts) {
					t.Errorf("ReadRow(%s) = %s, want the value written at %d or later", row, show(cs), low)
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	st := b.Trims()
	t.Logf("trims %d, %d MiB paged out, of which %d dropped", st.Trims, st.Paged>>20, st.Dropped>>20)
	if st.Dropped == 0 {
		t.Error("the trimmer dropped nothing: the test did not exercise dropping held tables")
	}
}
