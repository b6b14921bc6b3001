package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/loadgen"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
)

// runChild runs one mode in this process and prints its Result as JSON to
// stdout.
func runChild(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bulkbench child", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		mode     = fs.String("mode", "", "crawl or engine")
		data     = fs.String("data", "", "table directory (must not exist)")
		seeds    = fs.String("seeds", "", "comma-separated seed URLs")
		parallel = fs.Int("parallel", 8, "concurrent requests to one host")
		verify   = fs.Bool("verify", false, "verify the table once idle")
		profile  = fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
		every    = fs.Duration("profile-every", 0, "write the CPU profile as one file a window of this length")
		mem      = budget.Flag(fs)
		searches = fs.Int("searches", 0, "one-word queries once idle (engine)")
		clients  = fs.Int("clients", 8, "concurrent search clients")
		words    = fs.String("words", "", "comma-separated query words (default: the indexed titles' words)")
		ahead    = fs.Int("crawl-ahead", 0, "pace the crawl to the chain (engine.Config.CrawlAhead)")
		maxPages = fs.Int("max-pages", 0, "stop the crawl after this many pages")
		progress = fs.Duration("progress", 0, "print a progress line to stderr at this interval (engine)")
	)
	if err := fs.Parse(args); err != nil || *data == "" || (*seeds == "") != (*mode == modeSearch) {
		fmt.Fprintln(stderr, "bulkbench: bad child arguments")
		return 2
	}
	indexes := *mode == modeEngine || *mode == modeBulk || *mode == modeBulkFlat
	if path := *profile; path != "" || indexes {
		if path == "" {
			// The CPU by part (cpuparts.go) comes from a profile of the
			// run: a temporary one when none is asked for.
			tmp, err := os.MkdirTemp("", "bulkbench-cpu-")
			if err != nil {
				fmt.Fprintln(stderr, "bulkbench:", err)
				return 1
			}
			defer os.RemoveAll(tmp)
			path = filepath.Join(tmp, "run.pprof")
		}
		p, err := startProfile(path, *every, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "bulkbench:", err)
			return 1
		}
		runProfile = p
		defer func() {
			if _, err := p.Stop(); err != nil {
				fmt.Fprintln(stderr, "bulkbench: cpu profile:", err)
			}
		}()
	}
	mem.Apply(ctx, *data)
	tableCache = mem.TableBytes()
	trimStats = mem.Trims
	crawlAhead = *ahead
	progressEvery, progressOut = *progress, stderr
	copt := crawl.Options{Seeds: strings.Split(*seeds, ","), AllowPrivate: true, Delay: -1, Parallel: *parallel, MaxPages: *maxPages}
	var (
		r   Result
		err error
	)
	switch *mode {
	case modeCrawl:
		r, err = crawlOnly(ctx, *data, copt)
	case modeEngine, modeBulk, modeBulkFlat:
		r, err = oneProcess(ctx, *data, copt, *mode, *verify, *searches, *clients, splitWords(*words))
	case modeSearch:
		r, err = searchOnly(ctx, *data, *searches, *clients, splitWords(*words))
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(stderr, "bulkbench:", *mode+":", err)
		return 1
	}
	r.HWMMB = peakResident() // the mode's table is closed: all of the run
	if err := json.NewEncoder(stdout).Encode(r); err != nil {
		return 1
	}
	return 0
}

// runProfile is the child's CPU profile, if any.
var runProfile *cpuProfile

// idleParts stops the run's CPU profile (modes that index stop it at
// idle: what follows, the links' count, searches and -verify, is not the
// run's) and sums its CPU by part.
func idleParts() ([]CPUPart, error) {
	if runProfile == nil {
		return nil, nil
	}
	files, err := runProfile.Stop()
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return cpuParts(files)
}

// crawlOnly crawls until nothing is due, with no observers and no feeder.
func crawlOnly(ctx context.Context, dir string, copt crawl.Options) (Result, error) {
	copt.Once = true
	began := time.Now()
	e, err := engine.Open(ctx, engine.Config{Dir: dir, Crawl: &copt, NoFeeder: true, CacheBytes: tableCache, GCInterval: -1})
	if err != nil {
		return Result{}, err
	}
	defer e.Close()
	if err := e.Crawler.Run(ctx); err != nil {
		return Result{}, err
	}
	r := Result{Mode: modeCrawl, Pages: e.Crawler.Stats().Fetched, Seconds: time.Since(began).Seconds()}
	var err2 error
	if r.DiskBytes, err2 = diskUsage(dir); err2 != nil {
		return Result{}, err2
	}
	return r, nil
}

