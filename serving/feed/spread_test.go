package feed

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// openSpread opens a Badger table whose export queues have n buckets, as a
// Bigtable table's have.
func openSpread(t *testing.T, n int) *percolator.DB {
	t.Helper()
	db, _ := percolatortest.Open(t, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if got, err := webtable.InitSpread(bg, db, n); err != nil || got != n {
		t.Fatalf("InitSpread(%d) = %d, %v", n, got, err)
	}
	return db
}

// applyLog records what an index applied, batch by batch.
type applyLog struct {
	mu      sync.Mutex // guards batches
	batches [][]serving.Applied
}

func (l *applyLog) add(a []serving.Applied) {
	l.mu.Lock()
	l.batches = append(l.batches, append([]serving.Applied(nil), a...))
	l.mu.Unlock()
}

// newest returns each row's newest applied version, and fails t if a row's
// versions ever went back.
func (l *applyLog) newest(t *testing.T) map[string]uint64 {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	last := make(map[string]uint64)
	for _, b := range l.batches {
		for _, a := range b {
			if a.Version <= last[a.Row] {
				t.Errorf("%s: version %d applied after %d", a.Row, a.Version, last[a.Row])
			}
			last[a.Row] = a.Version
		}
	}
	return last
}

func spreadQueueLen(t *testing.T, db *percolator.DB) int {
	t.Helper()
	n := 0
	err := db.View(bg, func(tx *percolator.Tx) error {
		n = 0
		return tx.Scan(bg, "!export", "!exporu", webtable.ExportDoc, func(string, string, []byte) bool {
			n++
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFeederMergesBuckets: quick looks alone (from the newest version
// applied) take a queue of 16 buckets in version order, batch after batch,
// whatever the batch and byte limits cut: each batch starts at or after the
// newest version of the one before, and once they find nothing the queue
// is empty, no entry of a bucket skipped by a batch that went past it.
func TestFeederMergesBuckets(t *testing.T) {
	for _, tc := range []struct {
		name         string
		spread       int
		batch, bytes int
	}{
		{"one bucket", 1, 20, 8 << 10},
		{"16 buckets, small batches", 16, 7, 1 << 20},
		{"16 buckets, byte-bound batches", 16, 500, 6 << 10},
		{"16 buckets, batches of 40", 16, 40, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(46, uint64(tc.batch)))
			db := openSpread(t, tc.spread)
			var log applyLog
			ix, err := serving.OpenIndex(filepath.Join(t.TempDir(), "index"), serving.Options{OnApply: log.add})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			want := make(map[string]uint64)
			for i := range 240 {
				v := uint64(1000 + i)
				if rng.IntN(4) == 0 {
					v-- // two entries of one version now and then
				}
				row := fmt.Sprintf("com.example/p%02d", rng.IntN(60))
				if v <= want[row] {
					continue
				}
				e := upsert(v, row, "http://example.com/"+row[12:], "Page", strings.Repeat("quokka ", 10+rng.IntN(400)), 1)
				enqueue(t, db, e)
				want[row] = v
			}
			f := NewFeeder(db, ix, FeederOptions{Batch: tc.batch, BatchBytes: tc.bytes})
			looks := 0
			for {
				n, err := f.look(bg, sinceNewest, 0)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if looks++; looks > 1000 {
					t.Fatal("the looks never end")
				}
			}
			if n := spreadQueueLen(t, db); n != 0 {
				t.Errorf("%d entries left in the queue after %d quick looks", n, looks)
			}
			if tc.batch < 100 && looks < 240/tc.batch {
				t.Errorf("%d looks for 240 entries in batches of %d", looks, tc.batch)
			}
			log.mu.Lock()
			var prev uint64
			for i, b := range log.batches {
				var lo, hi uint64
				for _, a := range b {
					if lo == 0 || a.Version < lo {
						lo = a.Version
					}
					hi = max(hi, a.Version)
				}
				if lo < prev {
					t.Errorf("batch %d has version %d, below %d of the batch before", i, lo, prev)
				}
				prev = hi
			}
			log.mu.Unlock()
			got := log.newest(t)
			for row, v := range want {
				if got[row] != v {
					t.Errorf("%s: applied %d, want %d", row, got[row], v)
				}
			}
		})
	}
}

// TestFeederSpreadConcurrentExporters: exporters commit concurrently (one
// row's exports conflict and run again, as the export observer's do) into
// a queue of 16 buckets while the feeder runs: it applies each row's
// exports in version order, and ends with every row's newest export and an
// empty queue.
func TestFeederSpreadConcurrentExporters(t *testing.T) {
	concurrentExporters(t, openSpread(t, 16))
}

// TestFeederSpreadBigtable: a new Bigtable table gets DefaultSpread
// buckets, and the feeder takes concurrent exports from them as on Badger.
func TestFeederSpreadBigtable(t *testing.T) {
	emulator.Ensure(t)
	st, err := bigtable.Open(bg, bigtable.Config{Project: "caffeine", Instance: "test", Table: "spread"})
	if err != nil {
		t.Fatal(err)
	}
	db := percolatortest.OpenOn(t, st, leaseDBOptions)
	if n, err := webtable.Spread(bg, db); err != nil || n != webtable.DefaultSpread {
		t.Fatalf("a new Bigtable table's spread is %d, %v; want %d", n, err, webtable.DefaultSpread)
	}
	concurrentExporters(t, db)
}

func concurrentExporters(t *testing.T, db *percolator.DB) {
	var log applyLog
	ix, err := serving.OpenIndex(filepath.Join(t.TempDir(), "index"), serving.Options{OnApply: log.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	f := NewFeeder(db, ix, FeederOptions{Batch: 16, BatchBytes: 16 << 10, Lag: time.Second,
		LagScan: 200 * time.Millisecond, FullScan: time.Second, Hold: -1})
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the feeder stopped: %v", err)
		}
	}()

	var (
		mu   sync.Mutex // guards want
		want = make(map[string]uint64)
		wg   sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(46, uint64(w)))
			for range 80 {
				row := fmt.Sprintf("com.example/p%02d", rng.IntN(40))
				text := strings.Repeat("wombat ", 10+rng.IntN(200))
				var v uint64
				err := db.Update(bg, func(tx *percolator.Tx) error {
					v = tx.StartTs()
					e := upsert(v, row, "http://example.com/"+row[12:], "Page", text, 1)
					e.Doc.FetchedAt = time.Now().UTC()
					return enqueueIn(tx, e)
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want[row] = max(want[row], v)
				mu.Unlock()
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for spreadQueueLen(t, db) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries left in the queue", spreadQueueLen(t, db))
		}

		time.Sleep(20 * time.Millisecond)
	}
	got := log.newest(t)
	for row, v := range want {
		if got[row] != v {
			t.Errorf("%s: applied %d, want %d", row, got[row], v)
		}
	}
}

// BenchmarkReadQueue: one read of a batch (500 entries, 2 MiB) from a
// queue of one bucket and of 16, empty (an idle feeder's look) and with
// 2,000 entries of 2 KB.
func BenchmarkReadQueue(b *testing.B) {
	for _, entries := range []int{0, 2000} {
		for _, spread := range []int{1, 16} {
			b.Run(fmt.Sprintf("entries=%d/spread=%d", entries, spread), func(b *testing.B) {
				db, _ := percolatortest.Open(b, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
				if _, err := webtable.InitSpread(bg, db, spread); err != nil {
					b.Fatal(err)
				}
				q := webtable.SpreadQueue(webtable.DefaultIndex, spread)
				v := []byte(strings.Repeat("x", 2000))
				for i := 0; i < entries; i += 100 {
					err := db.Update(bg, func(tx *percolator.Tx) error {
						for j := i; j < i+100; j++ {
							if err := tx.Set(q.Row(uint64(1000+j), fmt.Sprintf("com.example/p%05d", j)), webtable.ExportDoc, v); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				// CPU time as well as wall time: the machine may be shared.
				cpu0 := cpuTime()
				b.ResetTimer()
				for b.Loop() {
					err := db.View(bg, func(tx *percolator.Tx) error {
						es, _, err := readQueue(bg, tx, q, 0, 500, 2<<20)
						if err == nil && len(es) < min(entries, 400) {
							err = fmt.Errorf("read %d entries", len(es))
						}
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReadQueueMerges: readQueue of a queue of 16 buckets gives the
// entries from a version on in version order, cut at its limits exactly
// where a merge of everything would be, on the embedded store and on a
// shared one, where an empty or short queue is read with one store call.
func TestReadQueueMerges(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			st, err := badger.Open(t.TempDir(), badger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			calls := new(percolatortest.Calls)
			var store percolator.Store = st
			if shared {
				store = percolatortest.SharedCounting(st, calls)
			}
			db := percolatortest.OpenOn(t, store, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
			if _, err := webtable.InitSpread(bg, db, 16); err != nil {
				t.Fatal(err)
			}
			q := webtable.SpreadQueue(webtable.DefaultIndex, 16)
			read := func(from uint64, batch, maxBytes int) []entry {
				var es []entry
				err := db.View(bg, func(tx *percolator.Tx) error {
					var err error
					es, _, err = readQueue(bg, tx, q, from, batch, maxBytes)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return es
			}
			lists := calls.ReadRanges.Load()
			if es := read(0, 500, 2<<20); len(es) != 0 {
				t.Fatalf("empty queue: %d entries", len(es))
			}
			if shared && (calls.ReadRanges.Load()-lists != 1) {
				t.Errorf("an empty queue's read: %d multi-range reads, want 1", calls.ReadRanges.Load()-lists)
			}
			r := rand.New(rand.NewPCG(7, 7))
			byRow := make(map[string]entry)
			for range 300 {
				row := fmt.Sprintf("com.example/p%03d", r.IntN(120))
				version := uint64(1000 + r.IntN(200))
				v := []byte(strings.Repeat("x", 10+r.IntN(300)))
				err := db.Update(bg, func(tx *percolator.Tx) error { return tx.Set(q.Row(version, row), webtable.ExportDoc, v) })
				if err != nil {
					t.Fatal(err)
				}
				byRow[q.Row(version, row)] = entry{q.Row(version, row), version, v}
			}
			all := slices.SortedFunc(maps.Values(byRow), func(a, b entry) int {
				return cmp.Or(cmp.Compare(a.version, b.version), cmp.Compare(a.row, b.row))
			})
			for _, c := range []struct {
				from            uint64
				batch, maxBytes int
			}{{0, 1000, 1 << 30}, {0, 40, 1 << 30}, {1100, 25, 1 << 30}, {0, 1000, 3000}, {1150, 7, 900}, {1199, 500, 2 << 20}} {
				var want []entry
				size := 0
				for _, e := range all {
					if e.version < c.from {
						continue
					}
					if len(want) > 0 && size+len(e.v) > c.maxBytes {
						break
					}
					want = append(want, e)
					size += len(e.v)
					if len(want) >= c.batch || size >= c.maxBytes {
						break
					}
				}
				lists := calls.ReadRanges.Load()
				got := read(c.from, c.batch, c.maxBytes)
				if len(got) != len(want) {
					t.Errorf("from %d, batch %d, %d bytes: %d entries, want %d", c.from, c.batch, c.maxBytes, len(got), len(want))
					continue
				}
				for i := range got {
					if got[i].row != want[i].row || !bytes.Equal(got[i].v, want[i].v) {
						t.Errorf("from %d, batch %d, %d bytes: entry %d is %s, want %s", c.from, c.batch, c.maxBytes, i, got[i].row, want[i].row)
						break
					}
				}
				if shared {
					t.Logf("from %d, batch %d, %d bytes: %d entries, %d multi-range reads", c.from, c.batch, c.maxBytes, len(got), calls.ReadRanges.Load()-lists)
				}
			}
		})
	}
}
