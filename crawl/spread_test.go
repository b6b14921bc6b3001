package crawl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestScanDueMergesBuckets: on a frontier of 16 buckets, scans of a few
// rows at a time, each from where the last ended (as the dispatcher
// reads), return every due row once, in due time order across the buckets,
// and the first due time after now; also on a shared store, where the
// buckets are first read with one multi-range read.
func TestScanDueMergesBuckets(t *testing.T) {
	for _, shared := range []bool{false, true} {
		for _, spread := range []int{1, 16} {
			for _, limit := range []int{1, 7, 64} {
				t.Run(fmt.Sprintf("shared %v, spread %d, limit %d", shared, spread, limit), func(t *testing.T) {
					scanDueMerges(t, shared, spread, limit)
				})
			}
		}
	}
}

func scanDueMerges(t *testing.T, shared bool, spread, limit int) {
	if n := testSpread(t); n > 1 && n != spread {
		t.Skipf("the tables have spread %d (CRAWL_TEST_SPREAD)", n)
	}
	ctx := context.Background()
	var tb *table
	if shared {
		st, err := badger.Open(t.TempDir(), badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tb = &table{t: t, db: percolatortest.OpenOn(t, percolatortest.Shared(st), percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})}
	} else {
		tb = openTable(t, "")
	}
	if n, err := webtable.InitSpread(ctx, tb.db, spread); err != nil || n != spread {
		t.Fatalf("InitSpread(%d) = %d, %v", spread, n, err)
	}
	rng := rand.New(rand.NewPCG(46, uint64(limit)))
	now := time.Now().UnixMilli()
	var want []string // "ms row" of the rows due, in due order
	var next int64
	err := tb.db.Update(ctx, func(tx *percolator.Tx) error {
		want, next = want[:0], 0
		for i := range 200 {
			row := fmt.Sprintf("test.example:http/p%03d", i)
			ms := now - 50_000 + int64(rng.IntN(60_000)) // a sixth not due yet
			if rng.IntN(5) == 0 {
				ms = now - 20_000 // rows due at the same time
			}
			tx.Set(row, webtable.Due, itoa(ms))
			tx.Set(webtable.SpreadDueRow(spread, ms, row), webtable.DuePage, []byte(row))
			if ms <= now {
				want = append(want, webtable.DueRow(ms, row))
			} else if next == 0 || ms < next {
				next = ms
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	c, err := New(tb.db, testOptions("http://test.example/"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	cursor := webtable.DuePrefix
	for scans := 0; ; scans++ {
		batch, after, more, err := c.scanDue(ctx, cursor, now, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) > limit || scans > 1000 {
			t.Fatalf("scan %d: %d rows, limit %d", scans, len(batch), limit)
		}
		for _, cd := range batch {
			if cd.key != webtable.SpreadDueRow(spread, cd.due, cd.row) || cd.pos != webtable.DueRow(cd.due, cd.row) {
				t.Fatalf("candidate %+v", cd)
			}
			got = append(got, cd.pos)
		}
		if len(batch) > 0 {
			cursor = batch[len(batch)-1].pos + "\x00"
		}
		if !more {
			if after != next {
				t.Errorf("next due %d, want %d", after, next)
			}
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("scans read %d rows, want %d in due order:\n got %.10q...\nwant %.10q...", len(got), len(want), got, want)
	}
}
