// Command indexer runs the indexing chain over a table, and inspects it.
//
//	indexer scan -data DIR [-start ROW] [-end ROW]   print raw cells (data, lock, write, notify)
//	indexer gc -data DIR [-grace DURATION]           collect old versions, print what it did
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "indexer:", err)
		os.Exit(1)
	}
}

func usage() error {
	return fmt.Errorf("usage: indexer scan|gc -data DIR [flags]")
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usage()
	}
	fs := flag.NewFlagSet("indexer "+args[0], flag.ContinueOnError)
	data := fs.String("data", "", "table directory (embedded Badger)")
	start := fs.String("start", "", "scan: first row")
	end := fs.String("end", "", "scan: end row (exclusive); empty for the end of the table")
	grace := fs.Duration("grace", time.Minute, "gc: keep versions younger than this")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *data == "" {
		return fmt.Errorf("-data is required")
	}
	st, err := badger.Open(*data, badger.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	db, err := percolator.Open(ctx, st, percolator.Options{GCGrace: *grace})
	if err != nil {
		return err
	}
	defer db.Close()

	switch args[0] {
	case "scan":
		return db.Dump(ctx, os.Stdout, *start, *end)
	case "gc":
		s, err := db.GC(ctx)
		if err != nil {
			return err
		}
		lsm, vlog := st.Size()
		fmt.Printf("safe point %d (%s): %d columns collected in %s; lsm %d KB, vlog %d KB\n",
			s.SafePoint, percolator.TimeFromTs(s.SafePoint).Format(time.RFC3339), s.Cells, s.Duration.Round(time.Millisecond), lsm>>10, vlog>>10)
		return nil
	}
	return usage()
}
