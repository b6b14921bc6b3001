package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/caffeine-go/caffeine/percolator"
)

func printPending(ctx context.Context, db *percolator.DB, obs []percolator.Observer) error {
	counts, err := db.Pending(ctx)
	if err != nil {
		return err
	}
	byCol := make(map[string]string)
	for _, o := range obs {
		byCol[o.Column] = o.Name
	}
	cols := make([]string, 0, len(counts))
	for c := range counts {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COLUMN\tOBSERVER\tPENDING")
	for _, c := range cols {
		name := byCol[c]
		if name == "" {
			name = "(none in this binary)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\n", c, name, counts[c])
	}
	return tw.Flush()
}
