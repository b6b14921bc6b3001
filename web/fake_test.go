package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/serving/feed"
)

// testNow is the clock of every test server.
var testNow = time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC)

// XSS payloads planted in the canned data. The browser test looks for the
// marker window.__xss.
const (
	xssScript = `<script>window.__xss=1;alert(1)</script>`
	xssImg    = `<img src=x onerror="window.__xss=1;alert(1)">`
	xssAttr   = `"><svg onload="window.__xss=1">`
	xss       = xssScript + xssImg + xssAttr
	xssURL    = `javascript:window.__xss=1;alert(1)`
	// evilPage is a crawlable URL full of markup characters.
	evilPage = `http://evil.example/p?a="><script>window.__xss=1</script>`
)

// fake is a Backend with canned data. Special queries: "syntax(" fails
// with ErrBadQuery, "slow" waits for the context, "boom" fails with a
// plain error, "panic" panics.
type fake struct {
	results map[string][]serving.Result // by query
	relaxed map[string]bool             // queries whose results are relaxed
	suggest map[string]string           // spelling suggestions, by query
	correct map[string]bool             // queries whose results are their suggestion's (unless verbatim)
	all     map[string]uint64           // pages with all the words of a relaxed query
	guessed map[string]bool             // queries whose total is an estimate
	docs    map[string]*feed.DocInfo    // by URL
	top     map[string]*serving.Top     // by host, "" for all
	stats   *Stats
	history []Sample
	err     error // when set, every method with a context returns it

	mu   sync.Mutex // guards last
	last []string   // calls, as "Search q n start", "Doc url", "Top host n"
}

var _ Backend = (*fake)(nil)

func (f *fake) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = append(f.last, fmt.Sprintf(format, args...))
}

func (f *fake) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.last...)
}

func (f *fake) special(ctx context.Context, key string) error {
	if f.err != nil {
		return f.err
	}
	switch key {
	case "slow":
		<-ctx.Done()
		return fmt.Errorf("search: %w", ctx.Err())
	case "boom":
		return fmt.Errorf("bleve: segment 7 is corrupt (secret detail)")
	case "panic":
		panic("the backend panicked")
	}
	return nil
}

func (f *fake) Search(ctx context.Context, q serving.Query) (*serving.Results, error) {
	f.record("Search %s %d %d", q.Q, q.N, q.Start)
	if err := f.special(ctx, q.Q); err != nil {
		return nil, err
	}
	if strings.Contains(q.Q, "(") && !strings.Contains(q.Q, ")") {
		return nil, fmt.Errorf("%w: unclosed parenthesis at offset %d", serving.ErrBadQuery, strings.Index(q.Q, "("))
	}
	all := f.results[q.Q]
	res := &serving.Results{Total: uint64(len(all)), Took: 1234 * time.Microsecond,
		Relaxed: f.relaxed[q.Q], AllWords: f.all[q.Q], Suggestion: f.suggest[q.Q], TotalEstimated: f.guessed[q.Q]}
	if f.correct[q.Q] && !q.Verbatim {
		all = f.results[res.Suggestion]
		res.Total, res.Corrected = uint64(len(all)), true
	}
	if q.Start < len(all) {
		res.Results = all[q.Start:min(len(all), q.Start+q.N)]
	}
	return res, nil
}

func (f *fake) Doc(ctx context.Context, url string) (*feed.DocInfo, error) {
	f.record("Doc %s", url)
	if err := f.special(ctx, url); err != nil {
		return nil, err
	}
	d, ok := f.docs[url]
	if !ok {
		return nil, fmt.Errorf("%w: no row for %s", serving.ErrNotFound, url)
	}
	return d, nil
}

func (f *fake) Top(ctx context.Context, host string, n int) (*serving.Top, error) {
	f.record("Top %s %d", host, n)
	if err := f.special(ctx, host); err != nil {
		return nil, err
	}
	t, ok := f.top[host]
	if !ok {
		return nil, fmt.Errorf("%w: no pages of host %s", serving.ErrNotFound, host)
	}
	return t, nil
}