// tableCache is the table's share of the -cache-mb budget, crawlAhead
// the engine's -crawl-ahead, progressEvery how often the engine's run
// prints a progress line to progressOut (0: never), and trimStats what
// the budget's trimmer has done (for those lines).
var (
	tableCache    int64
	crawlAhead    int
	progressEvery time.Duration
	progressOut   io.Writer
	trimStats     = func() budget.TrimStats { return budget.TrimStats{} }
)

// oneProcess runs the engine as cmd/search does with seeds (and -bulk in
// the bulk modes; without its stages in bulk-flat), until idle.
func oneProcess(ctx context.Context, dir string, copt crawl.Options, mode string, verify bool, searches, clients int, words []string) (Result, error) {
	bulk := mode == modeBulk || mode == modeBulkFlat
	var stages func(*percolator.DB) []percolator.Stage
	if mode == modeBulk {
		stages = observers.BulkStages
	}
	var writes, batches, lastContent, crawled atomic.Int64
	began := time.Now()
	copt.CaughtUp = func() { crawled.Store(int64(time.Since(began))) }
	log := progressLog(began, progressEvery, progressOut)
	e, err := engine.Open(ctx, engine.Config{
		Dir: dir, Crawl: &copt, Observers: observers.Chain(), Scanners: 2, Workers: 16, CacheBytes: tableCache, CrawlAhead: crawlAhead, Bulk: bulk, Stages: stages,
		Logger: log,
		OnApply: func(as []serving.Applied) {
			writes.Add(int64(len(as)))
			batches.Add(1)
			for _, a := range as {
				if a.NewContent {
					lastContent.Store(int64(time.Since(began)))
					break
				}
			}
		},
	})
	if err != nil {
		return Result{}, err
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	// The progress lines go on through the searches and the wait for the
	// run's end (GC's first pass after a bulk load, a million pages'
	// table flattened), which the lines of idle and of the searches below
	// precede: a run stopped then has its figures all the same.
	defer reportProgress(e, began, progressEvery, progressOut)()
	ops0 := storeOps()
	waited := e.WaitIdle(ctx)
	took := time.Since(began)
	ops := storeOps().sub(ops0)
	parts, err := idleParts()
	if err != nil {
		cancel()
		<-done
		return Result{}, err
	}
	r := Result{Mode: mode, Seconds: took.Seconds(), CrawlSeconds: time.Duration(crawled.Load()).Seconds(), Pages: e.Crawler.Stats().Fetched,
		BleveWrites: writes.Load(), BleveBatches: batches.Load(), ContentSeconds: time.Duration(lastContent.Load()).Seconds(), ObserverRuns: make(map[string]int64), ObserverEmpty: make(map[string]int64)}
	r.Store = ops
	r.CPUParts = parts
	r.Observers = observerCosts(e.Worker.Stats())
	for _, o := range e.Worker.Stats() {
		r.ObserverRuns[o.Name] = o.Runs
		r.ObserverEmpty[o.Name] = o.Empty
		if strings.HasPrefix(o.Name, "export") { // export, export-links
			r.ExportRuns += o.Runs
		}
	}
	r.RSSAnonMB, r.RSSFileMB = residentSet()
	if waited == nil {
		if r.Links, err = countLinks(ctx, e); err != nil {
			cancel()
			<-done
			return Result{}, err
		}
	}
	r.DiskBytes, err = diskUsage(dir)
	if err != nil {
		cancel()
		<-done
		return Result{}, err
	}
	l := e.Index.Latency()
	r.P50, r.P90, r.P99 = l.P50, l.P90, l.P99
	if log != nil && waited == nil {
		log.Info("idle", "pages", r.Pages, "crawl_s", fmt.Sprintf("%.0f", r.CrawlSeconds), "bleve_writes", r.BleveWrites,
			"disk_mb", r.DiskBytes>>20, "peak_mb", fmt.Sprintf("%.0f", peakResident()))
	}
	var searchErr error
	if searches > 0 {
		r.Searches, r.Clients = searches, clients
		searchErr = r.setSearches(searchLoad(ctx, e, clients, searches, words))
		if log != nil && searchErr == nil {
			attrs := []any{"queries", searches, "clients", clients, "per_s", fmt.Sprintf("%.0f", r.QPS),
				"p50_ms", fmt.Sprintf("%.1f", r.QueryP50*1e3), "p99_ms", fmt.Sprintf("%.1f", r.QueryP99*1e3)}
			if r.SearchErrors > 0 {
				attrs = append(attrs, "failed", r.SearchErrors, "first_failure", r.SearchFirstError)
			}
			log.Info("searches", append(attrs, "peak_mb", fmt.Sprintf("%.0f", peakResident()))...)
		}
	}
	cancel()
	if err := <-done; err != nil {
		return Result{}, err
	}
	if waited != nil {
		return Result{}, waited
	}
	if searchErr != nil {
		return Result{}, searchErr
	}
	if r.Documents, err = e.Index.Count(); err != nil {
		return Result{}, err
	}
	if verify {
		diffs, _, err := observers.Verify(context.Background(), e.DB, 0.01, 5)
		switch {
		case err != nil:
			return Result{}, err
		case len(diffs) == 0:
			r.Verify = verifyAgrees
		default:
			r.Verify = fmt.Sprintf("differences (first %d): %s", len(diffs), strings.Join(diffs, "; "))
		}
	}
	return r, nil
}

// setSearches records the search load's figures in r. Failed queries (a
// timeout's 503) are part of them; only a load with no answer at all is
// an error.
func (r *Result) setSearches(lr loadgen.Result, err error) error {
	r.QPS, r.QueryP50, r.QueryP99, r.SearchErrors = lr.PerSecond(), lr.P50.Seconds(), lr.P99.Seconds(), lr.Errors
	if err != nil && lr.Errors == lr.Ops {
		return err
	}
	if err != nil {
		r.SearchFirstError = err.Error()
	}
	return nil
}

// searchOnly opens the table and the serving index that an earlier run
// kept in dir, serving only (no crawl, no worker, no feeder, no GC: the
// index as it was left), and answers the search load over it.
func searchOnly(ctx context.Context, dir string, searches, clients int, words []string) (Result, error) {
	e, err := engine.Open(ctx, engine.Config{Dir: dir, NoFeeder: true, GCInterval: -1, CacheBytes: tableCache})
	if err != nil {
		return Result{}, err
	}
	defer e.Close()
	r := Result{Mode: modeSearch, Searches: searches, Clients: clients}
	if r.Documents, err = e.Index.Count(); err != nil {
		return Result{}, err
	}
	began := time.Now()
	if err := r.setSearches(searchLoad(ctx, e, clients, searches, words)); err != nil {
		return Result{}, err
	}
	r.Seconds = time.Since(began).Seconds()
	r.RSSAnonMB, r.RSSFileMB = residentSet()
	if r.DiskBytes, err = diskUsage(dir); err != nil {
		return Result{}, err
	}
	return r, nil
}

// splitWords splits the child's -words list; none for an empty one.
func splitWords(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

// residentSet returns the resident set's anonymous and file-backed parts
// now (/proc/self/status RssAnon, RssFile), in MB; zeros where there is no
// /proc. Mmapped Bleve segments and Badger tables are file-backed.
func residentSet() (anon, file float64) {
	return procStatus("RssAnon"), procStatus("RssFile")
}

// procStatus returns a kB field of /proc/self/status in MB, zero if there
// is none.
func procStatus(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != field {
			continue
		}
		var kb float64
		fmt.Sscanf(strings.TrimSpace(v), "%f kB", &kb)
		return kb / 1024
	}
	return 0
}

// diskUsage returns the bytes dir and everything under it take on disk:
// blocks allocated, as du counts them (Badger's value log and memtable
// files are sparse where not written).
func diskUsage(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a file removed meanwhile (compaction)
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		} else {
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// peakResident returns this process's peak resident set (VmHWM of
// /proc/self/status) in MB, zero where there is no /proc.
func peakResident() float64 {
	return procStatus("VmHWM")
}
