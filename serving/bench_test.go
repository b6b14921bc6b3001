package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/webtable"
)

// benchCopies of the PostgreSQL manual (1,169 pages) make ≥ 10,000
// documents, under as many URL prefixes.
const benchCopies = 9

var (
	benchOnce sync.Once
	benchDocs []Update
	benchErr  error
)

// corpusExports returns the corpus's pages as export queue entries, as the
// chain would export them: title, text, PageRank, a few anchors.
func corpusExports(b *testing.B) []Update {
	pages := corpus.Pages(b)
	benchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for c := range benchCopies {
			for i, p := range pages {
				u := fmt.Sprintf("http://docs%d.example/%s", c, p.Path)
				pg, err := extract.HTML(u, p.Body, "text/html", extract.Options{})
				if err != nil {
					benchErr = err
					return
				}
				d := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: pg.Title, Text: pg.Text,
					PageRank: 0.15 + rng.ExpFloat64(), FetchedAt: time.Now().UTC(), ClusterSize: 1}
				for _, l := range pg.Links[:min(len(pg.Links), 3)] {
					d.Anchors = append(d.Anchors, webtable.Anchor{From: l.URL, Text: l.Anchor})
				}
				benchDocs = append(benchDocs, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: uint64(c*10_000 + i + 1),
					Row: fmt.Sprintf("row%d/%s", c, p.Path), URL: u, Doc: d}})
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDocs
}

// BenchmarkIndexBatches applies the corpus copies to a new index in batches
// of 500, as the feeder does; docs/s is the indexing throughput.
func BenchmarkIndexBatches(b *testing.B) {
	es := corpusExports(b)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		ix, err := OpenIndex(filepath.Join(b.TempDir(), "index"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		began := time.Now()
		for chunk := range slices.Chunk(es, 500) {
			if _, err := ix.Apply(chunk); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(es))/time.Since(began).Seconds(), "docs/s")
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
}

// benchIndex returns a new index of the corpus copies, applied in
// batches of 500 as the feeder does, and the words of the titles.
func benchIndex(b *testing.B) (*Index, []string) {
	es := corpusExports(b)
	ix, err := OpenIndex(filepath.Join(b.TempDir(), "index"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	for chunk := range slices.Chunk(es, 500) {
		if _, err := ix.Apply(chunk); err != nil {
			b.Fatal(err)
		}
	}
	return ix, titleWords(es[:len(es)/benchCopies])
}

// BenchmarkQuery runs 1-, 2- and 3-word queries of words from the corpus's
// titles over ≥ 10,000 documents and reports latency percentiles and
// queries per second (one client).
func BenchmarkQuery(b *testing.B) {
	ix, vocab := benchIndex(b)
	for words := 1; words <= 3; words++ {
		b.Run(fmt.Sprintf("words=%d", words), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(uint64(words), 7))
			lat := make([]float64, 0, b.N)
			hits := 0
			b.ResetTimer()
			for range b.N {
				q := make([]string, words)
				for i := range q {
					q[i] = vocab[rng.IntN(len(vocab))]
				}
				t := time.Now()
				res, err := ix.Search(context.Background(), Query{Q: strings.Join(q, " "), N: 10})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t).Seconds())
				if res.Total > 0 {
					hits++
				}
			}
			s := summarize(lat)
			b.ReportMetric(s.P50*1e3, "p50_ms")
			b.ReportMetric(s.P99*1e3, "p99_ms")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(hits)/float64(b.N), "hit_rate")
		})
	}
}

// BenchmarkMatchAll compares q=* (every page, by PageRank, unscored) with
// a one-word query and a prefix query on 5,000 synthetic pages: match-all
// must cost about what a common word costs, not a scored pass over every
// term of the index.
func BenchmarkMatchAll(b *testing.B) {
	ix, err := OpenIndex(filepath.Join(b.TempDir(), "index"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	now := time.Now().UTC()
	applySyntheticPages(b, ix, rng, func() time.Time { return now })
	for _, c := range []struct {
		name string
		q    Query
	}{
		{"all", Query{Q: "*", N: 10}},
		{"all_n100", Query{Q: "*", N: 100}},
		{"term", Query{Q: "w1x", N: 10}},
		{"term_n100", Query{Q: "w1x", N: 100}},
		{"prefix", Query{Q: "w12*", N: 10}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total uint64
			for b.Loop() {
				res, err := ix.Search(context.Background(), c.q)
				if err != nil {
					b.Fatal(err)
				}
				total = res.Total
			}
			b.ReportMetric(float64(total), "hits")
		})
	}
}

// BenchmarkForgiving measures what forgiving queries cost over the corpus
// copies (≥ 10,000 documents): a misspelled word (a search that finds
// nothing, then the suggestion), the suggestion alone, a query relaxed
// because no page has all its words, a question, a query many pages
// match, and the correct word for comparison.
func BenchmarkForgiving(b *testing.B) {
	es := corpusExports(b)
	ix, err := OpenIndex(filepath.Join(b.TempDir(), "index"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	for chunk := range slices.Chunk(es, 500) {
		if _, err := ix.Apply(chunk); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, c := range []struct{ name, q, suggestion string }{
		{"correct", "vacuum", ""},
		{"misspelled", "vacum", "vacuum"},
		{"misspelled2", "configuraton", "configuration"},
		{"two_misspelled", "autovacum checkpiont", "autovacuum checkpoint"},
		{"relaxed", "vacuum freeze xyzzyq", ""},
		{"question", "how do I write a trigger function in plpgsql", ""},
		{"many", "vacuum freeze", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			var res *Results
			for b.Loop() {
				if res, err = ix.Search(ctx, Query{Q: c.q, N: 10}); err != nil {
					b.Fatal(err)
				}
			}
			if res.Suggestion != c.suggestion {
				b.Errorf("%q: suggestion %q, want %q", c.q, res.Suggestion, c.suggestion)
			}
			b.ReportMetric(float64(res.Total), "hits")
		})
	}
	b.Run("suggest_only", func(b *testing.B) {
		for b.Loop() {
			if s, err := ix.suggest(ctx, "vacum", []string{"vacum"}); err != nil || s != "vacuum" {
				b.Fatal(s, err)
			}
		}
	})
}

// applySyntheticPages applies 5,000 pages of 200 words to ix, on 50
// hosts: words "wNx" with N exponentially distributed (mean 2,000, below
// 20,000), the first five the title, PageRank 0.15 plus an exponential,
// each page fetched at fetched().
func applySyntheticPages(tb testing.TB, ix *Index, rng *rand.Rand, fetched func() time.Time) {
	tb.Helper()
	var us []Update
	for i := range 5000 {
		words := make([]string, 200)
		for j := range words {
			words[j] = fmt.Sprintf("w%dx", int(rng.ExpFloat64()*2000)%20_000)
		}
		u := fmt.Sprintf("http://h%d.example/p%d", i%50, i)
		d := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: strings.Join(words[:5], " "), Text: strings.Join(words, " "),
			PageRank: 0.15 + rng.ExpFloat64(), FetchedAt: fetched(), ClusterSize: 1}
		us = append(us, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: fmt.Sprintf("r%d", i), URL: u, Doc: d}})
	}
	for chunk := range slices.Chunk(us, 500) {
		if _, err := ix.Apply(chunk); err != nil {
			tb.Fatal(err)
		}
	}
}