func (f *fake) Stats(ctx context.Context) (*Stats, error) {
	if err := f.special(ctx, ""); err != nil {
		return nil, err
	}
	return f.stats, nil
}

func (f *fake) History() []Sample { return f.history }

// canned is the fixture: a small crawl of example.com, plus pages whose
// every field is an XSS payload.
func canned() *fake {
	ago := func(d time.Duration) time.Time { return testNow.Add(-d) }
	f := &fake{
		results: map[string][]serving.Result{},
		relaxed: map[string]bool{"percolator bigtable spanner": true},
		suggest: map[string]string{"percolatr": "percolator", "percolator bigtable spanner": "percolator bigtable spinner", "percolater": "percolator", xss: "evil " + xss},
		correct: map[string]bool{"percolater": true, xss: true},
		all:     map[string]uint64{},
		guessed: map[string]bool{},
		docs:    map[string]*feed.DocInfo{},
		top:     map[string]*serving.Top{},
	}
	f.results["percolator"] = []serving.Result{
		{
			URL: "https://www.example.com/percolator", Title: "Percolator: incremental processing",
			Snippet: []serving.Span{
				{Text: "Large-scale incremental processing using "},
				{Text: "Percolator", Mark: true},
				{Text: " & distributed transactions"},
			},
			Score: 3.25, PageRank: 2.5, FetchedAt: ago(3 * time.Minute), IndexedAt: ago(2 * time.Minute),
			Duplicates:  []string{"https://mirror.example.com/percolator", "http://example.com/percolator"},
			Similar:     []string{"https://www.example.com/percolator?sid=8f3a", "https://www.example.com/percolator-2026"},
			Anchors:     []string{"the Percolator paper", "next", "Percolator", "[19]", "read more", "percolator", "42", "Up", "Transactions in Bigtable"},
			ClusterSize: 3,
		},
		{
			URL: "https://www.example.com/bigtable", Title: "Bigtable",
			Snippet: []serving.Span{{Text: "Built on Bigtable; "}, {Text: "percolator", Mark: true}, {Text: " adds transactions."}},
			Score:   1.5, PageRank: 0.15, FetchedAt: ago(2 * time.Hour), IndexedAt: ago(2 * time.Hour),
			// nil Duplicates and Anchors: the API must still say [].
			ClusterSize: 1,
			Section:     "sec-2.1", SectionHeading: "Transactions & locks",
		},
	}
	for i := range 25 {
		f.results["many"] = append(f.results["many"], serving.Result{
			URL:     fmt.Sprintf("https://www.example.com/p%02d", i),
			Title:   fmt.Sprintf("Page %02d", i),
			Snippet: []serving.Span{{Text: "one of "}, {Text: "many", Mark: true}},
			Score:   float64(100 - i), PageRank: 1, FetchedAt: ago(time.Hour), IndexedAt: ago(time.Hour),
			ClusterSize: 1,
		})
	}
	f.results["evil"] = []serving.Result{
		{
			URL: xssURL, Title: xss,
			Snippet: []serving.Span{{Text: xss}, {Text: xssScript, Mark: true}, {Text: "</mark>" + xssImg}},
			Score:   1, PageRank: 1, FetchedAt: ago(time.Minute), IndexedAt: ago(time.Minute),
			Duplicates: []string{xssURL, evilPage, "data:text/html,<script>window.__xss=1</script>", "//evil.example/x"},
			Similar:    []string{xssURL, "javascript:alert(1)"},
			Anchors:    []string{xss, xssURL}, ClusterSize: 5,
			Section: xss, SectionHeading: xss,
		},
		{
			URL: evilPage, Title: xssImg, Snippet: []serving.Span{{Text: xssAttr, Mark: true}},
			Score: 0.5, PageRank: 0.5, FetchedAt: ago(time.Minute), IndexedAt: ago(time.Minute),
			Anchors: []string{xssImg}, ClusterSize: 1,
			Section: xssAttr, SectionHeading: xss,
		},
	}

	fetched := ago(3 * time.Minute)
	f.docs["https://www.example.com/percolator"] = &feed.DocInfo{
		URL: "https://www.example.com/percolator", Row: "com.example.www/percolator",
		Canonical: "https://www.example.com/percolator", ContentHash: "9f86d081884c7d65",
		PageRank: 2.5, Status: "ok", HTTPStatus: 200, FetchedAt: fetched,
		Title:    "Percolator: incremental processing",
		Text:     "Large-scale incremental processing using distributed transactions and notifications.",
		Outlinks: []string{"https://www.example.com/bigtable", "https://www.example.com/"},
		Inlinks: []feed.Inlink{
			{URL: "https://www.example.com/", Anchor: "the Percolator paper"},
			{URL: "https://blog.example.org/caffeine", Anchor: ""},
		},
		Duplicates: []string{"https://mirror.example.com/percolator"},
		Similar:    []string{"https://www.example.com/percolator?sid=8f3a"},
		Exported:   true, ExportedAt: fetched.Add(1500 * time.Millisecond), Indexed: true,
		Stages: feed.Stages{
			Fetched: fetched, Parsed: fetched.Add(200 * time.Millisecond), Clustered: fetched.Add(900 * time.Millisecond),
			Exported: fetched.Add(1500 * time.Millisecond), Searchable: fetched.Add(2300 * time.Millisecond),
		},
		History: []feed.Fetch{
			{Time: fetched, Status: 200, Changed: true},
			{Time: ago(26 * time.Hour), Status: 200, Changed: false},
		},
		NextFetch: testNow.Add(6 * time.Hour),
	}
	// A fetched page nothing knows much about: every slice nil.
	f.docs["https://www.example.com/lonely"] = &feed.DocInfo{
		URL: "https://www.example.com/lonely", Row: "com.example.www/lonely", Status: "unfetched",
	}
	// An internationalized host, stored in ASCII, with an inlink through a
	// redirect.
	f.docs["http://xn--bcher-kva.de/"] = &feed.DocInfo{
		URL: "http://xn--bcher-kva.de/", Row: "de.xn--bcher-kva:http/", Status: "ok", Canonical: "http://xn--bcher-kva.de/",
		Inlinks: []feed.Inlink{{URL: "http://xn--caf-dma.example/", Anchor: "books", Via: "http://xn--bcher-kva.de/index.html"}},
	}
	evilDoc := &feed.DocInfo{
		URL: evilPage, Row: xss, Canonical: xssURL, ContentHash: xss, PageRank: 1,
		Status: `ok" onmouseover="window.__xss=1`, HTTPStatus: 200, FetchedAt: ago(time.Minute),
		Title: xss, Text: "before " + xss + " after", RedirectTo: xssURL, Error: xss,
		Outlinks:   []string{xssURL, evilPage},
		Inlinks:    []feed.Inlink{{URL: xssURL, Anchor: xss}, {URL: evilPage, Anchor: xssImg}},
		Duplicates: []string{xssURL, "data:text/html,<script>window.__xss=1</script>"},
		History:    []feed.Fetch{{Time: ago(time.Minute), Status: 200, Changed: true}},
	}
	f.docs[evilPage] = evilDoc
	f.docs[xssURL] = evilDoc

	f.top[""] = &serving.Top{
		Pages: []serving.TopPage{
			{URL: "https://www.example.com/", Title: "Example home", PageRank: 12.75, Inbound: 1234, InboundHost: 56},
			{URL: "https://www.example.com/percolator", Title: "Percolator: incremental processing", PageRank: 2.5, Inbound: 3},
			{URL: xssURL, Title: xss, PageRank: 0.2, Inbound: 0},
		},
		Hosts: []serving.HostCount{{Host: "www.example.com", Pages: 1169}, {Host: xss, Pages: 1}},
	}
	f.top["www.example.com"] = &serving.Top{
		Host:  "www.example.com",
		Pages: []serving.TopPage{{URL: "https://www.example.com/", Title: "Example home", PageRank: 12.75, Inbound: 1234}},
		Hosts: []serving.HostCount{{Host: "www.example.com", Pages: 1169}},
	}
	f.top["empty.example"] = &serving.Top{Host: "empty.example"} // nil slices

	f.stats = &Stats{
		Pages: 1169, Indexed: 1100, Frontier: 42, Due: 7, PendingNotifications: 12, FailedNotifications: 1,
		ExportQueue: 5, Idle: false, Crawling: true, IndexName: "main", Feeder: "feeding",
		Observers: []ObserverCount{
			{Name: "parse", Column: "fetch:body", Pending: 10, Runs: 1200, Commits: 1190, Conflicts: 3, RunTimeS: 12.5},
			{Name: "export", Column: "doc:dirty", Pending: 2, Failed: 1, Runs: 900, Commits: 880, RunTimeS: 3.25},
			{Name: xss, Column: xss},
		},
		Latency: serving.Latency{Count: 1100, P50: 1.2, P90: 2.5, P99: 4.75},
		Time:    testNow,
	}
	for i := range 60 {
		f.history = append(f.history, Sample{
			Time: testNow.Add(time.Duration(i-59) * 10 * time.Second), Pages: 20 * i, Indexed: 18 * i,
			Fetched: 2 + float64(i%7), Exported: 1.8 + float64(i%5), Pending: 60 - i,
			LatencyP50: 1 + float64(i%3)/10, LatencyP90: 2 + float64(i%4)/10, LatencyP99: 4 + float64(i%5)/10,
		})
	}
	return f
}

