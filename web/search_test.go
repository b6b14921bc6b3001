package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/serving"
)

func TestSearchPageEmptyQuery(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	for _, target := range []string{"/", "/search", "/search?q=", "/search?q=%20%20", "/?q=+"} {
		res, body := get(t, s, target)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d", target, res.StatusCode)
		}
		wantContains(t, target, body, `<input type="search" name="q" value=""`, "autofocus", "Search the crawl")
		if strings.Contains(body, `class="results"`) {
			t.Errorf("GET %s: shows results", target)
		}
	}
	// Only the home page's view, once: no search.
	if calls := s.b.(*fake).calls(); !slices.Equal(calls, []string{"Top  12"}) {
		t.Errorf("an empty query reached the backend: %v", calls)
	}
}

func TestSearchPage(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	res, body := get(t, s, "/search?q=percolator")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "search", body,
		`<title>percolator – caffeine</title>`,
		`value="percolator"`,
		// title, linked to the URL
		`<a href="https://www.example.com/percolator" rel="noreferrer nofollow">Percolator: incremental processing</a>`,
		// the URL and its document page
		`<span>https://www.example.com/percolator</span>`,
		`href="/doc?url=https%3A%2F%2Fwww.example.com%2Fpercolator"`,
		// escaped snippet, marked
		`Large-scale incremental processing using <mark>Percolator</mark> &amp; distributed transactions`,
		"crawled 3 minutes ago", "crawled 2 hours ago",
		// PageRank and score in the details, not the main line
		"<dt>PageRank</dt><dd>2.5</dd>", "<dt>score</dt><dd>3.25</dd>", "<dt>PageRank</dt><dd>0.15</dd>",
		// duplicates, expandable without script
		`<details class="dups">`, `<summary>2 duplicates</summary>`,
		`<a href="https://mirror.example.com/percolator" rel="noreferrer nofollow">`,
		// near-copies folded under it, listed the same way
		`<details class="dups similar">`, `<summary>2 similar pages</summary>`,
		`<a href="https://www.example.com/percolator?sid=8f3a" rel="noreferrer nofollow">`,
		// anchors: no navigation, numbers or repeats; one line
		`Linked as: <q>the Percolator paper</q>, <q>Percolator</q>, <q>Transactions in Bigtable</q>`,
		// exact totals and time
		"Results <b>1–2</b> of <b>2</b>", "(1.2 ms)",
	)
	if strings.Contains(body, "about") || strings.Contains(body, "<nav class=\"pages\"") || strings.Contains(body, "<p class=\"notice\">") {
		t.Error("an exact total says about, a single page has a pager, or a strict result says it is relaxed")
	}
	if strings.Contains(body, `rel="next"`) || strings.Contains(body, `rel="prev"`) {
		t.Error("one page of results has pagination")
	}
	if got := s.b.(*fake).calls(); !slices.Equal(got, []string{"Search percolator 10 0"}) {
		t.Errorf("backend calls %v", got)
	}
}

// TestEstimatedTotal: an estimated total says "about" on the page and
// total_estimated in the API; an exact one neither.
func TestEstimatedTotal(t *testing.T) {
	f := canned()
	f.guessed["many"] = true
	s, _ := newTestServer(t, f, Options{})
	_, body := get(t, s, "/search?q=many")
	wantContains(t, "estimated", body, "Results <b>1–10</b> of about <b>25</b>")
	_, body = get(t, s, "/search?q=many&start=100")
	wantContains(t, "estimated, past the end", body, "No more results: about <b>25</b> in all")
	if m := getJSON(t, s, "/api/search?q=many", http.StatusOK); m["total_estimated"] != true || m["total"] != 25.0 {
		t.Errorf("API: total %v, total_estimated %v", m["total"], m["total_estimated"])
	}
	if m := getJSON(t, s, "/api/search?q=percolator", http.StatusOK); m["total_estimated"] != nil {
		t.Errorf("API: an exact total has total_estimated %v", m["total_estimated"])
	}
}

