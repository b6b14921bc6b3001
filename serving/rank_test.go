package serving

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/webtable"
)

// Ranked searches read PageRank and link density from columns kept per
// segment (rankQuery): over the PostgreSQL manual, indexed in batches,
// then partly updated and deleted (new segments, deleted documents in old
// ones, merges), they give the hits, scores and order that reading the
// doc values of every hit gives (fullRank), on every page of results.
func TestRankColumnsAreExact(t *testing.T) {
	pages := corpus.Pages(t)
	rng := rand.New(rand.NewPCG(5, 6))
	var es []Update
	for i, p := range pages {
		if testing.Short() && i%4 != 0 {
			continue
		}
		u := "http://pg.test/" + p.Path
		pg, err := extract.HTML(u, p.Body, "text/html", extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: pg.Title, Text: pg.Text, LinkDensity: pg.LinkDensity,
			PageRank: 0.15 + rng.ExpFloat64(), FetchedAt: time.Unix(1, 0).UTC(), ClusterSize: 1, LangMismatch: rng.IntN(10) == 0}
		for _, l := range pg.Links[:min(len(pg.Links), 3)] {
			d.Anchors = append(d.Anchors, webtable.Anchor{From: l.URL, Text: l.Anchor})
		}
		es = append(es, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: p.Path, URL: u, Doc: d}})
	}
	ix := openIndex(t)
	batches := func(us []Update, n int) {
		for len(us) > 0 {
			k := min(n, len(us))
			if _, err := ix.Apply(us[:k]); err != nil {
				t.Fatal(err)
			}
			us = us[k:]
		}
	}
	batches(es, 100)

	queries := judgedQueries(t)
	words := titleWords(es)
	for i := 0; i < len(words); i += max(1, len(words)/40) {
		queries = append(queries, words[i])
	}
	queries = append(queries, "vacuum -full", "title:index", "index OR table", "vacuum freeze xyzzyq", "the")
	check := func(stage string) {
		t.Helper()
		for _, q := range queries {
			p, err := parse(ix.bi.Mapping(), Query{Q: q, N: 10})
			if err != nil {
				t.Fatalf("%s: %q: %v", stage, q, err)
			}
			if !p.ranked {
				continue
			}
			sameRanking(t, ix, stage+": "+q, p.q)
			if p.relaxed != nil {
				sameRanking(t, ix, stage+": relaxed "+q, p.relaxed)
			}
		}
	}
	check("indexed")

	// Update a third of the pages (new PageRank and link density) and
	// delete a tenth, in small batches: new segments, and old segments
	// with deleted documents, merged in the background.
	var ups []Update
	for i, e := range es {
		switch i % 10 {
		case 0:
			ups = append(ups, Update{Export: webtable.Export{Op: webtable.OpDelete, Version: 2, Row: e.Row, URL: e.URL}})
		case 3, 6, 9:
			d := *e.Doc
			d.PageRank = 0.15 + 20*rng.Float64()
			d.LinkDensity = rng.Float64()
			ups = append(ups, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 2, Row: e.Row, URL: e.URL, Doc: &d}})
		}
	}
	batches(ups, 25)
	check("updated")

	ix.ranks.mu.Lock()
	n := len(ix.ranks.segs)
	ix.ranks.mu.Unlock()
	if n == 0 {
		t.Error("ranked searches did not use the rank columns")
	}

	// Search: page 2 follows page 1.
	for _, q := range queries[:10] {
		all, err := ix.Search(context.Background(), Query{Q: q, N: 20})
		if err != nil {
			t.Fatal(err)
		}
		var paged []string
		for start := 0; start < 20; start += 10 {
			res, err := ix.Search(context.Background(), Query{Q: q, N: 10, Start: start})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Results {
				paged = append(paged, r.URL)
			}
		}
		var want []string
		for _, r := range all.Results {
			want = append(want, r.URL)
		}
		if fmt.Sprint(paged) != fmt.Sprint(want) {
			t.Errorf("%q: pages 1 and 2 are %v, the first 20 %v", q, paged, want)
		}
	}
}

