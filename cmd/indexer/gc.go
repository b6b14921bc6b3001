package main

import (
	"context"
	"fmt"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// runGC collects old versions and prints what it did: indexer gc.
func runGC(ctx context.Context, db *percolator.DB, st percolator.Store) error {
	s, err := db.GC(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("safe point %d (%s): %d columns collected in %s",
		s.SafePoint, percolator.TimeFromTs(s.SafePoint).Format(time.RFC3339), s.Cells, s.Duration.Round(time.Millisecond))
	if b, ok := st.(*badger.Store); ok {
		lsm, vlog := b.Size()
		fmt.Printf("; lsm %d KB, vlog %d KB", lsm>>10, vlog>>10)
	}
	fmt.Println()
	return nil
}
