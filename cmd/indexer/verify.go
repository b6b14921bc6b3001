package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
)

// runBatch recomputes everything from the raw pages with full scans and
// prints a summary: run -batch.
func runBatch(ctx context.Context, db *percolator.DB) error {
	b, err := observers.RunBatch(ctx, db)
	if err != nil {
		return err
	}
	fmt.Printf("batch: %d pages, %d in the link graph, %d documents, in %s\n", len(b.States), len(b.Rank), len(b.Docs), b.Took.Round(time.Millisecond))
	return nil
}

// errDiffer makes the exit status non-zero without a second message.
var errDiffer = errors.New("incremental and batch results differ")

func runVerify(ctx context.Context, db *percolator.DB) error {
	diffs, b, err := observers.Verify(ctx, db, 0.01, 50)
	if err != nil {
		return err
	}
	if len(diffs) == 0 {
		fmt.Printf("verify: incremental result agrees with the batch recomputation (%d pages, %d documents)\n", len(b.States), len(b.Docs))
		return nil
	}
	fmt.Printf("verify: %d differences (first %d):\n", len(diffs), min(len(diffs), 50))
	for _, d := range diffs {
		fmt.Println("  " + d)
	}
	return errDiffer
}
