package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/internal/corpus"
)

// deployment is cmd/search running in the test process, as a user runs it.
type deployment struct {
	t    *testing.T
	base string
	stop func() int
	log  *syncBuffer // what it wrote to stderr
}

// start runs the command with args and waits until it listens.
func start(t *testing.T, args ...string) *deployment {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	code := make(chan int, 1)
	log := &syncBuffer{}
	go func() { code <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), log, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case c := <-code:
		cancel()
		t.Fatalf("search exited with %d:\n%s", c, log.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("search did not start")
	}
	d := &deployment{t: t, base: "http://" + addr, log: log}
	stopped := false
	d.stop = func() int {
		if stopped {
			return 0
		}
		stopped = true
		cancel()
		c := <-code
		if t.Failed() {
			t.Logf("search log:\n%s", log.String())
		}
		return c
	}
	t.Cleanup(func() { d.stop() })
	return d
}

// waitLog waits until the command has logged a line containing want.
func (d *deployment) waitLog(want string, timeout time.Duration) {
	d.t.Helper()
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(d.log.String(), want) {
			return
		}
	}
	d.t.Fatalf("no %q in the log after %v:\n%s", want, timeout, d.log.String())
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// get decodes the JSON answer of path into v and returns the status.
func (d *deployment) get(path string, v any) int {
	d.t.Helper()
	resp, err := http.Get(d.base + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, v); err != nil {
			d.t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode
}

type stats struct {
	Pages, Indexed, Frontier int
	Pending                  int `json:"pending_notifications"`
	Failed                   int `json:"failed_notifications"`
	Idle                     bool
	Latency                  struct{ Count int }
}

// waitIdle polls /api/stats until idle.
func (d *deployment) waitIdle(timeout time.Duration) stats {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	var s stats
	for time.Now().Before(deadline) {
		if d.get("/api/stats", &s) == http.StatusOK && s.Idle {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Which observer's notifications are left says what did not settle.
	var raw struct {
		Observers json.RawMessage `json:"observers"`
	}
	d.get("/api/stats", &raw)
	d.t.Fatalf("not idle after %v: %+v\nobservers: %s", timeout, s, raw.Observers)
	return s
}

type hit struct {
	URL        string
	Title      string
	Snippet    string
	Duplicates []string
	Anchors    []string
	FetchedAt  time.Time `json:"fetched_at"`
	IndexedAt  time.Time `json:"indexed_at"`
}

func (d *deployment) search(q string) (int, []hit) {
	d.t.Helper()
	var r struct {
		Total   int
		Results []hit
	}
	d.get("/api/search?n=20&q="+url.QueryEscape(q), &r)
	return r.Total, r.Results
}

// site is a small changing web: pages by path, changed by the test.
type site struct {
	mu    sync.Mutex
	pages map[string]string
	hits  atomic.Int64
}

func (s *site) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == "" {
		delete(s.pages, path)
	} else {
		s.pages[path] = body
	}
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, "User-agent: *\nAllow: /\n")
		return
	}
	s.mu.Lock()
	body, ok := s.pages[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, body)
}

