package crawl

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pgdocs "github.com/caffeine-go/caffeine/internal/corpus"
)

// BenchmarkWARCImport crawls the PostgreSQL manual (1,169 pages) from a
// loopback server without and with -warc-out, then imports that WARC into
// a fresh table, in one run, and reports the crawler's pages/s (both
// ways), the import's pages/s and records/s (requests and warcinfo
// included) and the ratio of the import's page rate to the archiving
// crawler's. None runs the chain: all measure the path to the loader
// transaction.
func BenchmarkWARCImport(b *testing.B) {
	srv := httptest.NewServer(pgdocs.Handler(pgdocs.Pages(b), nil))
	defer srv.Close()
	const concurrency = 8
	var (
		crawled, loaded, records, plain  int64
		crawlTime, importTime, plainTime time.Duration
	)
	for b.Loop() {
		tb := openTable(b, "")
		opt := testOptions(srv.URL + "/index.html")
		opt.Parallel, opt.Workers = concurrency, concurrency
		opt.NoSitemaps = true
		start := time.Now()
		c := tb.crawl(opt)
		plainTime += time.Since(start)
		plain += c.Stats().Fetched
		tb.close()

		warcs := b.TempDir()
		tb = openTable(b, "")
		opt.WARCDir = warcs
		start = time.Now()
		c = tb.crawl(opt)
		crawlTime += time.Since(start)
		crawled += c.Stats().Fetched
		if n := c.Stats().WARCDropped; n > 0 {
			b.Fatalf("%d fetches not archived", n)
		}
		tb.close()

		files, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz"))
		slices.Sort(files)
		tb = openTable(b, "")
		im, err := NewImporter(context.Background(), tb.db, Options{})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		for _, f := range files {
			if err := im.ImportFile(context.Background(), f); err != nil {
				b.Fatal(err)
			}
		}
		importTime += time.Since(start)
		s := im.Stats()
		loaded += s.Loaded
		records += s.Records
		tb.close()
	}
	crawlRate := float64(crawled) / crawlTime.Seconds()
	importRate := float64(loaded) / importTime.Seconds()
	b.ReportMetric(float64(plain)/plainTime.Seconds(), "crawl-nowarc-pages/s")
	b.ReportMetric(crawlRate, "crawl-pages/s")
	b.ReportMetric(importRate, "import-pages/s")
	b.ReportMetric(float64(records)/importTime.Seconds(), "import-records/s")
	b.ReportMetric(importRate/crawlRate, "import/crawl")
	b.ReportMetric(0, "ns/op")
}
