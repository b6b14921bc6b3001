package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

func printFailed(ctx context.Context, db *percolator.DB) error {
	failed, err := db.Failed(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OBSERVER\tROW\tCOLUMN\tATTEMPTS\tLAST\tERROR")
	for _, f := range failed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", f.Observer, f.Row, f.Column, f.Attempts, f.Last.Format(time.RFC3339), firstLine(f.Error))
	}
	return tw.Flush()
}

func retry(ctx context.Context, db *percolator.DB, observer, row string) error {
	failed, err := db.Failed(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, f := range failed {
		if (observer != "" && f.Observer != observer) || (row != "" && f.Row != row) {
			continue
		}
		if err := db.Retry(ctx, f); err != nil {
			return err
		}
		n++
	}
	fmt.Printf("%d failures queued for another run\n", n)
	return nil
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
