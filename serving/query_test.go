package serving

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

// queryDocs is a small site of real-looking pages on a few hosts.
func queryDocs() []webtable.Export {
	return []webtable.Export{
		upsert(1, "a", "http://127.0.0.1:8000/sort.html", "Sorting", "How to sort a list in Python: use sorted() or list.sort().", 2),
		upsert(1, "b", "http://www.example.com/file", "The file", "What is a file? A file holds bytes.", 1),
		upsert(1, "c", "http://example.com/decorators", "Decorators", "What is a decorator? A function that wraps another.", 3),
		upsert(1, "d", "http://docs.example.com:8080/hamlet", "To be or not to be", "Hamlet's soliloquy, act three.", 0.5),
		upsert(1, "e", "http://127.0.0.1:9000/vacuum", "Vacuum", "Vacuum reclaims storage; autovacuum runs it.", 5),
		upsert(1, "f", "http://notexample.com/", "Elsewhere", "A page on another host about bytes.", 0.2),
	}
}

func queryIndex(t testing.TB) *Index {
	t.Helper()
	ix := openIndex(t)
	apply(t, ix, queryDocs()...)
	return ix
}

func sorted(xs []string) []string { return slices.Sorted(slices.Values(xs)) }

// TestStopWords: words the analyzer drops never empty a query; a query of
// stop words only matches titles word for word.
func TestStopWords(t *testing.T) {
	ix := queryIndex(t)
	cases := []struct {
		q    string
		want []string
	}{
		{"how to sort a list", []string{"http://127.0.0.1:8000/sort.html"}},
		{"the file", []string{"http://www.example.com/file"}},
		{"what is a decorator", []string{"http://example.com/decorators"}},
		{"title:the file", []string{"http://www.example.com/file"}},
		{`"what is a decorator"`, []string{"http://example.com/decorators"}},
		{"the & file", []string{"http://www.example.com/file"}},
		// stop words only: titles, word for word
		{"the", []string{"http://www.example.com/file"}},
		{"to be or not to be", []string{"http://docs.example.com:8080/hamlet"}},
		{`"to be or not to be"`, []string{"http://docs.example.com:8080/hamlet"}},
		{`"be to"`, nil},
		{"the -file", nil},
	}
	for _, c := range cases {
		if got := find(t, ix, c.q); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.q, got, c.want)
		}
	}
}

// TestBadQueryMessages: every user error is ErrBadQuery with a plain
// message, found before searching.
func TestBadQueryMessages(t *testing.T) {
	ix := queryIndex(t)
	cases := []struct{ q, msg string }{
		{"text:/.{1000}/", "too complex"},
		{"vacuum~3", "fuzziness of vacuum~3 must be 0, 1 or 2"},
		{"B~-1", "fuzziness of B~-1 must be 0, 1 or 2"},
		{"/vacuum$/", "matches whole terms"},
		{`/\bvacuum/`, "matches whole terms"},
		{`/\Avacuum/`, "matches whole terms"},
		{"/^vacuum/", "a regular expression is written /re/"},
		{"/", "a regular expression is written /re/"},
		{"/[a-/", "bad regular expression /[a-/: missing closing ]"},
		{"title:(", "nothing to search for in title:("},
		{"vacuum~x", ""},
		{"&", "no words to search for"},
		{"-the", "no words to search for"},
		{"-vacuum", "only exclusions"},
		{"-vacuum -file", "write * -word"},
		{"-vacuum -the", "only exclusions"},
		{"foo:bar", `unknown field "foo"`},
		{"http://example.com/", `unknown field "http"`},
		{"title:>5", "field title cannot be searched this way"},
		{"host:exa mple", ""},
		{"host:bad$host", "host: needs a host name"},
		{"site:example.com:99999", "site: needs a host name"},
		{"site:*.example.com", "without wildcards"},
		{"site:/exa.*/", "not a regular expression"},
		{"a* b* c* d* e* f* g* h* i*", "too many wildcard"},
	}
	for _, c := range cases {
		_, err := ix.Search(context.Background(), Query{Q: c.q, N: 10})
		if c.q == "host:exa mple" {
			// "mple" is a word of its own: a valid query.
			if err != nil {
				t.Errorf("%q: %v", c.q, err)
			}
			continue
		}
		if !errors.Is(err, ErrBadQuery) {
			t.Errorf("%q: %v, want ErrBadQuery", c.q, err)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %q, want %q", c.q, err, c.msg)
		}
		plain(t, c.q, err)
	}
}

// plain fails when a bad-query message shows Go internals.
func plain(t testing.TB, q string, err error) {
	t.Helper()
	for _, bad := range []string{"runtime error", "panic", "strconv.", "slice bounds", "goroutine"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("%q: the message shows %q: %v", q, bad, err)
		}
	}
}