// sameRanking checks that rankQuery and fullRank find the same hits with
// the same scores in the same order for pq: the first 100, and pages of
// 10 from 0, 10 and 20.
func sameRanking(t *testing.T, ix *Index, name string, pq query.Query) {
	t.Helper()
	for _, page := range []struct{ n, start int }{{100, 0}, {10, 0}, {10, 10}, {10, 20}} {
		// Background merges change BM25's statistics: compare searches of
		// the same snapshot.
		var got, want string
		for deadline := time.Now().Add(time.Minute); ; {
			before := snapshot(t, ix)
			got = rankedHits(t, ix, &rankQuery{q: pq, ranks: ix.ranks}, page.n, page.start)
			want = rankedHits(t, ix, fullRank(pq), page.n, page.start)
			if snapshot(t, ix) == before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the index's snapshot changed during every comparison for a minute", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got != want {
			t.Fatalf("%s, %d from %d: rank columns\n%s\ndoc values\n%s", name, page.n, page.start, got, want)
		}
	}
}

// snapshot returns the index's current snapshot.
func snapshot(t *testing.T, ix *Index) index.IndexReader {
	t.Helper()
	r := reader(t, ix)
	r.Close() // the pointer is all the caller compares
	return r
}

// reader returns a reader of the index's current snapshot, to close.
func reader(t *testing.T, ix *Index) index.IndexReader {
	t.Helper()
	bi, err := ix.bi.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := bi.Reader()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func rankedHits(t *testing.T, ix *Index, q query.Query, n, start int) string {
	t.Helper()
	res, err := ix.bi.SearchInContext(context.Background(), bleve.NewSearchRequestOptions(q, n, start, false))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "total %d\n", res.Total)
	for _, h := range res.Hits {
		fmt.Fprintf(&b, "%s %v\n", h.ID, h.Score) // %v: the shortest exact form
	}
	return b.String()
}

// judgedQueries returns the queries of cmd/searcheval's judged set over
// the PostgreSQL manual.
func judgedQueries(t testing.TB) []string {
	return judgedSet(t, "../cmd/searcheval/judged/postgresql.tsv")
}

// allJudgedQueries returns the queries of all cmd/searcheval's judged
// sets.
func allJudgedQueries(t testing.TB) []string {
	files, err := filepath.Glob("../cmd/searcheval/judged/*.tsv")
	if err != nil || len(files) == 0 {
		t.Fatalf("judged sets: %v, %d files", err, len(files))
	}
	var qs []string
	for _, f := range files {
		qs = append(qs, judgedSet(t, f)...)
	}
	return qs
}

func judgedSet(t testing.TB, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			qs = append(qs, strings.Split(l, "\t")[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return qs
}

// TestRoundRankWithinScorePrecision: webtable.RoundRank promises that two
// PageRanks it rounds alike give scores within 2.25% of each other (its
// step times rankWeight), which decides when a document is re-exported
// for its PageRank alone. A change of rankWeight or of the step must keep
// that promise or change it.
func TestRoundRankWithinScorePrecision(t *testing.T) {
	const bound = 0.0225
	if got := rankWeight * webtable.RankStep; got > bound+1e-12 {
		t.Fatalf("rankWeight × RankStep = %g, RoundRank's documentation says %g", got, bound)
	}
	for x := 0.01; x < 500; x *= 1.01 {
		// The farthest values of x's bucket.
		r := webtable.RoundRank(x)
		lo, hi := x, x
		for webtable.RoundRank(lo*0.999) == r && lo > 1e-6 {
			lo *= 0.999
		}
		for webtable.RoundRank(hi*1.001) == r {
			hi *= 1.001
		}
		if f := rankFactor(hi)/rankFactor(lo) - 1; f > bound {
			t.Fatalf("RoundRank(%g) = %q spans %g..%g: scores %.2f%% apart, want at most %.2f%%", x, r, lo, hi, 100*f, 100*bound)
		}
	}
}
