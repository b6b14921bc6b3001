// Command search serves the search UI and JSON API over a table and its
// serving index. With seeds it is the whole engine in one process: it
// crawls, runs the indexing chain and feeds the index while it serves, so
// documents become searchable while the crawl runs.
//
//	search -demo [-data DIR]
//	    the quick start on a fresh clone: serve the bundled PostgreSQL
//	    manual on 127.0.0.1 from this process, crawl, index and serve it
//	    (DIR defaults to a temporary directory, removed on exit)
//	search -data DIR [-addr 127.0.0.1:8080]
//	    serve DIR (the chain and the index feeder run too, so a table left
//	    by crawler and indexer is served complete), and recrawl its pages
//	    when due from the seeds it remembers (-no-crawl: don't)
//	search -data DIR -seeds URL[,URL...] [crawler flags]
//	    the one-command quick start: crawl, index and serve
//	search -data DIR -seeds URL[,URL...] -bulk [crawler flags]
//	    a first crawl of a big site: crawl until nothing is due, then
//	    index it all at once, then serve (and index recrawls as usual)
//	search -data DIR -rebuild
//	    delete the serving index and rebuild it from the table first
//	search -data DIR -drop-index NAME, search -table ... -drop-index NAME
//	    retire the serving index NAME: exports stop going to its queue,
//	    and the queue is deleted
//	search -table bigtable://PROJECT/INSTANCE/TABLE [-app-profile ID] -data DIR [...]
//	    any of the above on a Cloud Bigtable table (BIGTABLE_EMULATOR_HOST
//	    for the emulator): DIR then holds the serving index and the status
//	    history only, and is built from the table when new
//
// While it runs, crawler recrawl -data DIR queues requests in DIR/recrawl/
// that its crawler applies within a second; crawler recrawl -table writes
// them into the Bigtable table, where the crawler sees them at its next
// pass.
//
// The crawler flags are the crawler command's (-allow-private, -max-pages,
// -delay, ...). Exit codes: 0 stopped by a signal, 1 failure, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/httpserver"
	"github.com/caffeine-go/caffeine/internal/termline"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator/storeflag"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/web"
)

// progressInterval is how often the status line is redrawn and idleness
// looked at.
const progressInterval = time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr, nil))
}