func TestSearchPagination(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	cases := []struct {
		target      string
		first, last string
		prev, next  string // hrefs, "" for none
	}{
		{"/search?q=many", "Page 00", "Page 09", "", "/search?q=many&amp;start=10"},
		{"/search?q=many&start=10", "Page 10", "Page 19", "/search?q=many", "/search?q=many&amp;start=20"},
		{"/search?q=many&start=20", "Page 20", "Page 24", "/search?q=many&amp;start=10", ""},
		{"/search?q=many&start=5&n=5", "Page 05", "Page 09", "/search?n=5&amp;q=many", "/search?n=5&amp;q=many&amp;start=10"},
		{"/search?q=many&start=3&n=5", "Page 03", "Page 07", "/search?n=5&amp;q=many", "/search?n=5&amp;q=many&amp;start=8"},
	}
	for _, c := range cases {
		res, body := get(t, s, c.target)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", c.target, res.StatusCode)
		}
		wantContains(t, c.target, body, ">"+c.first+"</a>", ">"+c.last+"</a>", "of <b>25</b>")
		for rel, href := range map[string]string{"prev": c.prev, "next": c.next} {
			tag := `<a rel="` + rel + `" href="` + href + `">`
			if href == "" && strings.Contains(body, `rel="`+rel+`"`) {
				t.Errorf("GET %s: has a %s link", c.target, rel)
			}
			if href != "" && !strings.Contains(body, tag) {
				t.Errorf("GET %s: no %s", c.target, tag)
			}
		}
	}
	// Past the end: a page saying so, not an error.
	res, body := get(t, s, "/search?q=many&start=100")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "No more results") {
		t.Errorf("past the end: %d %.200s", res.StatusCode, body)
	}
	res, body = get(t, s, "/search?q=nothing")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "No pages match <b>nothing</b>") {
		t.Errorf("no hits: %d %.200s", res.StatusCode, body)
	}
}

// TestSearchPageBadInput: mistakes are 400 pages that keep the query in
// the box and say what went wrong, never 500s.
func TestSearchPageBadInput(t *testing.T) {
	s, logs := newTestServer(t, canned(), Options{})
	long := strings.Repeat("a", serving.MaxQueryLen+1)
	cases := []struct {
		target string
		msg    string
	}{
		{"/search?q=" + url.QueryEscape("(percolator"), "bad query: unclosed parenthesis at offset 0"},
		{"/?q=" + url.QueryEscape("title:(x"), "bad query: unclosed parenthesis"},
		{"/search?q=" + long, "the query is too long: 513 bytes, at most 512"},
		{"/search?q=x&n=1000", "n must be from 1 to 100, not 1000"},
		{"/search?q=x&n=0", "n must be from 1 to 100, not 0"},
		{"/search?q=x&n=abc", "n must be an integer from 1 to 100, not &#34;abc&#34;"},
		{"/search?q=x&start=-1", "start must be from 0 to 10000, not -1"},
		{"/search?q=x&start=zz", "start must be an integer"},
	}
	for _, c := range cases {
		res, body := get(t, s, c.target)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: status %d, want 400", c.target, res.StatusCode)
		}
		wantContains(t, c.target, body, c.msg, "<!doctype html>", `name="q"`)
	}
	_, body := get(t, s, "/search?q="+url.QueryEscape("(percolator"))
	wantContains(t, "syntax error", body, "That query could not be understood", `value="(percolator"`, "Quotes must be closed")
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("bad input was logged as an error: %s", logs)
	}
}