// TestTooManyTerms: a term pattern matching more terms than maxExpansion
// is a bad query, reported by the index and mapped.
func TestTooManyTerms(t *testing.T) {
	ix := openIndex(t)
	words := make([]string, maxExpansion+10)
	for i := range words {
		words[i] = fmt.Sprintf("tok%05d", i)
	}
	apply(t, ix, upsert(1, "a", "http://a.example/", "Many", strings.Join(words, " "), 1))
	for _, q := range []string{"tok*", "text:/tok.*/", "tok0000~1 tok*"} {
		_, err := ix.Search(context.Background(), Query{Q: q, N: 10})
		if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "matches more than 1024 terms") {
			t.Errorf("%q: %v", q, err)
		}
	}
	if got := find(t, ix, "tok0001*"); len(got) != 1 {
		t.Errorf("a narrow prefix: %v", got)
	}
}

// TestHostAndSite: host: matches a host on any port or on the one given;
// site: matches a host and its subdomains.
func TestHostAndSite(t *testing.T) {
	ix := queryIndex(t)
	cases := []struct {
		q    string
		want []string
	}{
		{"host:127.0.0.1", []string{"http://127.0.0.1:8000/sort.html", "http://127.0.0.1:9000/vacuum"}},
		{"host:127.0.0.1:8000", []string{"http://127.0.0.1:8000/sort.html"}},
		{"host:127.0.0.1:8001", nil},
		{"host:www.example.com", []string{"http://www.example.com/file"}},
		{"host:WWW.Example.COM.", []string{"http://www.example.com/file"}},
		{"host:example.com", []string{"http://example.com/decorators"}},
		{"host:docs.example.com", []string{"http://docs.example.com:8080/hamlet"}},
		{`host:"example.com"`, []string{"http://example.com/decorators"}},
		{"site:example.com", []string{"http://docs.example.com:8080/hamlet", "http://example.com/decorators", "http://www.example.com/file"}},
		{"site:example.com:8080", []string{"http://docs.example.com:8080/hamlet"}},
		{"site:127.0.0.1:8000", []string{"http://127.0.0.1:8000/sort.html"}},
		{"site:xample.com", nil},
		{"site:com", []string{"http://docs.example.com:8080/hamlet", "http://example.com/decorators", "http://notexample.com/", "http://www.example.com/file"}},
		{"site:example.com file", []string{"http://www.example.com/file"}},
		{"bytes -site:example.com", []string{"http://notexample.com/"}},
		{"site:example.com -host:www.example.com", []string{"http://docs.example.com:8080/hamlet", "http://example.com/decorators"}},
		{"site:127.0.0.1:9000 vacuum", []string{"http://127.0.0.1:9000/vacuum"}},
		{"site:127.0.0.1:8000 vacuum", nil},
		{"host:*.example.com", []string{"http://www.example.com/file"}},
		// url is a keyword too: the whole URL, quoted or escaped
		{`url:"http://example.com/decorators"`, []string{"http://example.com/decorators"}},
		{`url:http\://example.com/decorators`, []string{"http://example.com/decorators"}},
	}
	for _, c := range cases {
		if got := sorted(find(t, ix, c.q)); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.q, got, c.want)
		}
	}
}

