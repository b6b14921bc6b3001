// Command indexer runs the observer worker over a table, and inspects it.
//
//	indexer -data DIR [-until-idle] [-scanners N] [-workers N] [-background N] [-metrics ADDR]
//	    run the observers; with -until-idle exit once nothing is left to do
//	indexer -data DIR -batch
//	    recompute everything from the raw pages with full scans (the MapReduce way)
//	indexer -data DIR -verify
//	    compare the incremental result with a batch recomputation; exit 0 when
//	    they agree, 1 with a summary of the differences
//	indexer scan -data DIR [-start ROW] [-end ROW]
//	    print raw cells: data, locks, write records, notifications
//	indexer pending -data DIR     pending notifications per column and observer
//	indexer failed -data DIR      parked observer failures
//	indexer retry -data DIR [-observer NAME] [-row ROW]
//	    re-run parked failures (all, or those matching)
//	indexer gc -data DIR [-grace DURATION]
//	    collect old versions and print what it did
//	indexer rank-init -data DIR
//	    once, on a table indexed before PageRank was kept per host block:
//	    build the blocks from the pages (rank.Init)
//
// -data DIR is the embedded Badger table in DIR; every command takes
// -table bigtable://PROJECT/INSTANCE/TABLE [-app-profile ID] instead, a
// Cloud Bigtable table (BIGTABLE_EMULATOR_HOST for the emulator).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storeflag"
	"github.com/caffeine-go/caffeine/webtable"
)

// chain returns the observers this binary runs. They are constructed
// explicitly, in observers.Chain, which lists them in the order data flows
// (section 2.4 of the paper: observers are linked into the binary, not
// discovered); cmd/search runs the same list.
func chain() []percolator.Observer { return observers.Chain() }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "indexer:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) (err error) {
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if cmd == "oracle" {
		return runOracle(ctx, args)
	}
	fs := flag.NewFlagSet("indexer "+cmd, flag.ContinueOnError)
	data := fs.String("data", "", "table `directory` (embedded Badger); this or -table")
	var tf storeflag.Flags
	tf.Register(fs)
	untilIdle := fs.Bool("until-idle", false, "run: exit when no notification is left")
	scanners := fs.Int("scanners", 2, "run: notification scanner goroutines")
	workers := fs.Int("workers", 16, "run: observer transactions at once")
	background := fs.Int("background", 0, "run: background observer transactions at once, besides -workers (0: workers/8 on Badger, workers/2 on Bigtable)")
	metricsAddr := fs.String("metrics", "", "run: serve Prometheus metrics on this address (e.g. 127.0.0.1:9100)")
	start := fs.String("start", "", "scan: first row")
	end := fs.String("end", "", "scan: end row (exclusive); empty for the end of the table")
	observer := fs.String("observer", "", "retry: only failures of this observer")
	row := fs.String("row", "", "retry: only failures on this row")
	grace := fs.Duration("grace", time.Minute, "gc: keep versions younger than this")
	batch := fs.Bool("batch", false, "recompute everything from the raw pages with full scans and print a summary")
	verify := fs.Bool("verify", false, "compare the incremental result with a batch recomputation")
	mem := budget.Flag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: the command comes first (indexer %s -data DIR)", fs.Arg(0), fs.Arg(0))
	}
	if err := tf.Check(*data); err != nil {
		return err
	}

	obs := chain()
	mem.Apply(ctx, *data)
	st, err := tf.OpenStore(ctx, *data, badger.Options{CacheBytes: mem.TableBytes()})
	if err != nil {
		return err
	}
	defer st.Close()
	// A full disk or a broken store ends the work with its error.
	ctx, unwatch := badger.Watch(ctx, st)
	defer func() {
		if herr := unwatch(); herr != nil {
			err = herr
		}
	}()
	db, err := percolator.Open(ctx, st, percolator.Options{GCGrace: *grace, Observed: webtable.Observed, Weak: webtable.Weak, Logger: slog.Default()})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := webtable.Spread(ctx, db); err != nil {
		return err
	}

	switch {
	case cmd == "run" && *verify:
		return runVerify(ctx, db)
	case cmd == "run" && *batch:
		return runBatch(ctx, db)
	}
	switch cmd {
	case "run":
		return runWorker(ctx, db, obs, percolator.WorkerOptions{Scanners: *scanners, Workers: *workers, Background: *background}, *untilIdle, *metricsAddr)
	case "scan":
		return db.Dump(ctx, os.Stdout, *start, *end)
	case "pending":
		return printPending(ctx, db, obs)
	case "failed":
		return printFailed(ctx, db)
	case "retry":
		return retry(ctx, db, *observer, *row)
	case "rank-init":
		return rankInit(ctx, db)
	case "gc":
		return runGC(ctx, db, st)
	}
	return fmt.Errorf("unknown command %q (run, scan, pending, failed, retry, gc, rank-init)", cmd)
}