func TestAPISearch(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	m := getJSON(t, s, "/api/search?q=percolator", http.StatusOK)
	wantKeys(t, "response", m, []string{"total", "took_ms", "relaxed", "suggestion", "results"})
	if m["total"] != 2.0 {
		t.Errorf("total %v", m["total"])
	}
	if m["took_ms"] != 1.234 {
		t.Errorf("took_ms %v", m["took_ms"])
	}
	results := wantArray(t, "response", m, "results", 2)
	if m["relaxed"] != false || m["suggestion"] != "" {
		t.Errorf("relaxed %v, suggestion %v", m["relaxed"], m["suggestion"])
	}
	resultKeys := []string{"url", "title", "snippet", "snippet_html", "score", "pagerank", "fetched_at", "indexed_at", "duplicates", "similar", "similar_count", "anchors", "cluster_size"}
	for i, r := range results {
		r := r.(map[string]any)
		wantKeys(t, "result", r, resultKeys, "section")
		for _, k := range []string{"fetched_at", "indexed_at"} {
			if _, err := time.Parse(time.RFC3339, r[k].(string)); err != nil {
				t.Errorf("result %d: %s: %v", i, k, err)
			}
		}
	}
	r0, r1 := results[0].(map[string]any), results[1].(map[string]any)
	want := map[string]any{
		"url":          "https://www.example.com/percolator",
		"title":        "Percolator: incremental processing",
		"snippet":      "Large-scale incremental processing using Percolator & distributed transactions",
		"snippet_html": "Large-scale incremental processing using <mark>Percolator</mark> &amp; distributed transactions",
		"score":        3.25,
		"pagerank":     2.5,
		"fetched_at":   "2026-05-14T11:57:00Z",
		"indexed_at":   "2026-05-14T11:58:00Z",
		"cluster_size": 3.0,
	}
	for k, v := range want {
		if r0[k] != v {
			t.Errorf("result 0: %s = %#v, want %#v", k, r0[k], v)
		}
	}
	if dups := wantArray(t, "result 0", r0, "duplicates", 2); dups[0] != "https://mirror.example.com/percolator" {
		t.Errorf("duplicates %v", dups)
	}
	if sim := wantArray(t, "result 0", r0, "similar", 2); sim[0] != "https://www.example.com/percolator?sid=8f3a" || r0["similar_count"] != 2.0 {
		t.Errorf("similar %v, similar_count %v", sim, r0["similar_count"])
	}
	wantArray(t, "result 1", r1, "similar", 0)
	if _, ok := r0["section"]; ok {
		t.Errorf("result 0: section %v, want none", r0["section"])
	}
	if sec, _ := r1["section"].(map[string]any); sec["heading"] != "Transactions & locks" || sec["url"] != "https://www.example.com/bigtable#sec-2.1" {
		t.Errorf("result 1: section %v", r1["section"])
	}
	wantArray(t, "result 0", r0, "anchors", 9) // all of them; the page filters
	// nil in the backend, [] on the wire
	wantArray(t, "result 1", r1, "duplicates", 0)
	wantArray(t, "result 1", r1, "anchors", 0)

	// no hits: results is [], not null
	m = getJSON(t, s, "/api/search?q=nothing", http.StatusOK)
	wantArray(t, "no hits", m, "results", 0)
	if m["total"] != 0.0 {
		t.Errorf("no hits: total %v", m["total"])
	}
}

func TestAPISearchParams(t *testing.T) {
	f := canned()
	s, _ := newTestServer(t, f, Options{})
	for _, target := range []string{
		"/api/search?q=many",
		"/api/search?q=many&n=100",
		"/api/search?q=many&n=3&start=20",
		"/api/search?q=%20many%20&n=1&start=0",
		"/api/search?q=many&start=10000",
	} {
		getJSON(t, s, target, http.StatusOK)
	}
	want := []string{"Search many 10 0", "Search many 100 0", "Search many 3 20", "Search many 1 0", "Search many 10 10000"}
	if got := f.calls(); !slices.Equal(got, want) {
		t.Errorf("backend calls\n%v, want\n%v", got, want)
	}
	m := getJSON(t, s, "/api/search?q=many&n=3&start=20", http.StatusOK)
	if r := wantArray(t, "page", m, "results", 3); r[0].(map[string]any)["title"] != "Page 20" {
		t.Errorf("page: %v", r[0])
	}
}

