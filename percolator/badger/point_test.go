package badger_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// pointRead is Percolator's point read of (row, col) at ts: its locks and
// its newest write record.
func pointRead(s *badger.Store, dst []percolator.Cell, row, col string, ts uint64, buf []byte) ([]percolator.Cell, []byte, error) {
	return s.ReadPoint(context.Background(), dst, row, []percolator.Filter{
		{Family: "l", Column: col, MaxTs: ts},
		{Family: "w", Column: col, MaxTs: ts, Latest: true},
	}, buf)
}

// ReadPoint builds its key in the caller's buffer, which it hands back
// (grown when it had to) and may be reused: old keys in it, short or long,
// change nothing read.
func TestReadPointBuffer(t *testing.T) {
	s := open(t, "", badger.Options{})
	rows := []string{"a", strings.Repeat("long\x00row", 40), "b", "\x00\x00", "c"}
	for i, r := range rows {
		mutate(t, s, r, set("w", "c", uint64(10+i), "v"+r))
	}
	buf := []byte("junk")
	var dst []percolator.Cell
	for round := range 3 { // the second round reads through what the first cached
		for i, r := range rows {
			var err error
			dst, buf, err = pointRead(s, dst[:0], r, "c", percolator.MaxTs, buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(dst) != 1 || string(dst[0].Value) != "v"+r || dst[0].Ts != uint64(10+i) {
				t.Fatalf("round %d: read %q: %v", round, r, dst)
			}
			if _, ok := s.CachedVersion(r, "w", "c"); !ok && round > 0 {
				t.Fatalf("round %d: %q not cached", round, r)
			}
		}
	}
	if cap(buf) < len(rows[1]) {
		t.Fatalf("the buffer did not grow to the long row's key: cap %d", cap(buf))
	}
}

// Percolator's point reads of a column that writers keep locking and
// committing (a lock at the start timestamp, then, once the commit
// timestamp is taken, the write record with the lock's deletion in one
// write) while the cache holds the column's newest version. A read at ts
// sees a lock, or else the write record of the newest commit at or below
// ts, with its own value: a read that missed the lock of a commit it
// should see would find the write record before it.
func TestReadPointConcurrent(t *testing.T) {
	s := open(t, "", badger.Options{})
	const writers, readers, commits = 2, 3, 300
	var (
		mu      sync.Mutex // one writer at a time, as Percolator's conflicts see to
		clockMu sync.Mutex // guards clock and taken
		clock   uint64
		taken   []uint64 // commit timestamps taken, increasing
	)
	tick := func(commit bool) uint64 {
		clockMu.Lock()
		defer clockMu.Unlock()
		clock++
		if commit {
			taken = append(taken, clock)
		}
		return clock
	}
	// newest returns ts and the newest commit timestamp at or below it
	// (taken before it, so already in taken).
	now := func() (ts, newest uint64) {
		clockMu.Lock()
		defer clockMu.Unlock()
		if len(taken) > 0 {
			newest = taken[len(taken)-1]
		}
		return clock, newest
	}
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range commits {
				mu.Lock()
				start := tick(false)
				mutate(t, s, "r", set("l", "c", start, "lock"))
				commit := tick(true)
				mutate(t, s, "r", set("w", "c", commit, fmt.Sprint(commit)), del("l", "c", start))
				mu.Unlock()
			}
		})
	}
	errs := make(chan error, readers)
	for range readers {
		wg.Go(func() {
			var dst []percolator.Cell
			var buf []byte
			var err error
			for range 4 * commits {
				ts, newest := now()
				if ts == 0 {
					continue // MaxTs 0 is no bound: a read of the newest
				}
				if dst, buf, err = pointRead(s, dst[:0], "r", "c", ts, buf); err != nil {
					errs <- err
					return
				}
				var lock, write *percolator.Cell
				for i := range dst {
					switch dst[i].Family {
					case "l":
						lock = &dst[i]
					case "w":
						write = &dst[i]
					}
				}
				switch {
				case lock != nil:
				case write == nil && newest > 0:
					errs <- fmt.Errorf("read at %d: no lock and no write record, newest commit %d", ts, newest)
					return
				case write != nil && (write.Ts != newest || string(write.Value) != fmt.Sprint(write.Ts)):
					errs <- fmt.Errorf("read at %d: no lock and write record %q@%d, newest commit %d", ts, write.Value, write.Ts, newest)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