// newTestServer serves b with the test clock; the log goes to the returned
// buffer (read it after the requests are done).
func newTestServer(t testing.TB, b Backend, opt Options) (*Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	if opt.Now == nil {
		opt.Now = func() time.Time { return testNow }
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	return New(b, opt), logs
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// do sends one request to h and returns the response and its body.
func do(t testing.TB, h http.Handler, method, target string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

func get(t testing.TB, h http.Handler, target string) (*http.Response, string) {
	t.Helper()
	return do(t, h, http.MethodGet, target)
}

// getJSON GETs target, checks the status and the content type, and
// decodes the body into a generic map.
func getJSON(t testing.TB, h http.Handler, target string, status int) map[string]any {
	t.Helper()
	res, body := get(t, h, target)
	if res.StatusCode != status {
		t.Fatalf("GET %s: status %d, want %d; body %s", target, res.StatusCode, status, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("GET %s: Content-Type %q", target, ct)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("GET %s: %v; body %s", target, err, body)
	}
	return m
}

// wantKeys checks that m has exactly the keys want, plus any of extra.
func wantKeys(t testing.TB, what string, m map[string]any, want []string, extra ...string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, k := range want {
		allowed[k] = true
		if _, ok := m[k]; !ok {
			t.Errorf("%s: key %q missing; have %v", what, k, keys(m))
		}
	}
	for _, k := range extra {
		allowed[k] = true
	}
	for k := range m {
		if !allowed[k] {
			t.Errorf("%s: unexpected key %q", what, k)
		}
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// wantArray checks that m[k] is a JSON array (never null) of length n, or
// any length when n < 0.
func wantArray(t testing.TB, what string, m map[string]any, k string, n int) []any {
	t.Helper()
	a, ok := m[k].([]any)
	if !ok {
		t.Fatalf("%s: %q is %#v, want an array", what, k, m[k])
	}
	if n >= 0 && len(a) != n {
		t.Fatalf("%s: %q has %d elements, want %d", what, k, len(a), n)
	}
	return a
}

// wantContains checks that body contains every string.
func wantContains(t testing.TB, what, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("%s: missing %q", what, s)
		}
	}
}