// run runs the command; ready, if not nil, receives the address served
// once the server listens (tests).
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) int {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	crawlOptions := crawl.Flags(fs)
	var (
		data     = fs.String("data", "", "local `directory`: the embedded Badger table and the serving index, or with -table the serving index alone; required but with -demo")
		demoMode = fs.Bool("demo", false, "crawl, index and serve a bundled sample site, the PostgreSQL 15 manual, which this process serves on 127.0.0.1: nothing from outside the repository is needed (-data defaults to a temporary directory, -delay to 0)")
		addr     = fs.String("addr", "127.0.0.1:8080", "listen `address` of the UI and API")
		rebuild  = fs.Bool("rebuild", false, "delete the serving index and rebuild it from the table before serving")
		name     = fs.String("index-name", feed.DefaultIndexName, "`name` of the serving index: on a table other processes share, one process feeds the index of a name and the others stand by; each name gets every export (replicas)")
		drop     = fs.String("drop-index", "", "retire the serving index `name` (exports stop going to its queue, which is deleted) and exit")
		noChain  = fs.Bool("no-index", false, "do not run the indexing chain (serve and feed the index only)")
		noCrawl  = fs.Bool("no-crawl", false, "do not crawl (without -seeds the table's remembered seeds are recrawled when due)")
		mem      = budget.Flag(fs)
		scanners = fs.Int("scanners", 2, "notification scanner goroutines of the chain")
		workers  = fs.Int("index-workers", 16, "observer transactions at once")
		bulk     = fs.Bool("bulk", false, "crawl before indexing: the chain and the index feeder start once nothing is due (a first crawl of a big site at the crawler's speed, indexed all at once; nothing is searchable until the crawl is over)")
		ahead    = fs.Int("crawl-ahead", engine.DefaultCrawlAhead, "pace the crawl to the indexing chain: fetch no page while more than `N` indexing tasks wait (pages searchable seconds after their fetch during a bulk crawl, which then takes as long as indexing); 0 crawls as fast as the hosts allow")
		timeout  = fs.Duration("query-timeout", 5*time.Second, "bound on one query")
		maxConns = fs.Int("max-conns", httpserver.DefaultMaxConns, "most `connections` the UI and API serve at once (past it, new ones wait and the longest idle is closed); -1 for no cap")
		verbose  = fs.Bool("v", false, "log every page and observer failure")
		quiet    = fs.Bool("q", false, "no progress line on a terminal")
		tf       storeflag.Flags
	)
	tf.Register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: search -demo [-data DIR] [-addr HOST:PORT]")
		fmt.Fprintln(stderr, "       search -data DIR [-addr HOST:PORT] [-seeds URL[,URL...] [crawler flags]] [-rebuild]")
		fmt.Fprintln(stderr, "       search -table bigtable://PROJECT/INSTANCE/TABLE [-app-profile ID] -data DIR [...]")
		fmt.Fprintln(stderr, "With -table the table is in Cloud Bigtable and DIR holds the serving index only (built from the table when new).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := tf.Validate(); err != nil {
		fmt.Fprintln(stderr, "search:", err)
		return 2
	}
	if *maxConns == 0 {
		fmt.Fprintln(stderr, "search: -max-conns 0: want 1 or more, or -1 for no cap")
		return 2
	}
	if *ahead < 0 {
		fmt.Fprintf(stderr, "search: -crawl-ahead %d: want 0 (no pacing) or more\n", *ahead)
		return 2
	}
	if *drop != "" {
		return dropIndex(ctx, &tf, *data, *drop, stderr)
	}
	if tf.Set() && *data == "" && !*demoMode {
		fmt.Fprintln(stderr, "search: -table needs -data DIR too: the table is in Bigtable, the serving index is kept in the local directory DIR")
		return 2
	}
	if (*data == "" && !*demoMode) || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	copt, err := crawlOptions()
	if err != nil {
		fmt.Fprintln(stderr, "search:", err)
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *demoMode && (len(copt.Seeds) > 0 || *noCrawl) {
		fmt.Fprintln(stderr, "search: -demo crawls the bundled sample site: it takes no -seeds, -seeds-file or -no-crawl")
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	f, isFile := stderr.(*os.File)
	logw := &termline.Writer{W: stderr, TTY: isFile && termline.IsTerminal(f) && !*quiet}
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: level}))

	var site *demoSite
	if *demoMode {
		if *data == "" {
			tmp, err := os.MkdirTemp("", "caffeine-demo-")
			if err != nil {
				fmt.Fprintln(stderr, "search:", err)
				return 1
			}
			*data = tmp
			defer func() {
				os.RemoveAll(tmp)
				fmt.Fprintf(logw, "search: demo: removed %s\n", tmp)
			}()
			fmt.Fprintf(logw, "search: demo: %s, a temporary directory removed on exit (-data DIR keeps %s)\n", demoGoesTo(&tf, tmp), demoThem(&tf))
		} else {
			if err := os.MkdirAll(*data, 0o755); err != nil {
				fmt.Fprintln(stderr, "search:", err)
				return 1
			}
			fmt.Fprintf(logw, "search: demo: %s and %s kept\n", demoGoesTo(&tf, *data), demoIs(&tf))
		}
		if site, err = startDemo(*data); err != nil {
			fmt.Fprintln(stderr, "search:", err)
			return 1
		}
		defer site.close()
		// The demo site is on loopback: allow exactly its address, no
		// other private one.
		copt.Seeds = []string{site.seed}
		copt.AllowPrivate = true
		copt.PrivateAddrs = append(copt.PrivateAddrs, site.addr)
		if !set["delay"] {
			copt.Delay = -1 // the flag's 0: the site is this process
		}
		fmt.Fprintf(logw, "search: demo: serving the PostgreSQL 15 manual (%d pages, bundled in the repository) at %s\n", site.pages, site.seed)
	}

	mem.Apply(ctx, *data)
	cfg := engine.Config{Dir: *data, Rebuild: *rebuild, Scanners: *scanners, Workers: *workers, CrawlAhead: *ahead, Bulk: *bulk, Stages: observers.BulkStages, CacheBytes: mem.TableBytes(), IndexName: *name, Logger: log}
	if !*noChain {
		cfg.Observers = observers.Chain()
	}
	if !*noCrawl {
		// Without -seeds, the seeds the table remembers: pages are
		// recrawled when due.
		copt.Logger = log
		if !tf.Set() {
			// crawler recrawl's requests while this runs; on Bigtable
			// it writes them into the table.
			copt.RecrawlDir = filepath.Join(*data, "recrawl")
		}
		cfg.Crawl = &copt
	}
	if tf.Set() {
		st, err := tf.Open(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "search:", err)
			return 1
		}
		cfg.Store, cfg.Table = st, tf.Table // the engine closes it
		defer storeflag.LogCalls(log, st)   // after the engine closed
	}
	e, err := engine.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "search:", err)
		return 1
	}
	defer e.Close()

	reg := e.Metrics
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h := web.New(e, web.Options{
		Metrics:      promhttp.HandlerFor(prometheus.Gatherers{reg}, promhttp.HandlerOpts{}),
		QueryTimeout: *timeout,
		Logger:       log,
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "search:", listenError(*addr, err))
		return 1
	}
	srv := httpserver.New(h, httpserver.Options{MaxConns: *maxConns})
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "url", "http://"+ln.Addr().String()+"/", "data", *data, "table", tableName(&tf, *data), "crawling", cfg.Crawl != nil)
	if site != nil {
		ui := "http://" + ln.Addr().String() + "/"
		fmt.Fprintf(logw, "search: demo: crawling it now; open %s to search while it crawls (%sstatus shows progress), Ctrl-C stops\n", ui, ui)
		fmt.Fprintf(logw, "search: demo: try %s, or %ssearch?q=vacuum; the JSON API: curl '%sapi/search?q=vacuum'\n",
			strings.Join(demoQueries, ", "), ui, ui)
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}
	pctx, stopProgress := context.WithCancel(ctx)
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		progress(pctx, e, logw, log, progressInterval)
	}()
	err = e.Run(ctx)
	stopProgress()
	<-progressDone
	if err != nil {
		srv.Close()
		fmt.Fprintln(stderr, "search:", err)
		return 1
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "search:", err)
		return 1
	}
	return 0
}