func TestEscapeHostValues(t *testing.T) {
	for in, want := range map[string]string{
		"host:a:1":               `host:a\:1`,
		"x host:a:1 y":           `x host:a\:1 y`,
		"(site:a:1)":             `(site:a\:1)`,
		"-site:a:1":              `-site:a\:1`,
		`host:a\:1`:              `host:a\:1`,
		`"host:a:1"`:             `"host:a:1"`,
		`ghost:a:1`:              `ghost:a:1`,
		`host:"a:1" site:b`:      `host:"a:1" site:b`,
		"title:x host:[::1]:80":  `title:x host:[\:\:1]\:80`,
		"host:":                  "host:",
		"host:a:b:c":             `host:a\:b\:c`,
		"no fields here: at all": "no fields here: at all",
	} {
		if got := escapeHostValues(in); got != want {
			t.Errorf("escapeHostValues(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMatchAll: * lists every page by PageRank without scoring, and with
// exclusions all pages but theirs (exclusions alone are a bad query).
func TestMatchAll(t *testing.T) {
	ix := queryIndex(t)
	for _, q := range []string{"*", "*:*", "**"} {
		res, err := ix.Search(context.Background(), Query{Q: q, N: 3})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		var got []string
		for _, r := range res.Results {
			got = append(got, r.URL)
		}
		want := []string{"http://127.0.0.1:9000/vacuum", "http://example.com/decorators", "http://127.0.0.1:8000/sort.html"}
		if res.Total != 6 || !slices.Equal(got, want) {
			t.Errorf("%q: %d %v, want 6 %v", q, res.Total, got, want)
		}
	}
	if got := find(t, ix, "* -vacuum -file"); len(got) != 4 || got[0] != "http://example.com/decorators" {
		t.Errorf("* with exclusions: %v", got)
	}
	p, err := parse(ix.bi.Mapping(), Query{Q: "*", N: 10})
	if err != nil || p.ranked || p.costly {
		t.Errorf("* is planned as ranked=%v costly=%v (%v)", p.ranked, p.costly, err)
	}
}

// TestSearchLimit: searches beyond MaxSearches wait for a slot as long as
// their context allows; costly ones get half the slots, so cheap ones
// still run while costly ones wait.
func TestSearchLimit(t *testing.T) {
	ix, err := OpenIndex(t.TempDir()+"/index", Options{MaxSearches: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	apply(t, ix, queryDocs()...)
	search := func(q string, wait time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_, err := ix.Search(ctx, Query{Q: q, N: 10})
		return err
	}

	// One costly search holds the only costly slot: another costly one
	// times out waiting, a cheap one runs.
	release, err := ix.limit.acquire(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := search("vacu*", 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second costly search: %v, want a deadline", err)
	}
	if err := search("vacuum", time.Minute); err != nil {
		t.Errorf("a cheap search beside a costly one: %v", err)
	}
	// Both slots taken: every search waits.
	release2, err := ix.limit.acquire(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := search("vacuum", 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a search over the limit: %v, want a deadline", err)
	}
	// A waiting search runs as soon as a slot is free.
	done := make(chan error)
	go func() { done <- search("vacuum", time.Minute) }()
	release2()
	if err := <-done; err != nil {
		t.Errorf("a waiting search: %v", err)
	}
	release()
	if err := search("vacu*", time.Minute); err != nil {
		t.Errorf("a costly search after release: %v", err)
	}
	// Nothing leaked: all slots are free again.
	if len(ix.limit.all) != 0 || len(ix.limit.costly) != 0 {
		t.Errorf("slots held: %d, costly %d", len(ix.limit.all), len(ix.limit.costly))
	}
}

// FuzzQuery: every query string either runs or is a bad query with a
// plain message; nothing panics, nothing is an internal error.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		"vacuum", "how to sort a list", "the file", "what is a decorator", "the", `"to be or not to be"`,
		"text:/.{1000}/", "vacuum~3", "B~-1", "/vacuum$/", `/\bvacuum/`, "/^vacuum/", "title:(",
		"host:127.0.0.1", "host:127.0.0.1:8000", "site:example.com", "site:127.0.0.1:8000", "*", "*:*",
		"-vacuum", "+vacuum -file title:sort^2", "pagerank:>1", `fetched_at:>"2020-01-01"`, "vacu*",
		"/vac.*/", "vacuum~1", "a:b:c", "(x", "127", `"a phrase"~1`, "url:http\\://example.com/", "lang:en",
		"vacum", "vacum sort -file", "site:example.com vacum storage", "+vacum +sort", "title:vacum bytes",
	} {
		f.Add(s)
	}
	ix := queryIndex(f)
	f.Fuzz(func(t *testing.T, s string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := ix.Search(ctx, Query{Q: s, N: 10})
		if err == nil {
			return
		}
		if !errors.Is(err, ErrBadQuery) {
			t.Fatalf("%q: %v", s, err)
		}
		plain(t, s, err)
	})
}

func TestSplitHost(t *testing.T) {
	for in, want := range map[string][2]string{
		"Example.COM.":    {"example.com", ""},
		"bücher.de":       {"xn--bcher-kva.de", ""},
		"bücher.de:8080":  {"xn--bcher-kva.de", "8080"},
		"127.0.0.1:8000":  {"127.0.0.1", "8000"},
		"[::1]:8000":      {"[::1]", "8000"},
		"[::1]":           {"[::1]", ""},
		"under_score.com": {"under_score.com", ""},
	} {
		h, p, err := splitHost(in)
		if err != nil || h != want[0] || p != want[1] {
			t.Errorf("splitHost(%q) = %q, %q, %v; want %q, %q", in, h, p, err, want[0], want[1])
		}
	}
	for _, in := range []string{"", ":80", "a:0", "a:65536", "a:08", "a b", "a/b", "-a.com", "a$", "[::1", "a:b"} {
		if _, _, err := splitHost(in); err == nil {
			t.Errorf("splitHost(%q) accepted", in)
		}
	}
}

// A C++ scope (std::thread, QtConcurrent::run) is a word, not a field:
// its parts are required; quoted or escaped, it is unchanged.
func TestScopes(t *testing.T) {
	ix := openIndex(t)
	thread := upsert(1, "thread", "http://cpp.example/thread.html", "std::thread Class Reference", "The class thread represents a single thread of execution.", 1)
	vector := upsert(1, "vector", "http://cpp.example/vector.html", "std::vector Class Template Reference", "A standard container which offers fixed time access to individual elements.", 1)
	apply(t, ix, thread, vector)
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"std::thread", []string{thread.URL}},
		{"std::vector access", []string{vector.URL}},
		{`"std::vector"`, []string{vector.URL}},
		{`std\:\:thread`, []string{thread.URL}},
		{"title:std::thread", []string{thread.URL}},
	} {
		if got := find(t, ix, c.q); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.q, got, c.want)
		}
	}
	if got := escapeScopes(`"a::b" c::d e\::f`); got != `"a::b" c\:\:d e\::f` {
		t.Errorf("escapeScopes: %s", got)
	}
}
