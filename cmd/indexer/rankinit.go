package main

import (
	"context"
	"fmt"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
)

// rankInit builds the PageRank host blocks from the pages: indexer
// rank-init.
func rankInit(ctx context.Context, db *percolator.DB) error {
	n, err := rank.Init(ctx, db)
	if err != nil {
		return err
	}
	fmt.Printf("rank: %d pages brought into their blocks\n", n)
	return nil
}
