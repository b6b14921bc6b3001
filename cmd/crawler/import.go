package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/termline"
)

func init() { commands["import"] = runImport }

// runImport is "crawler import -data DIR|-table URL FILE.warc[.gz]...": it loads
// the WARC files' responses as the crawler's loader would (see
// crawl.Importer), in the order given. A file that stops being readable
// is reported with where it stopped, and the next file is read; the exit
// code is then 1.
func runImport(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawler import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		data    = fs.String("data", "", dataUsage)
		tf      = tableFlags(fs)
		maxBody = fs.Int64("max-body", 10<<20, "body size `bytes` kept; longer bodies are cut and marked truncated")
		verbose = fs.Bool("v", false, "log every record skipped or malformed")
		quiet   = fs.Bool("q", false, "no progress line, log only warnings")
		mem     = budget.Flag(fs)
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler import -data DIR FILE.warc[.gz]...")
		fmt.Fprintln(stderr, "       crawler import -table bigtable://PROJECT/INSTANCE/TABLE [-app-profile ID] FILE.warc[.gz]...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if !checkTable(fs, tf, *data) {
		return 2
	}
	log, logw, tty := newLogger(stderr, *verbose, *quiet)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mem.Apply(ctx)
	tb, err := openTable(ctx, tf, *data, mem, log)
	if err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 1
	}
	defer tb.Close()
	im, err := crawl.NewImporter(ctx, tb.db, crawl.Options{MaxBodySize: *maxBody, Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "crawler:", err)
		return 1
	}

	start := time.Now()
	progressCtx, stopProgress := context.WithCancel(ctx)
	progressDone := make(chan struct{})
	if tty {
		go importProgress(progressCtx, im, start, logw, progressDone)
	} else {
		close(progressDone)
	}
	// A full disk or a broken store stops the import with its error.
	wctx, unwatch := tb.watch(ctx)
	code := 0
	for _, f := range fs.Args() {
		err := im.ImportFile(wctx, f)
		var ie *crawl.ImportError
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			code = 130
		case errors.As(err, &ie):
			fmt.Fprintln(logw, "crawler: import:", err)
			code = 1
			continue
		default:
			fmt.Fprintf(logw, "crawler: import %s: %v\n", f, err)
			code = 1
			continue
		}
		if code == 130 {
			break
		}
	}
	herr := unwatch()
	stopProgress()
	<-progressDone
	s := im.Stats()
	elapsed := time.Since(start)
	fmt.Fprintf(stderr, "crawler: import: %s in %v, %.1f records/s\n", s.Summary(), elapsed.Round(time.Millisecond), float64(s.Records)/elapsed.Seconds())
	switch {
	case herr != nil:
		fmt.Fprintln(stderr, "crawler: import stopped:", herr)
		return 1
	case code == 130:
		fmt.Fprintln(stderr, "crawler: interrupted; what was read is loaded")
	}
	return code
}

// importProgress redraws one status line on the terminal every 250ms.
func importProgress(ctx context.Context, im *crawl.Importer, start time.Time, w *termline.Writer, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			w.Status("")
			return
		case <-t.C:
			s := im.Stats()
			var skipped int64
			for _, n := range s.Skipped {
				skipped += n
			}
			w.Status(fmt.Sprintf("%s  byte %s  %d records  %.1f/s  %d loaded  %d skipped  %d malformed",
				filepath.Base(s.File), bytesString(s.Offset), s.Records, float64(s.Records)/time.Since(start).Seconds(), s.Loaded, skipped, s.Malformed))
		}
	}
}
