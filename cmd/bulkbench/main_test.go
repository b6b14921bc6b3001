package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/loadgen"
)

// TestMain runs a mode when the benchmark starts this test binary as its
// child.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" { // a child, as main runs it
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runChild(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// testRun bounds a test's runs: generous, as a loaded 2-core machine
// under -race takes minutes for what takes seconds alone.
const testRun = 5 * time.Minute

// writeSite writes a small corpus laid out as the Debian handbook is: a
// directory per language, each with an index.html linking its pages,
// which link each other and back.
func writeSite(t *testing.T, langs []string, pages int) string {
	t.Helper()
	dir := t.TempDir()
	for _, l := range langs {
		if err := os.Mkdir(filepath.Join(dir, l), 0o755); err != nil {
			t.Fatal(err)
		}
		links := ""
		for i := range pages {
			links += fmt.Sprintf(`<li><a href="p%d.html">chapter %d</a></li>`, i, i)
		}
		write := func(name, title, body string) {
			html := fmt.Sprintf("<!doctype html><html lang=%q><head><title>%s</title></head><body><h1>%s</h1><p>%s</p><ul>%s</ul></body></html>",
				l, title, title, body, links)
			if err := os.WriteFile(filepath.Join(dir, l, name), []byte(html), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("index.html", l+" handbook", "the table of contents of the "+l+" handbook: "+ownWords(l, 99))
		for i := range pages {
			write(fmt.Sprintf("p%d.html", i), fmt.Sprintf("%s chapter %d", l, i),
				fmt.Sprintf("chapter %d of the %s handbook, about topic%d and topic%d: %s", i, l, i, i+1, ownWords(l, i))+` <a href="index.html">contents</a>`)
		}
	}
	return dir
}

// ownWords returns a dozen words of letters only that no other page of
// writeSite has (digits would not tell pages apart: the near-copy
// fingerprint reads every word with a digit as the same word), so that
// no two of its pages are near-copies.
func ownWords(lang string, page int) string {
	words := make([]string, 12)
	for k := range words {
		var b strings.Builder
		for _, d := range fmt.Sprintf("%s%d%02d", lang, page, k) {
			b.WriteRune('a' + (d % 26))
		}
		words[k] = b.String()
	}
	return strings.Join(words, " ")
}

// The tiny mode: every mode on a few pages, the engine's and the bulk
// run's tables verified.
func TestBenchSmallSite(t *testing.T) {
	dir := writeSite(t, []string{"en-US", "fr-FR"}, 3)
	ctx, cancel := context.WithTimeout(context.Background(), testRun)
	defer cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-corpus", dir, "-verify", "-modes", "crawl,engine,bulk"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	t.Logf("\n%s", out.String())
	for _, mode := range []string{modeCrawl, modeEngine, modeBulk} {
		m := regexp.MustCompile(`\| ` + mode + ` \| (\d+) \| ([0-9.]+) \| [–0-9.]+ \| (\d+) \| ([0-9.]+) \|`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no %s row in\n%s", mode, out.String())
		}
		// 8 pages, and the seeds' redirects: http.FileServer answers
		// DIR/index.html with a redirect to DIR/.
		if pages, _ := strconv.Atoi(m[1]); pages != 10 {
			t.Errorf("%s fetched %d pages, want 10", mode, pages)
		}
		if cpu, _ := strconv.ParseFloat(m[4], 64); cpu <= 0 {
			t.Errorf("%s: CPU-ms a page %v, want > 0 (the child's rusage)", mode, cpu)
		}
	}
	engine := regexp.MustCompile(`\| engine \|[^\n]*\| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) / [0-9.]+ / [0-9.]+ \| (\d+) \|`).FindStringSubmatch(out.String())
	if engine == nil {
		t.Fatalf("engine row incomplete:\n%s", out.String())
	}
	if exports, _ := strconv.ParseFloat(engine[1], 64); exports < 1 {
		t.Errorf("export runs a page = %v, want ≥ 1 (every page is exported)", exports)
	}
	// Every one of the 8 documents written at least once, over 10 fetches.
	if writes, _ := strconv.ParseFloat(engine[2], 64); writes < 0.8 {
		t.Errorf("Bleve writes a page = %v, want ≥ 0.8", writes)
	}
	if rss, _ := strconv.Atoi(engine[4]); rss <= 0 {
		t.Errorf("peak RSS %d MB", rss)
	}
	for _, mode := range []string{modeEngine, modeBulk} {
		if !strings.Contains(out.String(), mode+": CPU by part") {
			t.Errorf("no CPU by part for %s:\n%s", mode, out.String())
		}
	}
	if n := bytes.Count(out.Bytes(), []byte("verify: agrees")); n != 2 {
		t.Errorf("%d of the engine's and the bulk run's tables verify, want 2:\n%s", n, out.String())
	}
	if !regexp.MustCompile(`(?m)^bulk: 8 documents.*; nothing due after [0-9.]+ s`).Match(out.Bytes()) {
		t.Errorf("the bulk run's line lacks its documents or its crawl's time:\n%s", out.String())
	}
}

func TestSeedPaths(t *testing.T) {
	dir := writeSite(t, []string{"b", "a"}, 1)
	got, err := seedPaths(dir, "")
	if err != nil || len(got) != 2 || got[0] != "a/index.html" || got[1] != "b/index.html" {
		t.Fatalf("seedPaths = %v, %v; want [a/index.html b/index.html]", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<a href=a/index.html>a</a>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := seedPaths(dir, ""); err != nil || len(got) != 1 || got[0] != "index.html" {
		t.Fatalf("with a root index.html: %v, %v", got, err)
	}
	if got, err := seedPaths(dir, "/x.html, y/z.html"); err != nil || len(got) != 2 || got[0] != "x.html" || got[1] != "y/z.html" {
		t.Fatalf("explicit: %v, %v", got, err)
	}
	if _, err := seedPaths(filepath.Join(dir, "missing"), ""); err == nil {
		t.Fatal("a missing corpus directory is accepted")
	}
	if code := run(context.Background(), []string{"-corpus", dir, "-modes", "bogus"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Fatalf("bad -modes: exit %d, want 2", code)
	}
	if got := fixtureSeeds(""); len(got) != 1 || got[0] != "" {
		t.Fatalf("fixtureSeeds(\"\") = %q, want the root", got)
	}
	if got := fixtureSeeds("/s0/3.html"); len(got) != 1 || got[0] != "s0/3.html" {
		t.Fatalf("fixtureSeeds(/s0/3.html) = %q", got)
	}
}

// Exactly one of -corpus, -fixture and -hostile, and a fixture or a
// hostile site of some pages.
func TestUsageCorpusOrFixture(t *testing.T) {
	dir := writeSite(t, []string{"en"}, 1)
	for _, args := range [][]string{
		{},
		{"-corpus", dir, "-fixture", "10"},
		{"-fixture", "-3"},
		{"-fixture", "0"},
		{"-fixture", "10", "-hostile", "1"},
		{"-corpus", dir, "-hostile", "1"},
		{"-hostile", "-1"},
	} {
		var errb bytes.Buffer
		if code := run(context.Background(), args, &bytes.Buffer{}, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if !bytes.Contains(errb.Bytes(), []byte("exactly one of -corpus DIR, -fixture N and -hostile N")) {
			t.Errorf("%q: no usage error in\n%s", args, errb.String())
		}
	}
}

// The fixture, frozen: both modes fetch its root and every page once,
// reach idle, and the engine's table verifies; the table has the disk
// column, and the search load asks the fixture's words.
func TestBenchFixture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testRun)
	defer cancel()
	var out, errb bytes.Buffer
	const pages = 200
	if code := run(ctx, []string{"-fixture", strconv.Itoa(pages), "-modes", "crawl,engine", "-verify", "-searches", "50", "-clients", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	t.Logf("\n%s", out.String())
	if !bytes.Contains(out.Bytes(), []byte("| peak RSS MB | disk MB |\n")) {
		t.Errorf("no disk MB column last in\n%s", out.String())
	}
	for _, mode := range []string{modeCrawl, modeEngine} {
		m := regexp.MustCompile(`\| ` + mode + ` \| (\d+) \|[^\n]*\| (\d+) \| ([0-9.]+) \|\n`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no %s row in\n%s", mode, out.String())
		}
		// The root and every page, once: nothing changes, nothing is due
		// again.
		if got, _ := strconv.Atoi(m[1]); got != pages+1 {
			t.Errorf("%s fetched %d pages, want %d (the root and every page)", mode, got, pages+1)
		}
		if rss, _ := strconv.Atoi(m[2]); rss <= 0 {
			t.Errorf("%s: peak RSS %d MB", mode, rss)
		}
		if disk, _ := strconv.ParseFloat(m[3], 64); disk <= 0 {
			t.Errorf("%s: disk %v MB, want > 0", mode, disk)
		}
	}
	// The 4 duplicates (pages/50) are one document each with their
	// originals.
	if !regexp.MustCompile(`engine: \d+ documents`).Match(out.Bytes()) {
		t.Errorf("no engine summary in\n%s", out.String())
	}
	if !bytes.Contains(out.Bytes(), []byte("verify: agrees")) {
		t.Errorf("the engine's table does not verify:\n%s", out.String())
	}
	if !bytes.Contains(out.Bytes(), []byte("then 50 searches, 2 clients")) {
		t.Errorf("no search load in\n%s", out.String())
	}
}

// -reopen measures searches alone over the table an earlier -keep run
// left: the same documents, no crawl; a directory with no table kept in
// it, or no -searches, is a usage error.
func TestReopenSearches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testRun)
	defer cancel()
	kept := filepath.Join(t.TempDir(), "kept")
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-fixture", "150", "-modes", "bulk", "-keep", kept}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	m := regexp.MustCompile(`bulk: (\d+) documents`).FindSubmatch(out.Bytes())
	if m == nil {
		t.Fatalf("no bulk summary in\n%s", out.String())
	}
	docs := string(m[1])
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"-reopen", kept, "-fixture", "150", "-searches", "60", "-clients", "3"}, &out, &errb); code != 0 {
		t.Fatalf("-reopen: exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	t.Logf("\n%s", out.String())
	row := regexp.MustCompile(`\| search \| ` + docs + ` \| 60 \| 3 \| \d+ \| [\d.]+ \| [\d.]+ \| 0 \| [\d.]+ \| (\d+) \| [\d.]+ \|\n`).FindSubmatch(out.Bytes())
	if row == nil {
		t.Fatalf("no search row of %s documents, 60 searches, none failed, in\n%s", docs, out.String())
	}
	if rss, _ := strconv.Atoi(string(row[1])); rss <= 0 {
		t.Errorf("peak RSS %d MB", rss)
	}
	if bytes.Contains(errb.Bytes(), []byte("pages in")) {
		t.Errorf("-reopen crawled:\n%s", errb.String())
	}
	for _, args := range [][]string{
		{"-reopen", t.TempDir(), "-searches", "10"}, // no table kept there
		{"-reopen", kept}, // nothing to measure
		{"-reopen", kept, "-searches", "10", "-corpus", t.TempDir()},
	} {
		errb.Reset()
		if code := run(ctx, args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, errb.String())
		}
	}
}

// The fixture is frozen: a page's content and Last-Modified do not move,
// and Last-Modified is old enough that the first revisit is the longest.
func TestFixtureFrozen(t *testing.T) {
	w, err := newFixture(100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Pages() != 100 || w.Original(99) == 99 || w.Original(97) != 97 {
		t.Errorf("fixture: %d pages, want 100 with the last 2 duplicates", w.Pages())
	}
	later := time.Now().Add(1000 * time.Hour)
	for p := range 100 {
		if v := w.VersionAt(p, later); v != 0 {
			t.Fatalf("page %d has version %d in 1000 hours", p, v)
		}
		if lm := w.LastModified(p, later); !lm.Equal(fixtureBorn) {
			t.Fatalf("page %d last modified %v, want %v", p, lm, fixtureBorn)
		}
	}
	if len(w.Links(0)) != 6 {
		t.Errorf("page 0 has %d links, want the next page and 5 more", len(w.Links(0)))
	}
}

// -cpuprofile makes its directory, and writes a profile a run.
func TestCPUProfileDir(t *testing.T) {
	dir := writeSite(t, []string{"en-US"}, 2)
	prof := filepath.Join(t.TempDir(), "not", "yet")
	ctx, cancel := context.WithTimeout(context.Background(), testRun)
	defer cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-corpus", dir, "-modes", "crawl", "-cpuprofile", prof}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb.String())
	}
	if fi, err := os.Stat(filepath.Join(prof, "crawl-1.pprof")); err != nil || fi.Size() == 0 {
		t.Fatalf("profile: %v", err)
	}
}

// -max-pages stops the crawl after that many pages and the engine runs to
// idle on them; -progress prints lines while it runs.
func TestMaxPagesProgress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testRun)
	defer cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-fixture", "500", "-modes", "engine", "-max-pages", "60", "-progress", "20ms"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if !regexp.MustCompile(`\| engine \| 60 \|`).Match(out.Bytes()) {
		t.Errorf("the engine did not stop at 60 pages:\n%s", out.String())
	}
	if !regexp.MustCompile(`bulkbench: +\d+ s  fetched \d+ \(\d+/s\)  applied \d+  backlog \d+  pending \d+  rss \d+\+\d+ MB \(peak \d+(; trims \d+: \d+ MB dropped, \d+ MB paged out, slowest \d+ ms, at most \d+ MB over)?\)  runs`).Match(errb.Bytes()) {
		t.Errorf("no progress line in\n%s", errb.String())
	}
}

// The progress line says what the trimmer did, once it has done
// something.
func TestTrimNote(t *testing.T) {
	if got := trimNote(budget.TrimStats{}); got != "" {
		t.Errorf("trimNote of no trims = %q, want none", got)
	}
	st := budget.TrimStats{Trims: 3, Dropped: 1200 << 20, Paged: 300 << 20, Slowest: 120 * time.Millisecond, Over: 700 << 20}
	if got, want := trimNote(st), "; trims 3: 1200 MB dropped, 300 MB paged out, slowest 120 ms, at most 700 MB over"; got != want {
		t.Errorf("trimNote = %q, want %q", got, want)
	}
}

// With -progress, the bulk path's course (the crawl's end, each stage's
// seed and drain) is printed with the seconds since the start, between
// the progress lines (none here: their interval is longer than the run),
// and then the figures once idle and those of the searches, ahead of the
// run's end (which waits for GC's first pass).
func TestProgressPrintsStages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testRun)
	defer cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-fixture", "200", "-modes", "bulk", "-progress", "1h", "-searches", "40"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, re := range []string{
		`bulkbench: +\d+ s  bulk crawl over: indexing fetched=\d+\n`,
		`bulkbench: +\d+ s  stage drained stage=\[parse links links-more cluster near\] took=`,
		`bulkbench: +\d+ s  stage's Before done stage=\[rank rank-outside\] took=`,
		`bulkbench: +\d+ s  stage drained stage=\[elect elect-rank near-docs near-check\] took=`,
		`bulkbench: +\d+ s  idle pages=\d+ crawl_s=\d+ bleve_writes=\d+ disk_mb=\d+ peak_mb=\d+\n`,
		`bulkbench: +\d+ s  searches queries=40 clients=8 per_s=\d+ p50_ms=[\d.]+ p99_ms=[\d.]+ peak_mb=\d+\n`,
	} {
		if !regexp.MustCompile(re).Match(errb.Bytes()) {
			t.Errorf("no line matching %s in\n%s", re, errb.String())
		}
	}
}

