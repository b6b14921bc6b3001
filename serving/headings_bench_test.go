package serving

import (
	"context"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/webtable"
)

// BenchmarkHeadings is what the headings' factor costs a search: the
// PostgreSQL manual (1,169 pages, with their sections) and the queries of
// every judged set, run as Search runs them (the fast paths on, 10
// results, no snippets) without the heading terms (off) and with them
// (on). b.N is the number of queries.
func BenchmarkHeadings(b *testing.B) {
	ix := openIndex(b)
	var es []Update
	for _, p := range corpus.Pages(b) {
		u := "http://pg.test/" + p.Path
		pg, err := extract.HTML(u, p.Body, "text/html", extract.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: pg.Title, Text: pg.Text, LinkDensity: pg.LinkDensity,
			PageRank: 1, FetchedAt: time.Unix(1, 0).UTC(), ClusterSize: 1, Sections: pg.Sections}
		es = append(es, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: p.Path, URL: u, Doc: d}})
	}
	if _, err := ix.Apply(es); err != nil {
		b.Fatal(err)
	}
	var plans []*plan
	for _, q := range allJudgedQueries(b) {
		if p, err := parse(ix.bi.Mapping(), Query{Q: q, N: 10}); err == nil && p.ranked {
			plans = append(plans, p)
		}
	}
	// Warm up (and let the index's merges settle) before timing.
	for range 3 {
		for _, p := range plans {
			for _, heads := range [][]string{nil, p.heads} {
				if _, _, err := ix.run(context.Background(), Query{Q: "q", N: 10}, p.q, true, heads); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ResetTimer()
	for _, mode := range []string{"off", "on"} {
		b.Run("heads="+mode, func(b *testing.B) {
			ctx := context.Background()
			for i := range b.N {
				p := plans[i%len(plans)]
				var heads []string
				if mode == "on" {
					heads = p.heads
				}
				if _, _, err := ix.run(ctx, Query{Q: "q", N: 10}, p.q, true, heads); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