func TestAPISearchBadInput(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	long := strings.Repeat("é", serving.MaxQueryLen/2+1)
	cases := []struct {
		name, target, msg string
	}{
		{"no q", "/api/search", "the query is empty"},
		{"empty q", "/api/search?q=", "the query is empty"},
		{"blank q", "/api/search?q=%20%09", "the query is empty"},
		{"long q", "/api/search?q=" + url.QueryEscape(long), "the query is too long: 514 bytes, at most 512"},
		{"syntax", "/api/search?q=" + url.QueryEscape("(x"), "bad query: unclosed parenthesis"},
		{"n=0", "/api/search?q=x&n=0", "n must be from 1 to 100, not 0"},
		{"n=101", "/api/search?q=x&n=101", "n must be from 1 to 100, not 101"},
		{"n=1000", "/api/search?q=x&n=1000", "n must be from 1 to 100, not 1000"},
		{"n=-5", "/api/search?q=x&n=-5", "n must be from 1 to 100, not -5"},
		{"n=abc", "/api/search?q=x&n=abc", `n must be an integer from 1 to 100, not "abc"`},
		{"n=1.5", "/api/search?q=x&n=1.5", "n must be an integer"},
		{"n huge", "/api/search?q=x&n=99999999999999999999999", "n must be an integer"},
		{"start=-1", "/api/search?q=x&start=-1", "start must be from 0 to 10000, not -1"},
		{"start=abc", "/api/search?q=x&start=abc", "start must be an integer"},
		{"start too far", "/api/search?q=x&start=10001", "start must be from 0 to 10000, not 10001"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := getJSON(t, s, c.target, http.StatusBadRequest)
			wantKeys(t, c.name, m, []string{"error"})
			if msg, _ := m["error"].(string); !strings.Contains(msg, c.msg) {
				t.Errorf("error %q, want %q", msg, c.msg)
			}
		})
	}
}

