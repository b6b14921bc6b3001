// Command bulkbench measures a bulk crawl of a local corpus by the one
// process (package engine: crawler, indexing chain, serving feeder), side
// by side with the bare crawler on the same corpus in the same run.
//
//	bulkbench -corpus DIR [-seeds PATH[,PATH...]] [-parallel 8] [-runs 1] [-cache-mb 384] [-crawl-ahead N] [-verify]
//	bulkbench -fixture N [-links L] [-modes crawl,engine,bulk] [-searches N] [-max-pages M] [-progress 30s] [-cpuprofile DIR [-profile-every 300s]] [-verify]
//	bulkbench -reopen DIR -searches N [-clients 8] [-fixture N]
//	bulkbench -hostile N [-modes engine] [-cache-mb 384]
//
// It serves DIR with http.FileServer on 127.0.0.1, or with -fixture N the
// changing-web fixture (package freshness/changingweb) of N pages, frozen,
// or with -hostile N the hostile site (package internal/hostile: N pages
// of each kind of large page, 12 MiB each, and 2,000 small ones), and runs each mode in a child process of its own (this binary again), so
// that the CPU time and the peak RSS it reports are the child's alone, not
// the server's: user+system time from getrusage of the child, and the
// child's own high-water mark of its resident set (VmHWM of
// /proc/self/status, read as it exits; ru_maxrss where there is no /proc:
// a child Go starts with vfork has ru_maxrss count the parent's resident
// set at the fork too, which the fixture held in the parent makes large):
//
//   - crawl: the crawler alone (crawl.Options.Once) into a fresh table
//     opened as the engine opens it, no observers, no feeder;
//   - engine: what `search -data DIR -seeds … -allow-private -delay 0
//     -parallel 8` runs, until engine.WaitIdle (nothing due, nothing
//     pending, the export queue applied, held for 300 ms);
//   - bulk: the same with -bulk (engine.Config.Bulk): the crawler alone
//     until nothing is due, then the chain and the feeder on all of it,
//     until idle; its summary line says when the crawl was over.
//
// The seeds are PATHs under DIR (default: index.html if DIR has one, else
// every DIR/*/index.html, as the Debian handbook's languages), or on the
// fixture (default: its root, the index page linking every page). The
// fixture is changingweb.New with N pages, N/50 of them duplicates, the
// default links per page and seed 1, its change rates negative (no page
// ever changes) and its pages born on 2020-01-01 (their Last-Modified: the
// crawler's first revisit interval is the longest, so nothing comes due
// again before idle), so that "crawled and indexed to idle" is reached
// and runs compare. With -links L the fixture is instead the link-dense
// profile of a generated API reference: L links a page besides the next
// page, up to 30% of them (each hub once a page) to N/200 hub and index
// pages with a Zipf skew, the rest within one big section (docs/benchmarks/links.md).
// Per mode it prints pages fetched, seconds to idle,
// seconds until the last new content was searchable (the rest is
// background work: anchors, PageRank), pages/s, CPU-ms a page, export runs
// a page (every export observer: export, export-links), Bleve
// document writes a page (index updates and deletes applied),
// crawl→searchable p50/p90/p99 of new content, peak RSS and the data
// directory's size on disk once idle (table and serving index, blocks
// allocated, as du counts them). After the table, each indexing run gets
// a cost breakdown, a page and a link (links: the entries of every
// links:out cell once idle): each observer's runs, commits, conflicts and
// run time, the transactions, Badger's operations until idle (its
// badger_* counters: gets, puts, iterators, bytes written, bytes flushed
// to L0 and written by compactions), export runs, Bleve writes and CPU.
// With -searches N the engine then answers
// N one-word queries (words of the indexed titles; on the fixture, the
// words of its body text, changingweb.Vocabulary, as its titles have two
// words only, which every page has) from -clients clients through the
// JSON API over loopback, and prints queries/s and latency p50/p99; the
// peak RSS then includes the searches. Both modes run with the -cache-mb
// memory budget as cmd/search does (0: Badger's defaults, no memory
// limit). With -verify the engine's table is checked
// against a batch recomputation once idle (what `indexer -verify` does).
// With -max-pages M each run's crawl stops after M pages and the engine
// runs to idle on them: a slice of a fixture too big to crawl whole, the
// same pages every run. With -progress D the engine prints a line to
// stderr every D while it runs: time, pages fetched and their rate,
// documents applied to the index, the worker's foreground backlog, the
// resident set (anonymous + file-backed) and each observer's runs so far;
// between them the bulk path's course, and once idle a line of the
// figures then and one of the searches', ahead of the run's end (which
// waits for GC's first pass).
// With -cpuprofile DIR -profile-every D, a run's CPU profile is one file
// a window of D (MODE-RUN-SSSSSs.pprof, the window's start in seconds):
// the late windows of a long run show what grows with the table; `go tool
// pprof` merges files given together. Interrupted (^C), a run stops as
// cmd/search does and still writes its CPU profile. In the modes that
// index, the profile ends at idle (the links' count, -verify and the
// searches are not in it), and with or without -cpuprofile the run prints
// its CPU by part from it: each observer (the worker labels its runs,
// percolator.ProfileLabel), the crawler, the feeder, Bleve's merges,
// Badger's writes and compactions, the notification scans, the engine,
// Go's GC, a page and a link (docs/benchmarks/links.md).
//
// Every run's table is a fresh embedded Badger one in a temporary directory
// (or -keep DIR), so that runs compare: bulkbench takes no -table.
//
// With -reopen DIR, bulkbench only measures searches over the table and
// serving index that an earlier -keep DIR run left: a child process opens
// them serving only (no crawl, no chain, no feeder, no GC: the index as it
// was left, nothing beside the queries) and answers -searches N queries
// from -clients clients through the JSON API, as above (with -fixture N,
// the fixture's words; else the indexed titles' words). It prints the
// documents, queries/s, p50/p99, the queries that failed (a timeout's 503;
// they count in p50/p99 with the time they took), the child's CPU
// seconds, its peak RSS and the directory's size. A million-page index
// takes hours to build: its searches are measured apart from the run,
// when nothing else runs.
//
// Exit codes: 0 done, 1 failure, 2 bad usage.
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

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/budget"
)

