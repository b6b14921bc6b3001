package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
)

func init() { commands["recrawl"] = runRecrawl }

// spoolDir is where, under a table's directory, recrawl requests wait for
// the process that holds the table.
func spoolDir(data string) string { return filepath.Join(data, "recrawl") }

// runRecrawl makes pages due now: directly in the table when no process
// holds it, or through the spool of the process that does (a running
// crawler or search), which applies it within a second. A Bigtable table
// (-table) is never held: many processes open it at once, so the request
// is always written into it, and running crawlers see the pages due at
// their next pass over the frontier (a second or so).
func runRecrawl(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawler recrawl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		data = fs.String("data", "", dataUsage)
		tf   = tableFlags(fs)
		host = fs.String("host", "", "make every page of `HOST` due (HOST:PORT for one port only)")
		wait = fs.Duration("wait", 5*time.Second, "-data: when a running process holds the table, how long to wait for it to take the request (0: don't)")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler recrawl -data DIR | -table bigtable://PROJECT/INSTANCE/TABLE URL...")
		fmt.Fprintln(stderr, "       crawler recrawl -data DIR | -table bigtable://PROJECT/INSTANCE/TABLE -host HOST[:PORT]")
		fmt.Fprintln(stderr, "Makes pages due now. When a crawler or search holds DIR, the request is queued in DIR/recrawl/ and that process applies it.")
		fmt.Fprintln(stderr, "A -table is never held (many processes share it): the request is written into it, and running crawlers fetch the pages at their next pass.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	req := crawl.RecrawlRequest{URLs: fs.Args(), Host: *host}
	if len(req.URLs) == 0 && req.Host == "" {
		fs.Usage()
		return 2
	}
	if !checkTable(fs, tf, *data) {
		return 2
	}
	if err := req.Check(); err != nil {
		fmt.Fprintln(stderr, "crawler recrawl:", err)
		return 2
	}
	if *data != "" {
		if fi, err := os.Stat(*data); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "crawler recrawl: no table in %s\n", *data)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if tf.Set() {
		// Opening would create it.
		if ok, err := tf.Exists(ctx); err != nil {
			fmt.Fprintln(stderr, "crawler recrawl:", err)
			return 1
		} else if !ok {
			fmt.Fprintf(stderr, "crawler recrawl: no table %s\n", tf.Table)
			return 1
		}
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tb, err := openTable(ctx, tf, *data, nil, log)
	if err != nil {
		if tf.Set() || !locked(err) {
			fmt.Fprintln(stderr, "crawler recrawl:", err)
			return 1
		}
		return queue(ctx, *data, req, *wait, stderr)
	}
	defer tb.Close()
	db := tb.db

	if *data != "" {
		// Requests queued for a process that ended before it took them.
		queued, err := crawl.ApplySpool(ctx, db, spoolDir(*data), log)
		if err != nil {
			fmt.Fprintln(stderr, "crawler recrawl:", err)
			return 1
		}
		if n := len(queued); n > 0 {
			moved := 0
			for _, r := range queued {
				moved += r.Moved
			}
			fmt.Fprintf(stderr, "crawler recrawl: applied %s left in %s (%s due now)\n", plural(n, "queued request"), spoolDir(*data), plural(moved, "page"))
		}
	}

	n, err := req.Apply(ctx, db)
	fmt.Fprintf(stderr, "crawler recrawl: %s due now; a crawler or search on %s fetches them\n", plural(n, "page"), tableName(tf, *data))
	if err != nil {
		fmt.Fprintln(stderr, "crawler recrawl:", err)
		return 1
	}
	return 0
}

// locked reports whether a Badger open failed because another process
// holds the directory's lock. Badger does not wrap the flock error, so
// its message is all there is.
func locked(err error) bool {
	return strings.Contains(err.Error(), "Another process is using this Badger database")
}

// queue hands req to the process holding the table through its spool and
// waits up to wait for it to be taken.
func queue(ctx context.Context, data string, req crawl.RecrawlRequest, wait time.Duration, stderr io.Writer) int {
	path, err := crawl.QueueRecrawl(spoolDir(data), req)
	if err != nil {
		fmt.Fprintln(stderr, "crawler recrawl:", err)
		return 1
	}
	fmt.Fprintf(stderr, "crawler recrawl: %s is in use by a running process; queued for it in %s\n", data, path)
	if wait <= 0 {
		return 0
	}
	end := time.Now().Add(wait)
	for time.Now().Before(end) && ctx.Err() == nil {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			o, err := crawl.ReadSpoolOutcome(path)
			switch {
			case err != nil:
				// A process that writes no outcome, or one read by
				// someone else.
				fmt.Fprintln(stderr, "crawler recrawl: the running process took the request; its log says how many pages are due (and names unknown URLs)")
				return 0
			case o.Malformed:
				fmt.Fprintln(stderr, "crawler recrawl: the running process refused the request:", o.Error)
				return 1
			}
			fmt.Fprintf(stderr, "crawler recrawl: the running process took the request: %s due now\n", plural(o.PagesDue, "page"))
			if o.Error != "" {
				fmt.Fprintln(stderr, "crawler recrawl:", o.Error)
				return 1
			}
			return 0
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	fmt.Fprintf(stderr, "crawler recrawl: not taken within %v: the process holding %s runs no crawler (indexer, search -no-crawl); the next crawler or search on %s applies it\n", wait, data, data)
	return 0
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