// Interrupted, the engine's child stops as cmd/search does on ^C and still
// writes its CPU profile.
func TestInterruptWritesProfile(t *testing.T) {
	defer func(d time.Duration) { stopWait = d }(stopWait)
	stopWait = testRun // stopping takes a minute and more under load
	prof := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(3*time.Second, cancel)
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-fixture", "20000", "-modes", "engine", "-cpuprofile", prof}, &out, &errb); code == 0 {
		t.Fatalf("exit 0 though interrupted\nstdout:\n%s", out.String())
	}
	if fi, err := os.Stat(filepath.Join(prof, "engine-1.pprof")); err != nil || fi.Size() == 0 {
		t.Fatalf("no profile of the interrupted run (%v)\nstderr:\n%s", err, errb.String())
	}
}

// With -profile-every, a run's CPU profile is one file a window, named by
// the window's start, each a profile pprof reads; no whole-run file.
func TestProfileWindows(t *testing.T) {
	prof := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), testRun)
	defer cancel()
	var out, errb bytes.Buffer
	args := []string{"-fixture", "2000", "-modes", "engine", "-max-pages", "400", "-cpuprofile", prof, "-profile-every", "300ms"}
	if code := run(ctx, args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb.String())
	}
	files, err := filepath.Glob(filepath.Join(prof, "engine-1-*s.pprof"))
	if err != nil || len(files) < 2 {
		t.Fatalf("window profiles %v (%v), want two or more\nstderr:\n%s", files, err, errb.String())
	}
	if files[0] != filepath.Join(prof, "engine-1-00000s.pprof") {
		t.Errorf("first window %s, want engine-1-00000s.pprof", files[0])
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // gzipped protobuf
			t.Errorf("%s is not a profile (%d bytes, %v)", f, len(b), err)
		}
	}
	if _, err := os.Stat(filepath.Join(prof, "engine-1.pprof")); err == nil {
		t.Error("a whole-run profile besides the windows")
	}
	// -profile-every needs -cpuprofile.
	if code := run(ctx, []string{"-fixture", "10", "-profile-every", "1s"}, &out, &errb); code != 2 {
		t.Errorf("-profile-every without -cpuprofile: exit %d, want 2", code)
	}
}