// tableName names the table served: -table, or the Badger table in data.
func tableName(tf *storeflag.Flags, data string) string {
	if tf.Set() {
		return tf.Table
	}
	return data
}

// demoGoesTo says what the demo keeps in dir: the table and the index, or
// with -table the index alone.
func demoGoesTo(tf *storeflag.Flags, dir string) string {
	if tf.Set() {
		return fmt.Sprintf("the serving index of %s goes to %s", tf.Table, dir)
	}
	return "the table and index go to " + dir
}

func demoThem(tf *storeflag.Flags) string {
	if tf.Set() {
		return "it"
	}
	return "them"
}

func demoIs(tf *storeflag.Flags) string {
	if tf.Set() {
		return "is"
	}
	return "are"
}

// listenError says what to do when the UI's address cannot be had: a
// port in use (another search, another server) is served elsewhere with
// -addr.
func listenError(addr string, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	next := "127.0.0.1:8081"
	if host, port, e := net.SplitHostPort(addr); e == nil {
		if p, e := strconv.Atoi(port); e == nil && p > 0 && p < 65535 {
			next = net.JoinHostPort(host, strconv.Itoa(p+1))
		}
	}
	return fmt.Errorf("%s is in use by another process (another search, or another server): serve on another address with -addr, e.g. -addr %s (or -addr 127.0.0.1:0 for any free port)", addr, next)
}