func BenchmarkSearchPage(b *testing.B) {
	s, _ := newTestServer(b, canned(), Options{})
	req := httptest.NewRequest(http.MethodGet, "/search?q=many", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkAPISearch(b *testing.B) {
	s, _ := newTestServer(b, canned(), Options{})
	req := httptest.NewRequest(http.MethodGet, "/api/search?q=many", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// TestForgivingQueries: relaxed results say so, a suggestion links to its
// search, a corrected query says what it shows and links to the query as
// written, in the page and in the API; every page says one thing.
func TestForgivingQueries(t *testing.T) {
	f := canned()
	f.results["percolator bigtable spanner"] = f.results["percolator"]
	f.results["percolator bigtable"] = f.results["percolator"]
	f.relaxed["percolator bigtable"], f.all["percolator bigtable"] = true, 1
	s, _ := newTestServer(t, f, Options{})
	cases := []struct{ q, want string }{
		{"percolator bigtable spanner", `<p class="notice">No page has all the words; showing pages with most of them. Did you mean <a href="/search?q=percolator&#43;bigtable&#43;spinner">percolator bigtable spinner</a>?</p>`},
		{"percolator bigtable", `<p class="notice">Only 1 page has all the words; pages with most of them follow.</p>`},
		{"percolatr", `<p class="notice">No pages match <b>percolatr</b>. Did you mean <a href="/search?q=percolator">percolator</a>?</p>`},
		{"percolater", `<p class="notice">Showing results for <a href="/search?q=percolator"><b>percolator</b></a>; search instead for <a href="/search?q=percolater&amp;verbatim=1">percolater</a>.</p>`},
		{"nothing", `<p class="notice">No pages match <b>nothing</b>.</p>`},
	}
	for _, c := range cases {
		_, body := get(t, s, "/search?q="+url.QueryEscape(c.q))
		wantContains(t, c.q, body, c.want)
		if n := strings.Count(body, `class="notice"`) + strings.Count(body, "No pages match") + strings.Count(body, "Did you mean"); n > 3 || strings.Count(body, `class="notice"`) != 1 {
			t.Errorf("%q: more than one message", c.q)
		}
	}
	if _, body := get(t, s, "/search?q=percolator"); strings.Contains(body, `class="notice"`) {
		t.Error("a strict result has a message")
	}
	// The corrected query's pages link to it; the query as written, to itself verbatim.
	f.results["percolator"] = f.results["many"]
	if _, body := get(t, s, "/search?q=percolater"); !strings.Contains(body, `href="/search?q=percolator&amp;start=10"`) {
		t.Error("the pager of a corrected query does not search the correction")
	}
	if _, body := get(t, s, "/search?q=percolater&verbatim=1"); !strings.Contains(body, "No pages match <b>percolater</b>. Did you mean") {
		t.Error("verbatim=1 is corrected")
	}
	m := getJSON(t, s, "/api/search?q="+url.QueryEscape("percolator bigtable spanner"), http.StatusOK)
	if m["relaxed"] != true || m["suggestion"] != "percolator bigtable spinner" || m["all_words"] != 0.0 {
		t.Errorf("API: relaxed %v, suggestion %v, all words %v", m["relaxed"], m["suggestion"], m["all_words"])
	}
	m = getJSON(t, s, "/api/search?q=percolater", http.StatusOK)
	if m["corrected"] != true || m["suggestion"] != "percolator" || m["total"] == 0.0 {
		t.Errorf("API: corrected %v, suggestion %v, total %v", m["corrected"], m["suggestion"], m["total"])
	}
	getJSON(t, s, "/api/search?q=percolater&verbatim=2", http.StatusBadRequest)
}

func TestShownAnchors(t *testing.T) {
	cases := []struct {
		in    []string
		title string
		want  []string
	}{
		{[]string{"next", "Previous", "up", "19", "[19]", "»", "← Prev", "Home", "read more", "Chapter 12", "Part IV", "C"}, "", nil},
		{[]string{"29.2. Disk Full Failure", "disk full failure", "Disk full", "Chapter 29"}, "29.2. Disk Full Failure", []string{"Disk full"}},
		{[]string{"Prev | Up", "Next | I.1. Getting the Source via Git", "Git"}, "I.1. Getting the Source via Git", []string{"Git"}},
		{[]string{"Next | Getting the Source", "ab|cd"}, "", []string{"Getting the Source", "ab"}},
		{[]string{"64. Index Access Method Interface Definition", "Index Access Method"}, "Chapter 64. Index Access Method Interface Definition", []string{"Index Access Method"}},
		// A table of contents: the page, then its sections.
		{[]string{"Section 9.27.1", "9.27. System Administration Functions | 9.27.1. Configuration Settings Functions | 9.27.2. Server Signaling Functions", "9.27.2. Server Signaling Functions", "admin functions"},
			"9.27. System Administration Functions", []string{"admin functions"}},
		{[]string{"Main Functions | Escaping Strings for Inclusion in SQL Commands", "PQexec"}, "34.3. Command Execution Functions", []string{"Main Functions", "PQexec"}},
		{[]string{"9.270. Other", "9.2. Setup"}, "9.27. Admin", []string{"9.270. Other", "9.2. Setup"}},
		{[]string{"VACUUM", "vacuum", " VACUUM ", "Routine Vacuuming"}, "", []string{"VACUUM", "Routine Vacuuming"}},
		{[]string{"ab", "bc", "cd", "de"}, "", []string{"ab", "bc", "cd"}},
		{[]string{strings.Repeat("long ", 30), "short"}, "", []string{strings.TrimSpace(strings.Repeat("long ", 18)) + "…"}},
		{[]string{strings.Repeat("x", 60), strings.Repeat("y", 60)}, "", []string{strings.Repeat("x", 60)}},
	}
	for _, c := range cases {
		if got := shownAnchors(c.in, c.title); !slices.Equal(got, c.want) {
			t.Errorf("shownAnchors(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPager(t *testing.T) {
	show := func(ps []pageLink) string {
		var b strings.Builder
		for _, p := range ps {
			switch {
			case p.Num == 0:
				b.WriteString("… ")
			case p.Current:
				fmt.Fprintf(&b, "[%d] ", p.Num)
			default:
				fmt.Fprintf(&b, "%d ", p.Num)
			}
		}
		return strings.TrimSpace(b.String())
	}
	cases := []struct {
		total    uint64
		start, n int
		want     string
	}{
		{5, 0, 10, ""},
		{0, 20, 10, ""},
		{25, 0, 10, "[1] 2 3"},
		{25, 20, 10, "1 2 [3]"},
		{1000, 0, 10, "[1] 2 3 4 5 … 100"},
		{1000, 500, 10, "1 … 47 48 49 50 [51] 52 53 54 55 … 100"},
		{1000, 990, 10, "1 … 96 97 98 99 [100]"},
		{25, 3, 5, "1 2 3 4 5"},
		{1_000_000, 0, 100, "[1] 2 3 4 5 … 101"}, // no page starts past MaxStart
	}
	for _, c := range cases {
		if got := show(pager(serving.Query{Q: "q"}, c.total, c.start, c.n)); got != c.want {
			t.Errorf("pager(%d, %d, %d) = %q, want %q", c.total, c.start, c.n, got, c.want)
		}
	}
	if p := pager(serving.Query{Q: "a b"}, 30, 0, 10); p[1].Href != "/search?q=a+b&start=10" {
		t.Errorf("href %q", p[1].Href)
	}
}
