// Command crawler crawls from seed URLs into the web table: every fetched
// page goes in through a loader transaction that notifies the indexing
// observers. See package crawl for what it does and docs/ARCHITECTURE.md
// for the table layout.
//
//	crawler -data DIR -seeds URL[,URL...] [-once] [flags]
//	crawler import -data DIR FILE.warc[.gz]...
//	crawler recrawl -data DIR URL... | -host HOST
//
// -data DIR is the embedded Badger table in DIR; -table
// bigtable://PROJECT/INSTANCE/TABLE [-app-profile ID] names a Cloud
// Bigtable table instead (BIGTABLE_EMULATOR_HOST for the emulator). Every
// subcommand takes one of the two.
//
// Exit codes: 0 done, 1 failure, 2 bad usage, 130 interrupted (the crawl
// stopped cleanly; run again to resume).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/termline"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// commands are the subcommands; without one, crawler crawls.
var commands = map[string]func(args []string, stderr io.Writer) int{}

func run(args []string, stderr io.Writer) int {
	if len(args) > 0 {
		if cmd, ok := commands[args[0]]; ok {
			return cmd(args[1:], stderr)
		}
	}
	return runCrawl(args, stderr)
}

func runCrawl(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	crawlOptions := crawl.Flags(fs)
	var (
		data    = fs.String("data", "", dataUsage)
		tf      = tableFlags(fs)
		verbose = fs.Bool("v", false, "log every page")
		quiet   = fs.Bool("q", false, "no progress line, log only warnings")
		mem     = budget.Flag(fs)
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler -data DIR -seeds URL[,URL...] [flags]")
		fmt.Fprintln(stderr, "       crawler -table bigtable://PROJECT/INSTANCE/TABLE [-app-profile ID] -seeds URL[,URL...] [flags]")
		fmt.Fprintln(stderr, "subcommands: import, recrawl (crawler SUBCOMMAND -h)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if !checkTable(fs, tf, *data) {
		return 2
	}
	opt, err := crawlOptions()
	if err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 2
	}
	log, logw, tty := newLogger(stderr, *verbose, *quiet)

	opt.Logger = log
	if *data != "" {
		// crawler recrawl's requests while this runs; on Bigtable it
		// writes them into the table, which the crawler reads.
		opt.RecrawlDir = spoolDir(*data)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second signal does not wait for the fetches under way.
		<-ctx.Done()
		stop()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		fmt.Fprintln(stderr, "\ncrawler: interrupted twice, exiting now")
		os.Exit(130)
	}()

	mem.Apply(ctx, *data)
	tb, err := openTable(ctx, tf, *data, mem, log)
	if err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 1
	}
	defer tb.Close()
	c, err := crawl.New(tb.db, opt)
	if err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 2
	}

	progressDone := make(chan struct{})
	if tty {
		go progress(ctx, c, logw, progressDone)
	} else {
		close(progressDone)
	}
	// A full disk or a broken store stops the crawl with its error.
	wctx, unwatch := tb.watch(ctx)
	err = c.Run(wctx)
	if herr := unwatch(); herr != nil {
		err = herr
	}
	stop()
	<-progressDone
	s := c.Stats()
	fmt.Fprintf(stderr, "crawler: %d pages (%d errors, %d not modified) in %v, %.1f pages/s, %s; %d discovered, %d due, %v late on average\n",
		s.Fetched, s.Errors, s.NotModified, s.Elapsed.Round(time.Millisecond), s.Rate(), bytesString(s.Bytes), s.Discovered, s.Queue, s.MeanLate().Round(time.Millisecond))
	if opt.WARCDir != "" {
		fmt.Fprintf(stderr, "crawler: %d WARC records written to %s, %d fetches not archived\n", s.WARCRecords, opt.WARCDir, s.WARCDropped)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "crawler: interrupted; run again to resume")
		return 130
	default:
		fmt.Fprintln(stderr, "crawler:", err)
		return 1
	}
}

// progress redraws one status line on the terminal every 250ms.
func progress(ctx context.Context, c *crawl.Crawler, w *termline.Writer, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			w.Status("")
			return
		case <-t.C:
			s := c.Stats()
			w.Status(fmt.Sprintf("%d pages  %.1f/s  %d errors  %d in flight  %d due  %v late  %s",
				s.Fetched, s.Rate(), s.Errors, s.InFlight, s.Queue, s.MeanLate().Round(time.Millisecond), bytesString(s.Bytes)))
		}
	}
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
