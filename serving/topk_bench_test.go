package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/internal/loadgen"
	"github.com/caffeine-go/caffeine/webtable"
)

// BenchmarkTopK is the fast path's load benchmark: 8 clients search at
// once over TOPK_DOCS documents (copies of the PostgreSQL manual under as
// many URL prefixes, random PageRank; default 100,000), with the fast path
// (fast) and without (exhaustive), one-word and two- to four-word queries
// of the manual's title words and the queries of its judged set
// (cmd/searcheval/judged/postgresql.tsv), 10 results with snippets. b.N is the
// number of queries in all. It reports queries/s and the latency p50/p99.
// TOPK_DIR keeps the index between runs (it is built there if missing:
// minutes for 100,000 documents).
func BenchmarkTopK(b *testing.B) {
	n := 100_000
	if s := os.Getenv("TOPK_DOCS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	ix, vocab := topkBenchIndex(b, n)
	judged := judgedQueries(b)
	words := func(lo, hi int) func(*rand.Rand) string {
		return func(rng *rand.Rand) string {
			q := make([]string, lo+rng.IntN(hi-lo+1))
			for i := range q {
				q[i] = vocab[rng.IntN(len(vocab))]
			}
			return strings.Join(q, " ")
		}
	}
	for _, qs := range []struct {
		name  string
		query func(*rand.Rand) string
	}{
		{"words=1", words(1, 1)},
		{"words=2-4", words(2, 4)},
		{"judged", func(rng *rand.Rand) string { return judged[rng.IntN(len(judged))] }},
	} {
		for _, mode := range []string{"exhaustive", "fast"} {
			b.Run(qs.name+"/"+mode, func(b *testing.B) {
				ix.exhaustive = mode == "exhaustive"
				defer func() { ix.exhaustive = false }()
				b.ResetTimer()
				r, err := loadgen.Run(8, b.N, func(rng *rand.Rand) error {
					_, err := ix.Search(context.Background(), Query{Q: qs.query(rng), N: 10})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.P50.Seconds()*1e3, "p50_ms")
				b.ReportMetric(r.P99.Seconds()*1e3, "p99_ms")
				b.ReportMetric(r.PerSecond(), "queries/s")
			})
		}
	}
}

// topkBenchIndex returns an index of n documents, made of copies of the
// corpus's pages, and the title words of one copy.
func topkBenchIndex(b *testing.B, n int) (*Index, []string) {
	pages := corpus.Pages(b)
	dir := os.Getenv("TOPK_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("index-%d", n))
	_, err := os.Stat(path)
	fresh := os.IsNotExist(err)
	ix, err := OpenIndex(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	type page struct{ path, title, text string }
	var ps []page
	var anchors [][]webtable.Anchor
	for _, p := range pages {
		u := "http://docs.example/" + p.Path
		pg, err := extract.HTML(u, p.Body, "text/html", extract.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, page{p.Path, pg.Title, pg.Text})
		var as []webtable.Anchor
		for _, l := range pg.Links[:min(len(pg.Links), 3)] {
			as = append(as, webtable.Anchor{From: l.URL, Text: l.Anchor})
		}
		anchors = append(anchors, as)
	}
	titles := make([]string, len(ps))
	for i, p := range ps {
		titles[i] = p.title
	}
	vocab := loadgen.Words(titles)
	if !fresh {
		return ix, vocab
	}
	rng := rand.New(rand.NewPCG(1, 2))
	began := time.Now()
	var batch []Update
	for i := range n {
		c, p := i/len(ps), ps[i%len(ps)]
		u := fmt.Sprintf("http://docs%d.example/%s", c, p.path)
		d := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: p.title, Text: p.text, Anchors: anchors[i%len(ps)],
			PageRank: 0.15 + rng.ExpFloat64(), FetchedAt: time.Now().UTC(), ClusterSize: 1}
		batch = append(batch, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: uint64(i + 1),
			Row: fmt.Sprintf("row%d/%s", c, p.path), URL: u, Doc: d}})
		if len(batch) == 500 || i == n-1 {
			if _, err := ix.Apply(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.Logf("indexed %d documents in %v", n, time.Since(began).Round(time.Second))
	return ix, vocab
}
