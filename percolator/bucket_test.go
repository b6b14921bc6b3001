package percolator_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// Notification scans by bucket (members.go, BucketStore): workers sharing
// a table lose no notification while they join, leave and crash, and on
// a BucketStore each reads only the notifications of its buckets.

// TestPartitionChurnLosesNothing notifies rows in rounds while workers
// join, close and crash (their member rows left behind), on a shared
// Badger store and on the Bigtable emulator: every row is observed and no
// notification is left, and rows run twice only rarely.
func TestPartitionChurnLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) percolator.Store
	}{
		{"badger", func(t *testing.T) percolator.Store { return percolatortest.Shared(openStore(t, t.TempDir())) }},
		{"bigtable", func(t *testing.T) percolator.Store { return bigtableStore(t, "churn") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const ttl, skew = 500 * time.Millisecond, 300 * time.Millisecond
			// dbs[0] loads; each worker gets a DB of its own, as a
			// process would.
			dbs := shared(t, tc.open(t), 8, percolator.Options{Observed: []string{"in"}, LockTTL: ttl, ClockSkew: skew})
			l := newRunLog()
			live := map[int]*percolator.Worker{}
			next := 1
			join := func() {
				live[next] = startMarker(t, dbs[next], l, next)
				next++
			}
			join()
			join()
			join()
			const rounds, perRound = 8, 50
			for r := range rounds {
				notifyRows(t, dbs[0], fmt.Sprintf("c%d/", r), perRound)
				switch r {
				case 1, 5: // a crash: its rows wait for its beat to go stale
					for i, w := range live {
						percolator.KillWorker(w)
						delete(live, i)
						break
					}
				case 2, 6:
					join()
				case 3: // a leave
					for i, w := range live {
						w.Close()
						delete(live, i)
						break
					}
				case 4:
					join()
				}
				time.Sleep(100 * time.Millisecond)
			}
			var ws []*percolator.Worker
			for _, w := range live {
				ws = append(ws, w)
			}
			waitIdle(t, ws...)
			twice, rows := 0, 0
			for r := range rounds {
				checkRuns(t, dbs[0], l, fmt.Sprintf("c%d/", r), perRound, false)
				l.mu.Lock()
				for i := range perRound {
					rows++
					runs := 0
					for _, n := range l.byRow[fmt.Sprintf("c%d/%03d", r, i)] {
						runs += n
					}
					if runs > 1 {
						twice++
					}
				}
				l.mu.Unlock()
			}
			if twice > rows/5 {
				t.Errorf("%d of %d rows ran more than once", twice, rows)
			}
			t.Logf("%d of %d rows ran more than once", twice, rows)
		})
	}
}

// scanLog is a store that records the rows the notification scans of
// one DB read (ReadRows and ReadBuckets of the notify family).
type scanLog struct {
	percolator.BucketStore
	mu   sync.Mutex
	rows map[string]int
}

func (s *scanLog) note(fn func(string, []percolator.Cell) bool, filters []percolator.Filter) func(string, []percolator.Cell) bool {
	if len(filters) != 1 || filters[0].Family != "n" {
		return fn
	}
	return func(row string, cells []percolator.Cell) bool {
		s.mu.Lock()
		s.rows[row]++
		s.mu.Unlock()
		return fn(row, cells)
	}
}

func (s *scanLog) ReadRows(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, filters ...percolator.Filter) error {
	return s.BucketStore.ReadRows(ctx, start, end, s.note(fn, filters), filters...)
}

func (s *scanLog) ReadBuckets(ctx context.Context, ranges []percolator.KeyRange, fn func(string, []percolator.Cell) bool, filters ...percolator.Filter) error {
	return s.BucketStore.ReadBuckets(ctx, ranges, s.note(fn, filters), filters...)
}

