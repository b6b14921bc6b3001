package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/caffeine-go/caffeine/freshness/changingweb"
	"github.com/caffeine-go/caffeine/internal/hostile"
	"github.com/caffeine-go/caffeine/internal/httpserver"
)

// Modes of a run.
const (
	modeCrawl  = "crawl"  // the crawler alone
	modeEngine = "engine" // crawler, chain and feeder: the one process
	modeBulk   = "bulk"   // the crawler alone, then chain and feeder on its table, in stages
	// modeBulkFlat is bulk with the whole chain at once (no
	// engine.Config.Stages), for comparison.
	modeBulkFlat = "bulk-flat"
	// modeSearch answers the search load over a table an earlier run
	// kept (-reopen), serving only.
	modeSearch = "search"
)

// indexes tells whether a mode runs the chain and the feeder.
func indexes(mode string) bool { return mode == modeEngine || mode == modeBulk || mode == modeBulkFlat }

func parseModes(s string) ([]string, error) {
	var out []string
	for m := range strings.SplitSeq(s, ",") {
		switch m = strings.TrimSpace(m); m {
		case modeCrawl, modeEngine, modeBulk, modeBulkFlat:
			out = append(out, m)
		case "":
		default:
			return nil, fmt.Errorf("unknown mode %q (crawl, engine, bulk, bulk-flat)", m)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no mode")
	}
	return out, nil
}

// seedPaths returns the seed paths under dir: list if given, else
// index.html if dir has one, else every */index.html.
func seedPaths(dir, list string) ([]string, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if list != "" {
		return splitPaths(list), nil
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err == nil {
		return []string{"index.html"}, nil
	}
	m, err := filepath.Glob(filepath.Join(dir, "*", "index.html"))
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no index.html in %s nor in its directories: give -seeds", dir)
	}
	var out []string
	for _, f := range m {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return out, nil
}

// splitPaths splits a comma-separated list of paths, without their
// leading slashes.
func splitPaths(list string) []string {
	var out []string
	for p := range strings.SplitSeq(list, ",") {
		if p = strings.TrimPrefix(strings.TrimSpace(p), "/"); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// fixtureSeeds returns the seed paths on the fixture: list if it names
// any, else its root ("", the index page linking every page).
func fixtureSeeds(list string) []string {
	if out := splitPaths(list); len(out) > 0 {
		return out
	}
	return []string{""}
}

// fixtureBorn is when the fixture's pages appeared: their Last-Modified.
// Long ago, so that the crawler's first revisit interval (the time since
// Last-Modified, at most crawl.Options.MaxInterval) brings no page due
// again before the crawl is idle.
var fixtureBorn = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// newFixture returns the changing-web fixture of n pages, frozen: no page
// ever changes (negative rates), with n/50 duplicates, as cmd/freshness
// -web serves it by default. With links 0 it has the fixture's default
// link structure (changingweb.DefaultLinksPerPage links a page besides the
// next page, in sections of changingweb.SectionSize); with links > 0 it is
// the link-dense profile of a generated API reference (fixtureOptions).
func newFixture(n, links int) (*changingweb.Web, error) {
	return changingweb.New(fixtureOptions(n, links))
}

// fixtureOptions are newFixture's options. The link-dense profile (links
// > 0) gives every page links links besides the next page, a share of
// them (changingweb.DefaultHubShare) to n/200 hub and index pages (at
// least 2) with a Zipf skew, the rest mostly within one big section: one
// host, one section, as Doxygen's or qdoc's output.
func fixtureOptions(n, links int) changingweb.Options {
	opt := changingweb.Options{Pages: n, HotFraction: -1, HotRate: -1, ColdRate: -1,
		Duplicates: n / 50, Seed: 1, Born: fixtureBorn}
	if links > 0 {
		opt.LinksPerPage = links
		opt.Hubs = min(max(2, n/200), n-n/50-1)
		opt.Section = n
	}
	return opt
}

// bench runs the modes, each in a child process, against the corpus
// served by this process.
type bench struct {
	corpus       string
	fixture      int      // pages of the changing-web fixture, served instead of corpus
	links        int      // -links: the fixture's link-dense profile, links a page (0: its default)
	hostile      int      // large pages of each kind of the hostile site, served instead of corpus
	seeds        []string // paths under the corpus or on the fixture
	parallel     int
	verify       bool
	keep         string
	reopen       string        // -reopen: the kept table to search, nothing else
	profile      string        // directory of CPU profiles, one a run
	profileEvery time.Duration // one CPU profile a window of this length (-profile-every)
	cacheMB      int           // memory budget (-cache-mb)
	ahead        int           // engine: -crawl-ahead
	progress     time.Duration // engine: -progress
	maxPages     int           // -max-pages
	searches     int           // one-word queries once idle (engine mode)
	clients      int           // concurrent search clients
	words        []string      // the one-word queries; none: the indexed titles' words
	stderr       io.Writer
}

func (b *bench) run(ctx context.Context, modes []string, runs int) ([]Result, error) {
	if b.reopen != "" {
		return b.searchOnly(ctx)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var h http.Handler = http.FileServer(http.Dir(b.corpus))
	if b.fixture > 0 {
		w, err := newFixture(b.fixture, b.links)
		if err != nil {
			ln.Close()
			return nil, err
		}
		h, b.words = w, changingweb.Vocabulary()
	}
	if b.hostile > 0 {
		h = hostile.Site{Pages: b.hostile, Size: 12 << 20}
	}
	srv := httpserver.New(h, httpserver.Options{})
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/"
	var seeds []string
	for _, p := range b.seeds {
		seeds = append(seeds, base+strings.TrimPrefix(path.Clean("/"+p), "/"))
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out []Result
	for i := range runs {
		for _, m := range modes {
			keep := ""
			if indexes(m) && b.keep != "" && i == runs-1 {
				keep = b.keep
			}
			prof := ""
			if b.profile != "" {
				prof = filepath.Join(b.profile, fmt.Sprintf("%s-%d.pprof", m, i+1))
			}
			r, err := b.child(ctx, exe, m, seeds, keep, prof)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", m, i+1, err)
			}
			fmt.Fprintf(b.stderr, "bulkbench: %s run %d: %d pages in %.1f s\n", m, i+1, r.Pages, r.Seconds)
			out = append(out, r)
		}
	}
	return out, nil
}

// searchOnly runs the search load in a child process over the table and
// serving index that b.reopen holds (kept by an earlier -keep run),
// serving only: no corpus served, no crawl, no chain, no GC. On the
// fixture (b.fixture > 0) it asks the fixture's words.
func (b *bench) searchOnly(ctx context.Context) ([]Result, error) {
	if b.fixture > 0 {
		b.words = changingweb.Vocabulary()
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	prof := ""
	if b.profile != "" {
		prof = filepath.Join(b.profile, modeSearch+"-1.pprof")
	}
	r, err := b.child(ctx, exe, modeSearch, nil, b.reopen, prof)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", modeSearch, b.reopen, err)
	}
	return []Result{r}, nil
}

// stopWait is how long an interrupted child has to stop before it is
// killed.
var stopWait = time.Minute

// child runs one mode in a child process and returns its result, with the
// child's CPU time and peak RSS from the kernel.
func (b *bench) child(ctx context.Context, exe, mode string, seeds []string, keep, profile string) (Result, error) {
	data := keep
	if data == "" {
		tmp, err := os.MkdirTemp("", "bulkbench-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(tmp)
		data = filepath.Join(tmp, "data")
	}
	args := []string{"-mode", mode, "-data", data, "-seeds", strings.Join(seeds, ","), "-parallel", strconv.Itoa(b.parallel)}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
		if b.profileEvery > 0 {
			args = append(args, "-profile-every", b.profileEvery.String())
		}
	}
	args = append(args, "-cache-mb", strconv.Itoa(b.cacheMB))
	if (indexes(mode) || mode == modeSearch) && b.searches > 0 {
		args = append(args, "-searches", strconv.Itoa(b.searches), "-clients", strconv.Itoa(b.clients))
		if len(b.words) > 0 {
			args = append(args, "-words", strings.Join(b.words, ","))
		}
	}
	if b.verify && indexes(mode) {
		args = append(args, "-verify")
	}
	if b.ahead > 0 && indexes(mode) {
		args = append(args, "-crawl-ahead", strconv.Itoa(b.ahead))
	}
	if b.maxPages > 0 {
		args = append(args, "-max-pages", strconv.Itoa(b.maxPages))
	}
	if b.progress > 0 && indexes(mode) {
		args = append(args, "-progress", b.progress.String())
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	// Interrupted, the child stops as cmd/search does on ^C, so that it
	// still writes its CPU profile; it is killed if that takes a minute.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = stopWait
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, b.stderr
	if err := cmd.Run(); err != nil {
		return Result{}, err
	}
	var r Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return Result{}, fmt.Errorf("child's result: %w", err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		r.CPUSeconds = cpu.Seconds()
		r.PeakRSSMB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	if r.HWMMB > 0 {
		// The child's own: its ru_maxrss also counts this process's
		// resident set when it was started (vfork shares the memory
		// until exec), which the fixture makes large.
		r.PeakRSSMB = r.HWMMB
	}
	return r, nil
}

// Result is one run of one mode.
type Result struct {
	Mode      string  `json:"mode"`
	Pages     int64   `json:"pages"`     // fetches
	Documents int     `json:"documents"` // documents in the serving index once idle
	Seconds   float64 `json:"seconds"`   // from start to idle
	// CrawlSeconds is from start until the crawler first had nothing
	// due: with -modes bulk, when indexing began.
	CrawlSeconds float64 `json:"crawl_seconds"`
	// ContentSeconds is from start until the last new content became
	// searchable; what follows until idle is anchors' and PageRank's
	// background work.
	ContentSeconds float64 `json:"content_seconds"`
	ExportRuns     int64   `json:"export_runs"`
	BleveWrites    int64   `json:"bleve_writes"`
	BleveBatches   int64   `json:"bleve_batches"` // index batches applied (a segment each)
	// The resident set once idle: anonymous and file-backed, MB.
	RSSAnonMB    float64          `json:"rss_anon_mb"`
	RSSFileMB    float64          `json:"rss_file_mb"`
	P50          float64          `json:"p50_s"`
	P90          float64          `json:"p90_s"`
	P99          float64          `json:"p99_s"`
	ObserverRuns map[string]int64 `json:"observer_runs,omitempty"`
	// ObserverEmpty counts the runs (of ObserverRuns) that wrote nothing.
	ObserverEmpty map[string]int64 `json:"observer_empty,omitempty"`
	Verify        string           `json:"verify,omitempty"`
	// The search phase once idle (-searches): one-word queries through
	// the JSON API, -clients at once; latencies in seconds.
	Searches int     `json:"searches,omitempty"`
	QPS      float64 `json:"qps,omitempty"`
	QueryP50 float64 `json:"query_p50_s,omitempty"`
	QueryP99 float64 `json:"query_p99_s,omitempty"`
	Clients  int     `json:"clients,omitempty"`
	// SearchErrors counts the queries that failed (a timeout's 503, say;
	// their latency counts in the percentiles), SearchFirstError says the
	// first one.
	SearchErrors     int    `json:"search_errors,omitempty"`
	SearchFirstError string `json:"search_first_error,omitempty"`
	// DiskBytes is the data directory's size once idle (the table and
	// the serving index): blocks allocated, as du counts them.
	DiskBytes int64 `json:"disk_bytes"`
	// HWMMB is the child's peak resident set (VmHWM) as it exits, MB;
	// zero where there is no /proc.
	HWMMB float64 `json:"vm_hwm_mb,omitempty"`
	// The cost breakdown (modes that index): the links once idle, each
	// observer's transactions and the store's operations until idle.
	Links     int64          `json:"links,omitempty"`
	Observers []ObserverCost `json:"observer_costs,omitempty"`
	Store     StoreOps       `json:"store_ops,omitzero"`
	// CPUParts is the CPU from start to idle by part (modes that index).
	CPUParts []CPUPart `json:"cpu_parts,omitempty"`
	// Filled in by the parent from the child's rusage.
	CPUSeconds float64 `json:"-"`
	PeakRSSMB  float64 `json:"-"`
}

const verifyAgrees = "agrees"

func printTable(w io.Writer, rs []Result) {
	if len(rs) == 1 && rs[0].Mode == modeSearch {
		printSearches(w, rs[0])
		return
	}
	fmt.Fprintln(w, "| mode | pages | to idle s | content searchable s | pages/s | CPU-ms a page | export runs a page | Bleve writes a page | crawl→searchable p50 / p90 / p99 s | peak RSS MB | disk MB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	per := func(n float64, r Result) float64 {
		if r.Pages == 0 {
			return 0
		}
		return n / float64(r.Pages)
	}
	for _, r := range rs {
		rate := 0.0
		if r.Seconds > 0 {
			rate = float64(r.Pages) / r.Seconds
		}
		if r.Mode == modeCrawl {
			fmt.Fprintf(w, "| %s | %d | %.1f | – | %.0f | %.2f | – | – | – | %.0f | %.1f |\n",
				r.Mode, r.Pages, r.Seconds, rate, per(r.CPUSeconds*1000, r), r.PeakRSSMB, float64(r.DiskBytes)/(1<<20))
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.0f | %.2f | %.2f | %.2f | %.1f / %.1f / %.1f | %.0f | %.1f |\n",
			r.Mode, r.Pages, r.Seconds, r.ContentSeconds, rate, per(r.CPUSeconds*1000, r),
			per(float64(r.ExportRuns), r), per(float64(r.BleveWrites), r), r.P50, r.P90, r.P99, r.PeakRSSMB, float64(r.DiskBytes)/(1<<20))
	}
	for _, r := range rs {
		if len(r.ObserverRuns) == 0 {
			continue
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.ObserverRuns)) {
			part := fmt.Sprintf("%s %d", k, r.ObserverRuns[k])
			if e := r.ObserverEmpty[k]; e > 0 {
				part += fmt.Sprintf(" (%d empty)", e)
			}
			parts = append(parts, part)
		}
		line := fmt.Sprintf("%s: %d documents, %d Bleve batches, resident once idle %.0f MB anonymous + %.0f MB file-backed; observer runs: %s",
			r.Mode, r.Documents, r.BleveBatches, r.RSSAnonMB, r.RSSFileMB, strings.Join(parts, ", "))
		if r.CrawlSeconds > 0 {
			line += fmt.Sprintf("; nothing due after %.1f s", r.CrawlSeconds)
		}
		if r.Verify != "" {
			line += "; verify: " + r.Verify
		}
		if r.Searches > 0 {
			line += fmt.Sprintf("; then %d searches, %d clients: %.0f queries/s, p50 %.1f ms, p99 %.1f ms",
				r.Searches, r.Clients, r.QPS, r.QueryP50*1e3, r.QueryP99*1e3)
			if r.SearchErrors > 0 {
				line += fmt.Sprintf(", %d failed (first: %s; counted in p50/p99)", r.SearchErrors, r.SearchFirstError)
			}
			line += " (peak RSS includes them)"
		}
		fmt.Fprintln(w, line)
	}
	for _, r := range rs {
		printCosts(w, r)
		printCPUParts(w, r)
	}
}

// printSearches prints the search load over a reopened table (-reopen).
func printSearches(w io.Writer, r Result) {
	fmt.Fprintln(w, "| mode | documents | searches | clients | queries/s | p50 ms | p99 ms | failed | CPU s | peak RSS MB | disk MB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	fmt.Fprintf(w, "| %s | %d | %d | %d | %.0f | %.1f | %.1f | %d | %.1f | %.0f | %.1f |\n",
		r.Mode, r.Documents, r.Searches, r.Clients, r.QPS, r.QueryP50*1e3, r.QueryP99*1e3, r.SearchErrors,
		r.CPUSeconds, r.PeakRSSMB, float64(r.DiskBytes)/(1<<20))
	if r.SearchErrors > 0 {
		fmt.Fprintf(w, "%s: first failure: %s (failed queries count in p50/p99 with the time they took)\n", r.Mode, r.SearchFirstError)
	}
	fmt.Fprintf(w, "%s: resident after the searches %.0f MB anonymous + %.0f MB file-backed\n", r.Mode, r.RSSAnonMB, r.RSSFileMB)
}
