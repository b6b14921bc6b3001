package crawl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	manual "github.com/caffeine-go/caffeine/internal/corpus"
)

// BenchmarkPageExtract is the crawler's work on one fetched page, without
// the network: reading its links, robots meta and text hash, then choosing
// the links to follow (scope, rows). One op is one page of the PostgreSQL
// manual, pages taken in turn; MB/s counts their HTML.
func BenchmarkPageExtract(b *testing.B) {
	pages := manual.Pages(b)
	const base = "http://127.0.0.1:8000/"
	c := benchCrawler(b, base)
	hdr := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	total, links := 0, 0
	for _, p := range pages {
		total += len(p.Body)
	}
	b.SetBytes(int64(total / len(pages)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pages[i%len(pages)]
		i++
		j := &job{url: base + p.Path, res: result{status: http.StatusOK, header: hdr, body: p.Body}}
		j.res.extract(j.url)
		links += len(c.parseLinks(j))
	}
	b.ReportMetric(float64(links)/float64(i), "links/op")
}

// BenchmarkPageFetch is BenchmarkPageExtract with the fetch: one worker's
// fetcher gets each page from a loopback server (through colly) and
// chooses its links.
func BenchmarkPageFetch(b *testing.B) {
	pages := manual.Pages(b)
	srv := httptest.NewServer(manual.Handler(pages, nil))
	b.Cleanup(srv.Close)
	c := benchCrawler(b, srv.URL+"/")
	f := c.newFetcher(context.Background())
	total, links := 0, 0
	for _, p := range pages {
		total += len(p.Body)
	}
	b.SetBytes(int64(total / len(pages)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pages[i%len(pages)]
		i++
		j := &job{url: srv.URL + "/" + p.Path}
		j.res = f.fetch(j)
		if j.res.status != http.StatusOK {
			b.Fatalf("%s: status %d, %v", j.url, j.res.status, j.res.err)
		}
		links += len(c.parseLinks(j))
	}
	b.ReportMetric(float64(links)/float64(i), "links/op")
}

// benchCrawler returns a crawler on a fresh table whose scope is seed's
// host, ready to fetch and parse links without running.
func benchCrawler(b *testing.B, seed string) *Crawler {
	tb := openTable(b, "")
	c, err := New(tb.db, testOptions(seed))
	if err != nil {
		b.Fatal(err)
	}
	c.scope = newScope(c.opt.Scope, c.opt.Seeds)
	return c
}