// A search load with failed queries (a timeout's 503) keeps its figures
// and says the first failure; only one with no answer at all is an error.
func TestSetSearches(t *testing.T) {
	boom := errors.New("503 Service Unavailable")
	var r Result
	if err := r.setSearches(loadgen.Result{Ops: 10, Errors: 3, Took: time.Second, P50: time.Millisecond, P99: 5 * time.Second}, boom); err != nil {
		t.Fatalf("setSearches with 3 of 10 failed = %v, want the figures kept", err)
	}
	if r.SearchErrors != 3 || r.SearchFirstError != boom.Error() || r.QueryP99 != 5 || r.QPS != 10 {
		t.Errorf("recorded %+v", r)
	}
	var out bytes.Buffer
	r.Mode, r.Searches, r.Clients = modeSearch, 10, 2
	printTable(&out, []Result{r})
	if !bytes.Contains(out.Bytes(), []byte("| 3 |")) || !bytes.Contains(out.Bytes(), []byte("first failure: 503 Service Unavailable")) {
		t.Errorf("the failures are not printed:\n%s", out.String())
	}
	if err := new(Result).setSearches(loadgen.Result{Ops: 4, Errors: 4}, boom); !errors.Is(err, boom) {
		t.Errorf("setSearches with every query failed = %v, want %v", err, boom)
	}
}
