package bigtable_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
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
