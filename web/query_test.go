package web

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// indexBackend answers searches and top lists from a real serving index,
// the rest from canned data.
type indexBackend struct {
	*fake
	ix *serving.Index
}

func (b indexBackend) Search(ctx context.Context, q serving.Query) (*serving.Results, error) {
	return b.ix.Search(ctx, q)
}

func (b indexBackend) Top(ctx context.Context, host string, n int) (*serving.Top, error) {
	return b.ix.Top(ctx, host, n)
}

// realServer is a server over a Bleve index on t.TempDir() holding a few
// pages on a few hosts.
func realServer(t *testing.T, iopt serving.Options, opt Options) (*Server, *syncBuffer) {
	t.Helper()
	ix, err := serving.OpenIndex(filepath.Join(t.TempDir(), "index"), iopt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	pages := []struct {
		url, title, text string
		pr               float64
	}{
		{"http://127.0.0.1:8000/sort.html", "Sorting", "How to sort a list in Python: use sorted() or list.sort().", 2},
		{"http://www.example.com/file", "The file", "What is a file? A file holds bytes.", 1},
		{"http://example.com/decorators", "Decorators", "What is a decorator? A function that wraps another.", 3},
		{"http://docs.example.com:8080/hamlet", "To be or not to be", "Hamlet's soliloquy, act three.", 0.5},
		{"http://127.0.0.1:9000/vacuum", "Vacuum", "Vacuum reclaims storage; autovacuum runs it.", 5},
	}
	var us []serving.Update
	for i, p := range pages {
		d := &webtable.Doc{URL: p.url, Host: webtable.HostOf(p.url), Title: p.title, Text: p.text,
			PageRank: p.pr, FetchedAt: testNow.Add(-time.Hour), ClusterSize: 1}
		us = append(us, serving.Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: string(rune('a' + i)), URL: p.url, Doc: d}})
	}
	if _, err := ix.Apply(us); err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, indexBackend{canned(), ix}, opt)
}

func apiURLs(t *testing.T, s *Server, q string) []string {
	t.Helper()
	m := getJSON(t, s, "/api/search?q="+url.QueryEscape(q), http.StatusOK)
	var urls []string
	for _, r := range m["results"].([]any) {
		urls = append(urls, r.(map[string]any)["url"].(string))
	}
	return urls
}

// TestRealSearch: stop words, host: and site: on a real index, the same
// through the API and the page.
func TestRealSearch(t *testing.T) {
	s, _ := realServer(t, serving.Options{}, Options{})
	cases := []struct {
		q    string
		want []string
	}{
		{"how to sort a list", []string{"http://127.0.0.1:8000/sort.html"}},
		{"the file", []string{"http://www.example.com/file"}},
		{"what is a decorator", []string{"http://example.com/decorators"}},
		{"to be or not to be", []string{"http://docs.example.com:8080/hamlet"}},
		{"host:127.0.0.1", []string{"http://127.0.0.1:9000/vacuum", "http://127.0.0.1:8000/sort.html"}},
		{"host:127.0.0.1:8000", []string{"http://127.0.0.1:8000/sort.html"}},
		{"site:127.0.0.1:8000", []string{"http://127.0.0.1:8000/sort.html"}},
		{"site:example.com function", []string{"http://example.com/decorators"}},
		{"*", []string{"http://127.0.0.1:9000/vacuum", "http://example.com/decorators", "http://127.0.0.1:8000/sort.html", "http://www.example.com/file", "http://docs.example.com:8080/hamlet"}},
		{"* -vacuum -file", []string{"http://example.com/decorators", "http://127.0.0.1:8000/sort.html", "http://docs.example.com:8080/hamlet"}},
		{"site:example.com -function", []string{"http://www.example.com/file", "http://docs.example.com:8080/hamlet"}},
	}
	for _, c := range cases {
		if got := apiURLs(t, s, c.q); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("/api/search?q=%s: %v, want %v", c.q, got, c.want)
		}
		res, body := get(t, s, "/search?q="+url.QueryEscape(c.q))
		if res.StatusCode != http.StatusOK {
			t.Errorf("/search?q=%s: status %d", c.q, res.StatusCode)
		}
		for _, u := range c.want {
			wantContains(t, "/search?q="+c.q, body, `<a href="`+u+`"`)
		}
	}
}

// TestRealSearchBadQueries: the queries that once answered 500, a Go
// runtime message, or nothing are 400s with a plain message, as JSON and
// as a page, and none is logged as an error.
func TestRealSearchBadQueries(t *testing.T) {
	s, logs := realServer(t, serving.Options{}, Options{})
	cases := []struct{ q, msg string }{
		{"text:/.{1000}/", "too complex"},
		{"vacuum~3", "must be 0, 1 or 2"},
		{"B~-1", "must be 0, 1 or 2"},
		{"/vacuum$/", "matches whole terms"},
		{`/\bvacuum/`, "matches whole terms"},
		{"/^vacuum/", "a regular expression is written /re/"},
		{"title:(", "nothing to search for in title:("},
		{"site:bad$host", "needs a host name"},
		{"host:127.0.0.1:99999", "needs a host name"},
		{"nosuchfield:x", "unknown field"},
		{"-vacuum", "only exclusions"},
		{"-vacuum -sort", "write * -word"},
	}
	for _, c := range cases {
		m := getJSON(t, s, "/api/search?q="+url.QueryEscape(c.q), http.StatusBadRequest)
		msg, _ := m["error"].(string)
		if !strings.HasPrefix(msg, "bad query: ") || !strings.Contains(msg, c.msg) || strings.Contains(msg, "runtime error") {
			t.Errorf("/api/search?q=%s: %q, want %q", c.q, msg, c.msg)
		}
		res, body := get(t, s, "/search?q="+url.QueryEscape(c.q))
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("/search?q=%s: status %d", c.q, res.StatusCode)
		}
		wantContains(t, "/search?q="+c.q, body, "<!doctype html>", `name="q"`, c.msg)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("bad queries logged as errors: %s", logs)
	}
}

// TestRealMatchAllConcurrent: 20 concurrent q=*&n=100 (ten were 504s
// once) all answer, through a limiter of two slots.
func TestRealMatchAllConcurrent(t *testing.T) {
	s, _ := realServer(t, serving.Options{MaxSearches: 2}, Options{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			m := getJSON(t, s, "/api/search?q=*&n=100", http.StatusOK)
			if m["total"] != 5.0 {
				t.Errorf("total %v", m["total"])
			}
		})
	}
	wg.Wait()
}

// TestTimeoutLogged: a 504 is logged with the query and how long it ran.
func TestTimeoutLogged(t *testing.T) {
	s, logs := newTestServer(t, canned(), Options{QueryTimeout: 20 * time.Millisecond})
	res, _ := get(t, s, "/api/search?q=slow&n=7")
	if res.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status %d", res.StatusCode)
	}
	l := logs.String()
	for _, want := range []string{"level=WARN", "request timed out", "path=/api/search", "q=slow", "duration=", "timeout=20ms"} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %q: %s", want, l)
		}
	}
	if strings.Contains(l, "duration=0s") {
		t.Errorf("no duration: %s", l)
	}
}