// childEnv, set in a child's environment, makes the binary run one mode
// (runChild) instead of the benchmark.
const childEnv = "BULKBENCH_CHILD"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild(ctx, os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the benchmark and prints its table to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bulkbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dir      = fs.String("corpus", "", "corpus `directory` to serve and crawl (or -fixture)")
		fixture  = fs.Int("fixture", 0, "serve and crawl the changing-web fixture with this many `pages`, frozen, instead of -corpus")
		links    = fs.Int("links", 0, "with -fixture: the link-dense profile of a generated API reference, with this many `links` a page (skewed to n/200 hub pages, one big section); 0: the fixture's default of few links")
		hostileN = fs.Int("hostile", 0, "serve and crawl the hostile site (internal/hostile) with this many `pages` of each kind, 12 MiB each, instead of -corpus: to measure the memory budget")
		seeds    = fs.String("seeds", "", "comma-separated seed `paths` under the corpus (default: index.html, else every */index.html) or on the fixture (default: its root)")
		parallel = fs.Int("parallel", 8, "concurrent requests to the corpus's host")
		runs     = fs.Int("runs", 1, "runs of each mode, alternated (crawl, engine, crawl, engine, ...)")
		modes    = fs.String("modes", "crawl,engine", "comma-separated modes to run: crawl, engine, bulk (the crawler alone, then the chain and the feeder on its table, stage by stage), bulk-flat (bulk with the whole chain at once)")
		verify   = fs.Bool("verify", false, "check the engine's table against a batch recomputation once idle (not timed)")
		keep     = fs.String("keep", "", "keep the engine's table in this `directory` (must not exist) instead of a temporary one")
		reopen   = fs.String("reopen", "", "only answer -searches queries over the table and serving index an earlier -keep run left in this `directory`: no corpus, no crawl, no chain, no GC (with -fixture N, the fixture's words)")
		profile  = fs.String("cpuprofile", "", "write a CPU profile of every run to this `directory` (MODE-RUN.pprof; to idle in the modes that index)")
		every    = fs.Duration("profile-every", 0, "with -cpuprofile, one profile a window of this `length` (MODE-RUN-SSSSSs.pprof, SSSSS the window's start in seconds), to see what grows on a long run; 0: one a run")
		mem      = budget.Flag(fs)
		searches = fs.Int("searches", 0, "engine: once idle, ask this many one-word queries (title words) through the JSON API")
		clients  = fs.Int("clients", 8, "engine: concurrent search clients of -searches")
		ahead    = fs.Int("crawl-ahead", engine.DefaultCrawlAhead, "engine: pace the crawl to the chain as search -crawl-ahead `N` does (0: no pacing)")
		maxPages = fs.Int("max-pages", 0, "stop each run's crawl after this many `pages` (0: crawl everything); with -fixture, a slice of a big fixture run to idle")
		progress = fs.Duration("progress", 0, "engine: print a progress line to stderr every `interval` (pages fetched and indexed, backlog, resident set, observer runs); 0: none")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bulkbench -corpus DIR [-seeds PATH[,PATH...]] [-parallel 8] [-runs 1] [-crawl-ahead N] [-verify]")
		fmt.Fprintln(stderr, "       bulkbench -fixture N [-modes crawl,engine,bulk] [-searches N] [-max-pages M] [-progress 30s] [-verify]")
		fmt.Fprintln(stderr, "       bulkbench -reopen DIR -searches N [-clients 8] [-fixture N]")
		fmt.Fprintln(stderr, "       bulkbench -hostile N [-modes engine] [-cache-mb 384]")
		fmt.Fprintln(stderr, "Every run's table is a fresh embedded Badger one in a temporary directory (or -keep DIR): bulkbench takes no -table.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *reopen != "" {
		if *dir != "" || *keep != "" || *searches <= 0 {
			fmt.Fprintln(stderr, "bulkbench: -reopen DIR takes -searches N (N > 0), and neither -corpus nor -keep")
			return 2
		}
		if _, err := os.Stat(filepath.Join(*reopen, engine.IndexDir)); err != nil {
			fmt.Fprintf(stderr, "bulkbench: -reopen %s: no table kept there (%v)\n", *reopen, err)
			return 2
		}
	} else if n := btoi(*dir != "") + btoi(*fixture != 0) + btoi(*hostileN != 0); n != 1 || *fixture < 0 || *hostileN < 0 {
		fmt.Fprintln(stderr, "bulkbench: give exactly one of -corpus DIR, -fixture N and -hostile N (N > 0)")
		fs.Usage()
		return 2
	}
	if *links < 0 || *links > 0 && *fixture == 0 {
		fmt.Fprintln(stderr, "bulkbench: -links L takes -fixture N and L > 0")
		fs.Usage()
		return 2
	}
	if fs.NArg() > 0 || *runs < 1 || *parallel < 1 || *ahead < 0 || *progress < 0 || *maxPages < 0 || *every < 0 || (*every > 0 && *profile == "") {
		fs.Usage()
		return 2
	}
	ms, err := parseModes(*modes)
	if err != nil {
		fmt.Fprintln(stderr, "bulkbench:", err)
		return 2
	}
	b := bench{cacheMB: mem.MB, searches: *searches, clients: max(*clients, 1), corpus: *dir, fixture: *fixture, links: *links, hostile: *hostileN, parallel: *parallel, verify: *verify, keep: *keep, reopen: *reopen, profile: *profile, profileEvery: *every, ahead: *ahead, progress: *progress, maxPages: *maxPages, stderr: stderr}
	switch {
	case *reopen != "": // nothing to crawl
	case *fixture > 0, *hostileN > 0:
		b.seeds = fixtureSeeds(*seeds)
	default:
		b.seeds, err = seedPaths(*dir, *seeds)
	}
	if err != nil {
		fmt.Fprintln(stderr, "bulkbench:", err)
		return 2
	}
	if *profile != "" {
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			fmt.Fprintln(stderr, "bulkbench: -cpuprofile:", err)
			return 2
		}
	}
	results, err := b.run(ctx, ms, *runs)
	if err != nil {
		fmt.Fprintln(stderr, "bulkbench:", err)
		return 1
	}
	printTable(stdout, results)
	for _, r := range results {
		if r.Verify != "" && r.Verify != verifyAgrees {
			fmt.Fprintln(stderr, "bulkbench: verify:", r.Verify)
			return 1
		}
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
