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
	"net/http"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/httpserver"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/promstats"
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

	switch {
	case cmd == "run" && *verify:
		return runVerify(ctx, db)
	case cmd == "run" && *batch:
		b, err := observers.RunBatch(ctx, db)
		if err != nil {
			return err
		}
		fmt.Printf("batch: %d pages, %d in the link graph, %d documents, in %s\n", len(b.States), len(b.Rank), len(b.Docs), b.Took.Round(time.Millisecond))
		return nil
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
		n, err := rank.Init(ctx, db)
		if err != nil {
			return err
		}
		fmt.Printf("rank: %d pages brought into their blocks\n", n)
		return nil
	case "gc":
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
	return fmt.Errorf("unknown command %q (run, scan, pending, failed, retry, gc, rank-init)", cmd)
}

func runWorker(ctx context.Context, db *percolator.DB, obs []percolator.Observer, opt percolator.WorkerOptions, untilIdle bool, metricsAddr string) error {
	m := promstats.NewMetrics()
	if metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(m)
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := httpserver.New(mux, httpserver.Options{})
		go func() {
			if err := srv.ListenAndServe(metricsAddr); err != nil && !errors.Is(err, http.ErrServerClosed) {
				slog.Error("metrics server", "err", err)
			}
		}()
		defer srv.Close()
	}
	opt.Metrics = m
	w, err := percolator.NewWorker(db, opt, obs...)
	if err != nil {
		return err
	}
	began := time.Now()
	w.Start()
	defer w.Close()
	stopProgress := logProgress(w, progressEvery)
	if untilIdle {
		err = w.WaitIdle(ctx)
	} else {
		<-ctx.Done()
	}
	stopProgress()
	if err != nil {
		return err
	}
	for _, s := range w.Stats() {
		slog.Info("observer", "name", s.Name, "runs", s.Runs, "commits", s.Commits, "conflicts", s.Conflicts, "failures", s.Failures, "parked", s.Parked)
	}
	slog.Info("indexer stopped", "after", time.Since(began).Round(time.Millisecond), "observers", len(obs))
	storeflag.LogCalls(slog.Default(), db.Store())
	return nil
}

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

// progressEvery is how often a running indexer logs what it did and what
// is pending.
const progressEvery = 30 * time.Second

// logProgress logs, every period until the returned stop is called, the
// runs, commits and conflicts of the worker's observers since the last
// line and the notifications its last full scan found pending, by
// observer.
func logProgress(w *percolator.Worker, period time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		var last percolator.ObserverStats // totals at the last line
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var now percolator.ObserverStats
			pending := make([]any, 0, 8)
			for _, s := range w.Stats() {
				now.Runs, now.Commits, now.Conflicts = now.Runs+s.Runs, now.Commits+s.Commits, now.Conflicts+s.Conflicts
				if s.Pending > 0 {
					pending = append(pending, s.Name, s.Pending)
				}
			}
			slog.Info("indexer progress", "runs", now.Runs-last.Runs, "commits", now.Commits-last.Commits,
				"conflicts", now.Conflicts-last.Conflicts, slog.Group("pending", pending...))
			last = now
		}
	}()
	return func() { close(done); <-finished }
}
