// Command freshness measures how fresh a search deployment keeps its index
// (see package freshness and docs/freshness.md).
//
// Measure a running deployment (cmd/search's JSON API): sample indexed
// documents, refetch the live pages politely, compare content hashes,
// report freshness, estimated age and crawl→searchable latency, with a
// legend of what each row measures (progress goes to stderr: a status line
// on a terminal, log lines otherwise):
//
//	freshness -server http://127.0.0.1:8080 [-sample N] [-queries FILE] [-json] [-plot out.svg]
//
// Serve the changing-web fixture, writing its change log on exit:
//
//	freshness -web 127.0.0.1:8000 [-pages N] [-log changes.jsonl]
//
// Compare incremental and batch indexing on the fixture:
//
//	freshness -experiment [-pages 2000] [-duration 60s]
//
// Measuring reads the deployment's JSON API only, whatever its table; the
// experiment runs its own deployments, each on a fresh embedded Badger
// table, so freshness takes no -table.
//
// Exit codes: 0 done, 1 failure, 2 bad usage, 130 interrupted.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/freshness/changingweb"
	"github.com/caffeine-go/caffeine/freshness/figure"
	"github.com/caffeine-go/caffeine/internal/httpserver"
	"github.com/caffeine-go/caffeine/internal/termline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a bad command line: exit code 2.
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("freshness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		// Measurement.
		server    = fs.String("server", "http://127.0.0.1:8080", "deployment `URL` (its JSON API)")
		sample    = fs.Int("sample", 100, "documents to check")
		queries   = fs.String("queries", "", "`file` of queries, one a line, whose results are sampled (default: common words)")
		perQuery  = fs.Int("per-query", 1000, "results read per query")
		asJSON    = fs.Bool("json", false, "print the report as JSON")
		plotPath  = fs.String("plot", "", "write figures to `file` (.svg, .png, .jpg, .pdf)")
		delay     = fs.Duration("delay", time.Second, "least time between two live fetches from one host (robots.txt Crawl-delay wins if larger)")
		userAgent = fs.String("user-agent", freshness.DefaultProbeAgent, "User-Agent of live fetches")
		timeout   = fs.Duration("timeout", 30*time.Second, "per request")
		truthPath = fs.String("truth", "", "change log `file` (JSON lines of {time,url}) for exact ages, as -web -log writes")
		seed      = fs.Int64("seed", 1, "random seed (sampling; fixture)")
		verbose   = fs.Bool("v", false, "log every document")

		// The fixture.
		webAddr = fs.String("web", "", "serve the changing-web fixture on `addr` instead of measuring")
		logPath = fs.String("log", "", "with -web: write the change log to `file` on exit")
		sitemap = fs.Bool("sitemap", false, "with -web: serve a sitemap")

		// The experiment.
		experiment = fs.Bool("experiment", false, "run the incremental vs batch experiment on the fixture")
		duration   = fs.Duration("duration", 60*time.Second, "with -experiment: measured time per mode")
		dataDir    = fs.String("data", "", "with -experiment: working `directory` (default a temporary one); every mode's table is a fresh embedded Badger one in it (the experiment takes no -table)")
	)
	wopt := webFlags(fs)
	xopt := experimentFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: freshness [-server URL] [-sample N] [-queries FILE] [-json] [-plot FILE]")
		fmt.Fprintln(stderr, "       freshness -web ADDR [-pages N] [-log FILE]")
		fmt.Fprintln(stderr, "       freshness -experiment [-pages N] [-duration D]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || (*webAddr != "" && *experiment) {
		fs.Usage()
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	f, isFile := stderr.(*os.File)
	logw := &termline.Writer{W: stderr, TTY: isFile && termline.IsTerminal(f)}
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: level}))

	var err error
	switch {
	case *webAddr != "":
		o := wopt()
		o.Seed = *seed
		o.Sitemap = *sitemap
		err = serveWeb(ctx, *webAddr, o, *logPath, stderr)
	case *experiment:
		var c experimentConfig
		if c, err = xopt(); err != nil {
			break
		}
		c.opt.Web = wopt()
		c.opt.Web.Seed = *seed
		c.opt.Duration = *duration
		c.opt.Dir = *dataDir
		c.opt.Logger = log
		err = runExperiment(ctx, c, stdout, *plotPath)
	default:
		opt := freshness.ProbeOptions{Server: *server, Sample: *sample, PerQuery: *perQuery, Delay: *delay,
			UserAgent: *userAgent, Timeout: *timeout, Seed: *seed, Logger: log,
			Progress: probeProgress(logw, log, *delay)}
		if opt.Delay == 0 {
			opt.Delay = -1 // the flag's 0 means none, not the default
		}
		if *queries != "" {
			if opt.Queries, err = readLines(*queries); err != nil {
				break
			}
		}
		if *truthPath != "" {
			if opt.Truth, err = readTruth(*truthPath); err != nil {
				break
			}
		}
		err = measure(ctx, opt, stdout, *asJSON, *plotPath)
		logw.Status("")
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "freshness:", err)
		return 2
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "freshness: interrupted")
		return 130
	default:
		fmt.Fprintln(stderr, "freshness:", err)
		return 1
	}
}

// webFlags registers the fixture's shape flags, shared by -web and
// -experiment.
func webFlags(fs *flag.FlagSet) func() changingweb.Options {
	var (
		pages  = fs.Int("pages", 2000, "fixture: pages")
		hot    = fs.Float64("hot", 0.1, "fixture: share of hot pages")
		hotR   = fs.Float64("hot-rate", 0.05, "fixture: changes per second of a hot page")
		coldR  = fs.Float64("cold-rate", 0.002, "fixture: changes per second of a cold page")
		dups   = fs.Int("duplicates", 0, "fixture: pages that copy another page (default pages/50)")
		links  = fs.Int("links", changingweb.DefaultLinksPerPage, "fixture: links per page besides the next page")
		setDup bool
	)
	return func() changingweb.Options {
		fs.Visit(func(f *flag.Flag) { setDup = setDup || f.Name == "duplicates" })
		d := *dups
		if !setDup {
			d = *pages / 50
		}
		return changingweb.Options{Pages: *pages, HotFraction: *hot, HotRate: *hotR, ColdRate: *coldR, Duplicates: d, LinksPerPage: *links}
	}
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no query in %s", errUsage, path)
	}
	return out, nil
}

func readTruth(path string) (freshness.Truth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return freshness.ReadHistory(f)
}

func measure(ctx context.Context, opt freshness.ProbeOptions, stdout io.Writer, asJSON bool, plotPath string) error {
	rep, err := freshness.Probe(ctx, opt)
	if err != nil {
		return err
	}
	if plotPath != "" {
		if err := figure.Probe(plotPath, rep); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(stdout)
}

// serveWeb serves the fixture on addr until ctx ends, then writes the
// change log.
// webClock is the served fixture's clock (tests move it by hand).
var webClock = time.Now

func serveWeb(ctx context.Context, addr string, opt changingweb.Options, logPath string, stderr io.Writer) error {
	opt.Clock = webClock
	w, err := changingweb.New(opt)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	srv := httpserver.New(w, httpserver.Options{})
	fmt.Fprintf(stderr, "freshness: changing web of %d pages at %s/ (seed it there)\n", w.Pages(), base)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return err
		}
		if err := w.WriteLog(f, base, w.Now()); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "freshness: change log written to %s\n", logPath)
	}
	return nil
}
