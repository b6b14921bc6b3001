package bigtable_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

// BenchmarkOps measures the latency of each store call on the emulator,
// one call at a time, and reports p50 and p99 besides the mean:
//
//	go test -run '^$' -bench Ops -benchtime 2000x ./percolator/bigtable/
func BenchmarkOps(b *testing.B) {
	s := open(b)
	b.Cleanup(func() { s.Close() })
	ctx := b.Context()
	// Percolator's schema: the lock family is in a locality group of its
	// own (not indexed), the notify family in "notify" (indexed).
	fams := slices.Clone(storetest.Families)
	for i := range fams {
		if fams[i].Name == "l" {
			fams[i].LocalityGroup = "lock"
		}
	}
	if err := s.EnsureFamilies(ctx, fams); err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 100)
	seed := []percolator.RowMutation{}
	for i := range 100 {
		seed = append(seed, percolator.RowMutation{Row: fmt.Sprintf("r%03d", i), Mutations: []percolator.Mutation{
			{Op: percolator.SetCell, Family: "w", Column: "c", Ts: 10, Value: val},
			{Op: percolator.SetCell, Family: "d", Column: "c", Ts: 5, Value: val},
		}})
	}
	if err := s.MutateRows(ctx, seed); err != nil {
		b.Fatal(err)
	}
	ops := []struct {
		name string
		fn   func(i int) error
	}{
		{"ReadRow", func(i int) error {
			_, err := s.ReadRow(ctx, fmt.Sprintf("r%03d", i%100), percolator.Filter{Family: "l", KeysOnly: true}, percolator.Filter{Family: "w", Column: "c", MaxTs: 20, Latest: true})
			return err
		}},
		{"MutateRow", func(i int) error {
			return s.MutateRows(ctx, []percolator.RowMutation{{Row: fmt.Sprintf("m%03d", i%100), Mutations: []percolator.Mutation{
				{Op: percolator.SetCell, Family: "w", Column: "c", Ts: uint64(i + 1), Value: val},
				{Op: percolator.DeleteCell, Family: "l", Column: "c", Ts: uint64(i + 1)},
			}}})
		}},
		{"CheckAndMutateRow", func(i int) error {
			ts := uint64(i + 100)
			_, err := s.CheckAndMutateRow(ctx, fmt.Sprintf("c%03d", i%100),
				[]percolator.Filter{{Family: "l", Column: "c", KeysOnly: true}, {Family: "w", Column: "c", MinTs: ts, KeysOnly: true}},
				nil, []percolator.Mutation{{Op: percolator.SetCell, Family: "d", Column: "c", Ts: ts, Value: val}})
			return err
		}},
		// The prewrite of an observed column sets a lock and a
		// notification: the conditional mutation, then the notification's
		// group index cell.
		{"PrewriteNotify", func(i int) error {
			ts := uint64(i + 100)
			_, err := s.CheckAndMutateRow(ctx, fmt.Sprintf("c%03d", i%100),
				[]percolator.Filter{{Family: "w", Column: "c", MinTs: ts, KeysOnly: true}},
				nil, []percolator.Mutation{
					{Op: percolator.SetCell, Family: "l", Column: "c", Ts: ts, Value: val},
					{Op: percolator.SetCell, Family: "n", Column: "c", Ts: ts},
				})
			return err
		}},
		{"ReadModifyWriteRow", func(i int) error {
			_, err := s.Increment(ctx, "oracle", "m", "hw", 1)
			return err
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if err := op.fn(i); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
		})
	}
	// Throughput of conditional mutations from 32 goroutines on distinct rows.
	b.Run("CheckAndMutateRow32", func(b *testing.B) {
		var wg sync.WaitGroup
		per := max(b.N/32, 1)
		start := time.Now()
		for g := range 32 {
			wg.Go(func() {
				for i := range per {
					ts := uint64(i + 100)
					row := fmt.Sprintf("p%02d/%d", g, i%10)
					if _, err := s.CheckAndMutateRow(ctx, row, []percolator.Filter{{Family: "l", Column: "c", KeysOnly: true}},
						nil, []percolator.Mutation{{Op: percolator.SetCell, Family: "d", Column: "c", Ts: ts, Value: val}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(32*per)/time.Since(start).Seconds(), "ops/s")
	})
}

// BenchmarkFigure8 is the paper's Figure 8 on the emulator: the latency
// of a raw point read (ReadRow) against a Percolator transaction that
// reads one cell, and of a raw single-cell write (MutateRow) against a
// transaction that writes one cell, one operation at a time. As in the
// Badger benchmark, blocks of each side alternate raw, txn, txn, raw, and
// the medians over b.N rounds are reported:
//
//	go test -run '^$' -bench Figure8 -benchtime 5x ./percolator/bigtable/
func BenchmarkFigure8(b *testing.B) {
	const keys, block = 2000, 200
	ctx := b.Context()
	s := open(b)
	db, err := percolator.Open(ctx, s, percolator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close(); s.Close() })
	val := make([]byte, 64)
	rawRow := func(i int) string { return fmt.Sprintf("raw/%06d", i) }
	txnRow := func(i int) string { return fmt.Sprintf("row/%06d", i) }
	var seed []percolator.RowMutation
	for i := range keys {
		seed = append(seed, percolator.RowMutation{Row: rawRow(i), Mutations: []percolator.Mutation{
			{Op: percolator.SetCell, Family: "d", Column: "c", Ts: 1, Value: val}}})
	}
	if err := s.MutateRows(ctx, seed); err != nil {
		b.Fatal(err)
	}
	for base := 0; base < keys; base += 500 {
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			for i := base; i < base+500; i++ {
				tx.Set(txnRow(i), "c", val)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	var version atomic.Uint64
	version.Store(1)
	ops := map[string]func(i int) error{
		"raw_read": func(i int) error {
			_, err := s.ReadRow(ctx, rawRow(i), percolator.Filter{Family: "d", Column: "c", Latest: true})
			return err
		},
		"txn_read": func(i int) error {
			return db.View(ctx, func(tx *percolator.Tx) error {
				v, err := tx.Get(ctx, txnRow(i), "c")
				if v == nil && err == nil {
					err = fmt.Errorf("missing %s", txnRow(i))
				}
				return err
			})
		},
		"raw_write": func(i int) error {
			return s.MutateRows(ctx, []percolator.RowMutation{{Row: rawRow(i), Mutations: []percolator.Mutation{
				{Op: percolator.SetCell, Family: "d", Column: "c", Ts: version.Add(1), Value: val}}}})
		},
		"txn_write": func(i int) error {
			return db.Update(ctx, func(tx *percolator.Tx) error { return tx.Set(txnRow(i), "c", val) })
		},
	}
	timeBlock := func(op string, seed uint64) float64 {
		r := rand.New(rand.NewPCG(seed, seed))
		start := time.Now()
		for range block {
			if err := ops[op](r.IntN(keys)); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start).Microseconds()) / block
	}
	ratio := make(map[string][]float64)
	for i := range b.N {
		for _, kind := range []string{"read", "write"} {
			seed := uint64(2 * i)
			r := timeBlock("raw_"+kind, seed)
			t := timeBlock("txn_"+kind, seed)
			t += timeBlock("txn_"+kind, seed+1)
			r += timeBlock("raw_"+kind, seed+1)
			ratio[kind+"_ratio"] = append(ratio[kind+"_ratio"], r/t)
			ratio["raw_"+kind+"_us"] = append(ratio["raw_"+kind+"_us"], r/2)
			ratio["txn_"+kind+"_us"] = append(ratio["txn_"+kind+"_us"], t/2)
		}
	}
	for name, xs := range ratio {
		slices.Sort(xs)
		b.ReportMetric(xs[len(xs)/2], name)
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkOracleProcesses measures the shared oracle's timestamps a
// second with 1, 2 and 4 OS processes on one emulator table, each taking
// timestamps from 16 goroutines for 2 s. Every timestamp is an increment
// of the oracle row sent after it was asked for; a process batches the
// callers waiting into one increment.
//
//	go test -run '^$' -bench OracleProcesses -benchtime 1x ./percolator/bigtable/
func BenchmarkOracleProcesses(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("processes=%d", n), func(b *testing.B) {
			table := newTable(b)
			var kids []*child
			for range n {
				kids = append(kids, startChild(b, "oraclebench", table))
			}
			var total float64
			for range b.N {
				for _, c := range kids {
					fmt.Fprintln(c.in, "go")
				}
				for _, c := range kids {
					var got float64
					fmt.Sscan(c.line(b), &got)
					total += got
				}
			}
			b.ReportMetric(total/float64(b.N), "ts/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkWideRow measures, on a row of 1,000 and 4,000 columns in three
// families on the emulator, a point read (a lock and a write filter, as a
// transaction's Get makes) of one column and a prewrite whose predicate
// has two filters for each of 100 columns, sent as the store sends them
// there (see readFilter) and as interleaves; one-filter is the floor, a
// read of one family:
//
//	go test -run '^$' -bench WideRow ./percolator/bigtable/
func BenchmarkWideRow(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		s := open(b)
		b.Cleanup(func() { s.Close() })
		ctx := b.Context()
		if err := s.EnsureFamilies(ctx, storetest.Families); err != nil {
			b.Fatal(err)
		}
		var muts []percolator.Mutation
		for i := range n {
			col := fmt.Sprintf("g:http://example.com/docs/page%05d.html", i)
			muts = append(muts,
				percolator.Mutation{Op: percolator.SetCell, Family: "w", Column: col, Ts: 20, Value: []byte("record")},
				percolator.Mutation{Op: percolator.SetCell, Family: "d", Column: col, Ts: 10, Value: make([]byte, 600)},
				percolator.Mutation{Op: percolator.SetCell, Family: "l", Column: col, Ts: 30, Value: []byte("lock")})
			if len(muts) >= 3000 {
				if err := s.MutateRows(ctx, []percolator.RowMutation{{Row: "block", Mutations: muts}}); err != nil {
					b.Fatal(err)
				}
				muts = nil
			}
		}
		if err := s.MutateRows(ctx, []percolator.RowMutation{{Row: "block", Mutations: muts}}); err != nil {
			b.Fatal(err)
		}
		col := fmt.Sprintf("g:http://example.com/docs/page%05d.html", n/2)
		read := func(b *testing.B) {
			for b.Loop() {
				cs, err := s.ReadRow(ctx, "block",
					percolator.Filter{Family: "l", Column: col, MaxTs: 25},
					percolator.Filter{Family: "w", Column: col, MaxTs: 25, Latest: true})
				if err != nil || len(cs) != 1 {
					b.Fatalf("read: %v, %v", cs, err)
				}
			}
		}
		// Each sub-benchmark sets the way it measures, so that any one
		// of them may run alone.
		as := func(interleave bool, f func(*testing.B)) func(*testing.B) {
			return func(b *testing.B) {
				bigtable.SetInterleave(s, interleave)
				f(b)
			}
		}
		b.Run(fmt.Sprintf("columns=%d/one-filter", n), func(b *testing.B) {
			for b.Loop() {
				cs, err := s.ReadRow(ctx, "block", percolator.Filter{Family: "w", Column: col, MaxTs: 25, Latest: true})
				if err != nil || len(cs) != 1 {
					b.Fatalf("read: %v, %v", cs, err)
				}
			}
		})
		// A prewrite that deletes 100 of the row's cells: its predicate
		// has a lock and a write filter for each.
		var pred []percolator.Filter
		for i := range 100 {
			c := fmt.Sprintf("g:http://example.com/docs/page%05d.html", i*7)
			pred = append(pred,
				percolator.Filter{Family: "l", Column: c, MaxTs: 25, KeysOnly: true},
				percolator.Filter{Family: "w", Column: c, MinTs: 40, Latest: true, KeysOnly: true})
		}
		prewrite := func(b *testing.B) {
			set := []percolator.Mutation{{Op: percolator.SetCell, Family: "l", Column: "x", Ts: 35, Value: []byte("lock")}}
			for b.Loop() {
				matched, err := s.CheckAndMutateRow(ctx, "block", pred, nil, set)
				if err != nil || matched {
					b.Fatalf("prewrite: %v, %v", matched, err)
				}
			}
		}
		b.Run(fmt.Sprintf("columns=%d/superset", n), as(false, read))
		b.Run(fmt.Sprintf("columns=%d/prewrite-conditions", n), as(false, prewrite))
		b.Run(fmt.Sprintf("columns=%d/interleave", n), as(true, read))
		b.Run(fmt.Sprintf("columns=%d/prewrite-interleave", n), as(true, prewrite))
	}
}