func page(title, body string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>%s</title></head><body><p>%s</p>", title, body)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">link to %s</a> `, l, strings.Trim(l, "/.html"))
	}
	b.WriteString("</body></html>")
	return b.String()
}

// TestQuickStart runs the one command on a small web that changes, and
// checks what a user sees: pages searchable while the crawl runs, one
// result for duplicates with the duplicates listed, a page that turns 404
// vanishing, a changed page searchable by its new words, and stage times.
func TestQuickStart(t *testing.T) {
	s := &site{pages: map[string]string{
		"/":           page("Home", "welcome to the aardvark archive", "/a.html", "/dup1.html", "/dup2.html", "/gone.html", "/evil.html"),
		"/a.html":     page("Aardvark facts", "the aardvark eats termites at night", "/"),
		"/dup1.html":  page("Copy", "identical duplicated wombat content", "/"),
		"/dup2.html":  page("Copy", "identical duplicated wombat content", "/"),
		"/gone.html":  page("Doomed", "this quokka page will disappear", "/"),
		"/evil.html":  page("<script>window.__xss=1</script>Evil", "&lt;img src=x onerror=alert(1)&gt; evil pangolin text", "/"),
		"/other.html": page("Unlinked", "never crawled", "/"),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dir := t.TempDir()
	d := start(t, "-data", dir, "-seeds", srv.URL+"/", "-allow-private", "-delay", "0",
		"-min-interval", "500ms", "-initial-interval", "1s", "-max-interval", "2s", "-no-sitemaps")

	st := d.waitIdleWith(60*time.Second, func(s stats) bool { return s.Indexed >= 4 })
	if st.Pages != 6 {
		t.Fatalf("pages = %d, want 6", st.Pages)
	}

	// The one page with both words first; the home page, with one of
	// them, after it (fewer than ten pages have both: relaxed).
	if n, hits := d.search("aardvark termites"); n < 1 || hits[0].URL != srv.URL+"/a.html" {
		t.Fatalf("aardvark: %d %+v", n, hits)
	}
	n, hits := d.search("wombat")
	if n != 1 || len(hits[0].Duplicates) != 1 {
		t.Fatalf("duplicates should show once with the other listed: %d %+v", n, hits)
	}
	if hits[0].URL != srv.URL+"/dup1.html" || hits[0].Duplicates[0] != srv.URL+"/dup2.html" {
		t.Fatalf("canonical: %+v", hits[0])
	}
	if _, hits := d.search("quokka"); len(hits) != 1 {
		t.Fatalf("quokka before removal: %+v", hits)
	}
	if hits[0].IndexedAt.Before(hits[0].FetchedAt) {
		t.Fatalf("indexed before fetched: %+v", hits[0])
	}

	// The page turns 404 and the home page changes; recrawls follow.
	s.set("/gone.html", "")
	s.set("/a.html", page("Aardvark facts", "the aardvark now eats ants", "/"))
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, q := d.search("quokka")
		_, a := d.search("ants")
		if len(q) == 0 && len(a) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("changes not searchable: quokka %+v, ants %+v", q, a)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, hits := d.search("termites"); len(hits) != 0 {
		t.Fatalf("old content still found: %+v", hits)
	}

	var doc struct {
		Status   string
		Exported bool
		Stages   map[string]time.Time
		Inlinks  []struct{ URL, Anchor string }
	}
	// A recrawl of the page may be on its way through the chain when the
	// search finds its content (the stages are the newest fetch's): look
	// until that fetch is searchable too.
	stages := []string{"fetched", "parsed", "clustered", "exported", "searchable"}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		doc.Stages, doc.Inlinks = nil, nil // this look's alone
		if code := d.get("/api/doc?url="+url.QueryEscape(srv.URL+"/a.html"), &doc); code != http.StatusOK {
			t.Fatalf("doc: %d", code)
		}
		if !doc.Stages["searchable"].IsZero() || time.Now().After(deadline) {
			break
		}
	}
	for _, stage := range stages {
		if doc.Stages[stage].IsZero() {
			t.Errorf("stage %s missing: %+v", stage, doc.Stages)
		}
	}
	if doc.Stages["searchable"].Before(doc.Stages["fetched"]) {
		t.Errorf("searchable before fetched: %+v", doc.Stages)
	}
	if !doc.Exported || doc.Status != "ok" || len(doc.Inlinks) != 1 {
		t.Errorf("doc: %+v", doc)
	}
	if code := d.get("/api/doc?url="+url.QueryEscape(srv.URL+"/nowhere.html"), nil); code != http.StatusNotFound {
		t.Errorf("unknown doc: %d", code)
	}
	if code := d.get("/api/search?q=%22unterminated", nil); code != http.StatusBadRequest {
		t.Errorf("bad query: %d", code)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	// Serving again from the same directory, and rebuilding the index
	// from the table, give the same answers.
	for _, args := range [][]string{{"-data", dir}, {"-data", dir, "-rebuild"}} {
		d := start(t, args...)
		d.waitIdle(30 * time.Second)
		if n, hits := d.search("wombat"); n != 1 || len(hits[0].Duplicates) != 1 {
			t.Errorf("%v: wombat: %d %+v", args, n, hits)
		}
		if _, hits := d.search("quokka"); len(hits) != 0 {
			t.Errorf("%v: quokka came back: %+v", args, hits)
		}
		if _, hits := d.search("ants"); len(hits) != 1 {
			t.Errorf("%v: ants: %+v", args, hits)
		}
		d.stop()
	}
}

func (d *deployment) waitIdleWith(timeout time.Duration, ok func(stats) bool) stats {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := d.waitIdle(time.Until(deadline))
		if ok(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCorpusQuickStart runs the quick start on the PostgreSQL manual (or,
// unless CAFFEINE_CORPUS=1, on its first pages) and searches for phrases
// that only one page has.
func TestCorpusQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus crawl in -short")
	}
	pages := corpus.Pages(t)
	limit := 120
	if os.Getenv("CAFFEINE_CORPUS") == "1" {
		limit = 0
	}
	srv := httptest.NewServer(corpus.Handler(pages, nil))
	defer srv.Close()
	d := start(t, "-data", t.TempDir(), "-seeds", srv.URL+"/index.html", "-allow-private", "-delay", "0",
		"-max-pages", strconv.Itoa(limit), "-no-sitemaps")
	st := d.waitIdleWith(15*time.Minute, func(s stats) bool { return s.Indexed > 0 })
	t.Logf("idle: %+v", st)

	// Phrases of indexed pages that no other indexed page has: each must
	// find its page first.
	checked := 0
	for start := 0; checked < 5 && start < 200; start += 20 {
		var r struct{ Results []hit }
		d.get(fmt.Sprintf("/api/search?q=postgresql&n=20&start=%d", start), &r)
		for _, h := range r.Results {
			if checked == 5 {
				break
			}
			var doc struct{ Text string }
			d.get("/api/doc?url="+url.QueryEscape(h.URL), &doc)
			phrase := rarePhrase(t, d, doc.Text, h.URL)
			if phrase == "" {
				continue
			}
			n, hits := d.search(`"` + phrase + `"`)
			if n != 1 || hits[0].URL != h.URL {
				t.Errorf("phrase %q of %s: %d hits %+v", phrase, h.URL, n, hits)
			}
			checked++
		}
	}
	if checked < 3 {
		t.Fatalf("only %d unique phrases checked", checked)
	}
}

// rarePhrase returns four consecutive words of text found (as a phrase)
// only in the page u, or "".
func rarePhrase(t *testing.T, d *deployment, text, u string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	for i := len(words) / 3; i+4 <= len(words) && i < len(words)/3+40; i += 4 {
		p := strings.Join(words[i:i+4], " ")
		if len(p) < 20 {
			continue
		}
		if n, hits := d.search(`"` + p + `"`); n == 1 && hits[0].URL == u {
			return p
		}
	}
	return ""
}

// TestDemo runs the quick start that needs nothing from outside the
// repository: -demo serves the bundled manual on 127.0.0.1, crawls (its
// first pages here) and indexes it into a temporary directory that is
// removed on exit. Only the demo site's address is allowed.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("demo crawl in -short")
	}
	d := start(t, "-demo", "-max-pages", "40")
	st := d.waitIdleWith(5*time.Minute, func(s stats) bool { return s.Indexed > 0 })
	if st.Pages != 40 {
		t.Errorf("pages = %d, want 40 (-max-pages)", st.Pages)
	}
	// Which 40 pages come first varies, and "vacuum" may be only in their
	// tables of contents, which are boilerplate; most pages of the manual
	// say PostgreSQL in their own text.
	n, hits := d.search("postgresql")
	if n == 0 || !strings.HasPrefix(hits[0].URL, "http://127.0.0.1:") {
		t.Fatalf("postgresql: %d %+v", n, hits)
	}
	log := d.log.String()
	for _, want := range []string{
		"search: demo: serving the PostgreSQL 15 manual (1169 pages, bundled in the repository) at http://127.0.0.1:",
		"a temporary directory removed on exit",
		"open " + d.base + "/ to search while it crawls",
		"try vacuum",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	_, tmp, _ := strings.Cut(log, "the table and index go to ")
	tmp, _, _ = strings.Cut(tmp, ",")
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("data directory %q: %v", tmp, err)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", tmp, err)
	}
	if !strings.Contains(d.log.String(), "search: demo: removed "+tmp) {
		t.Errorf("removal not said:\n%s", d.log.String())
	}

	// A kept directory serves the site at the same URLs again.
	dir := t.TempDir()
	seed := func(d *deployment) string {
		_, s, _ := strings.Cut(d.log.String(), "bundled in the repository) at ")
		s, _, _ = strings.Cut(s, "\n")
		return s
	}
	d = start(t, "-demo", "-data", dir, "-max-pages", "5")
	d.waitIdleWith(5*time.Minute, func(s stats) bool { return s.Indexed > 0 })
	first := seed(d)
	d.stop()
	d = start(t, "-demo", "-data", dir, "-max-pages", "5")
	if again := seed(d); again != first || !strings.Contains(d.log.String(), "and are kept") {
		t.Errorf("seed %q, then %q:\n%s", first, again, d.log.String())
	}
	d.stop()
	if _, err := os.Stat(filepath.Join(dir, demoAddrFile)); err != nil {
		t.Error(err)
	}
}

func TestDemoUsage(t *testing.T) {
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte("http://example.com/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-demo", "-seeds", "http://example.com/"},
		{"-demo", "-seeds-file", seeds},
		{"-demo", "-no-crawl"},
		{},
	} {
		var out syncBuffer
		if code := run(context.Background(), args, &out, nil); code != 2 || !strings.Contains(out.String(), "usage") && !strings.Contains(out.String(), "-demo crawls the bundled sample site") {
			t.Errorf("search %q = %d, want 2:\n%s", args, code, out.String())
		}
	}
}

// TestRecrawlSpool: while search holds the table, a recrawl request
// dropped into DIR/recrawl/ (as crawler recrawl does) makes the page due
// now, and the running crawler fetches it again.
func TestRecrawlSpool(t *testing.T) {
	s := &site{pages: map[string]string{
		"/":       page("Home", "welcome", "/a.html"),
		"/a.html": page("Aardvark facts", "the aardvark eats termites", "/"),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dir := t.TempDir()
	d := start(t, "-data", dir, "-seeds", srv.URL+"/", "-allow-private", "-delay", "0",
		"-min-interval", "1h", "-initial-interval", "1h", "-no-sitemaps")
	d.waitIdleWith(60*time.Second, func(s stats) bool { return s.Indexed == 2 })
	s.set("/a.html", page("Aardvark facts", "the aardvark now eats ants", "/"))
	path, err := crawl.QueueRecrawl(filepath.Join(dir, "recrawl"), crawl.RecrawlRequest{URLs: []string{srv.URL + "/a.html"}})
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, hits := d.search("ants"); len(hits) == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the recrawled page's new words are not searchable:\n%s", d.log.String())
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("request file: %v, want applied and deleted", err)
	}
	d.waitLog("recrawl request applied", 10*time.Second)
}

// TestCrawlAhead: a crawl paced to the chain (-crawl-ahead) indexes what
// an unpaced one does; a negative pace is refused.
func TestCrawlAhead(t *testing.T) {
	var out syncBuffer
	if code := run(context.Background(), []string{"-data", t.TempDir(), "-crawl-ahead", "-1"}, &out, nil); code != 2 || !strings.Contains(out.String(), "-crawl-ahead -1") {
		t.Errorf("search -crawl-ahead -1 = %d, want 2 and the flag named:\n%s", code, out.String())
	}
	crawl60(t, "-crawl-ahead", "4")
}

// crawl60 crawls 60 pages of the corpus with search and flags until idle,
// and checks that most are indexed; it returns the running command.
func crawl60(t *testing.T, flags ...string) *deployment {
	t.Helper()
	if testing.Short() {
		t.Skip("corpus crawl in -short")
	}
	pages := corpus.Pages(t)
	srv := httptest.NewServer(corpus.Handler(pages, nil))
	t.Cleanup(srv.Close)
	d := start(t, append([]string{"-data", t.TempDir(), "-seeds", srv.URL + "/index.html", "-allow-private", "-delay", "0",
		"-max-pages", "60", "-no-sitemaps"}, flags...)...)
	st := d.waitIdleWith(5*time.Minute, func(s stats) bool { return s.Indexed > 0 })
	if st.Pages != 60 || st.Indexed < 50 {
		t.Errorf("search %s: idle with %+v, want 60 pages and most indexed", strings.Join(flags, " "), st)
	}
	return d
}

// TestBulk: -bulk crawls first and then indexes what it fetched, and says
// so.
func TestBulk(t *testing.T) {
	d := crawl60(t, "-bulk")
	d.waitLog("bulk crawl over: indexing", time.Second)
}