// TestPartitionScansOwnBuckets: three workers on the Bigtable emulator,
// with stable membership, each scan only their buckets, in batches:
// every notified row is observed and read by the scans of one worker,
// not of all three.
func TestPartitionScansOwnBuckets(t *testing.T) {
	st := bigtableStore(t, "ownbuckets")
	opt := percolator.Options{Observed: []string{"in"}}
	dbs := shared(t, st, 1, opt)
	l := newRunLog()
	var logs []*scanLog
	var ws []*percolator.Worker
	for i := 1; i <= 3; i++ {
		sl := &scanLog{BucketStore: st, rows: map[string]int{}}
		db, err := percolator.Open(bg, sl, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		logs = append(logs, sl)
		// Small batches: passes resume within the buckets many times.
		ws = append(ws, startWorker(t, db, percolator.WorkerOptions{Workers: 4, BatchRows: 16, IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}, l.observer(i)))
	}
	waitMembers(t, 3, ws...)
	const n = 300
	notifyRows(t, dbs[0], "s", n)
	// Wait through the loader, whose reads are not logged.
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := dbs[0].Pending(bg)
		if err != nil {
			t.Fatal(err)
		}
		if p["in"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications left after 30 s", p["in"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkRuns(t, dbs[0], l, "s", n, false)
	shared, read := 0, 0
	for i := range n {
		row := fmt.Sprintf("s%03d", i)
		by := 0
		for _, sl := range logs {
			sl.mu.Lock()
			if sl.rows[row] > 0 {
				by++
			}
			read += sl.rows[row]
			sl.mu.Unlock()
		}
		if by > 1 {
			shared++
		}
	}
	if shared > n/20 {
		t.Errorf("%d of %d rows were read by the scans of more than one worker, want each by its owner's only", shared, n)
	}
	t.Logf("%d of %d rows read by more than one worker's scans; %d scan reads", shared, n, read)
}

// BenchmarkScanReads: 1 and 3 workers, each on a DB of its own, on one
// table of the Bigtable emulator, run the observer on 2,000 rows a loader
// notifies (100 transactions). It reports the notify index rows their
// scans read per notification, and the index reads (calls) per
// notification.
//
//	go test -run '^$' -bench ScanReads -benchtime 3x ./percolator/
func BenchmarkScanReads(b *testing.B) {
	for _, workers := range []int{1, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			benchScanReads(b, workers)
		})
	}
}

var scanReadTables atomic.Int64

func benchScanReads(b *testing.B, workers int) {
	emulator.Ensure(b)
	st, err := bigtable.Open(b.Context(), bigtable.Config{Project: "caffeine", Instance: "test", Table: fmt.Sprintf("scanreads%d", scanReadTables.Add(1))})
	if err != nil {
		b.Fatal(err)
	}
	opt := percolator.Options{Observed: []string{"in"}}
	dbs := shared(b, st, 1, opt)
	l := newRunLog()
	var ws []*percolator.Worker
	for i := 1; i <= workers; i++ {
		db, err := percolator.Open(bg, st, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		w, err := percolator.NewWorker(db, percolator.WorkerOptions{Workers: 4}, l.observer(i))
		if err != nil {
			b.Fatal(err)
		}
		w.Start()
		b.Cleanup(w.Close)
		ws = append(ws, w)
	}
	waitMembers(b, workers, ws...)
	const n = 2000
	var rows, reads int64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		rows0, reads0 := st.IndexRows(), st.Calls()["index ReadRows"]
		b.StartTimer()
		prefix := fmt.Sprintf("b%d/", i)
		notifyRows(b, dbs[0], prefix, n)
		// Done when every row ran: the loader's Pending would read the
		// index too.
		for {
			l.mu.Lock()
			done := 0
			for row := range l.byRow {
				if strings.HasPrefix(row, prefix) {
					done++
				}
			}
			l.mu.Unlock()
			if done == n {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.StopTimer()
		rows += st.IndexRows() - rows0
		reads += st.Calls()["index ReadRows"] - reads0
		// Let the last commits finish (not counted: Pending reads the
		// index too).
		for {
			p, err := dbs[0].Pending(bg)
			if err != nil {
				b.Fatal(err)
			}
			if p["in"] == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)/float64(b.N*n), "index-rows/notification")
	b.ReportMetric(float64(reads)/float64(b.N*n), "index-reads/notification")
}
