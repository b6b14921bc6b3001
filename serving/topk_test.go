package serving

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestTopKIsExact: the fast path (topk.go) gives the top k of the
// exhaustive search, the same documents with the same scores to the bit
// in the same order, and the same total, over an index that changes
// (batches of new pages, updates of PageRank and link density, deletions,
// background merges): for the queries of all the judged sets and
// thousands of random queries of one to six words of the pages, and the
// relaxed form of each (plain words and their relaxed forms take the fast
// paths, topk.go and topk_words.go; phrases, fields and exclusions must
// fall back), with and without preferred languages, on pages 1 to 3; and
// Search itself, relaxing and suggestions included. TOPK_SEED picks
// another sequence.
func TestTopKIsExact(t *testing.T) {
	seed := uint64(42)
	if s := os.Getenv("TOPK_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("TOPK_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	pages := corpus.Pages(t)
	var es []Update
	var texts []string
	langs := []string{"en", "fr", "de", ""}
	for _, p := range pages {
		u := "http://pg.test/" + p.Path
		pg, err := extract.HTML(u, p.Body, "text/html", extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: pg.Title, Text: pg.Text, LinkDensity: pg.LinkDensity,
			PageRank: 0.15 + rng.ExpFloat64(), FetchedAt: time.Unix(1, 0).UTC(), ClusterSize: 1, Lang: langs[rng.IntN(len(langs))], Sections: pg.Sections}
		for _, l := range pg.Links[:min(len(pg.Links), 3)] {
			d.Anchors = append(d.Anchors, webtable.Anchor{From: l.URL, Text: l.Anchor})
		}
		es = append(es, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: p.Path, URL: u, Doc: d}})
		texts = append(texts, pg.Title, firstWords(pg.Text, 60))
	}
	vocab := titleWords(es)
	body := strings.Fields(strings.ToLower(strings.Join(texts, " ")))
	word := func() string {
		if rng.IntN(2) == 0 {
			return vocab[rng.IntN(len(vocab))]
		}
		return body[rng.IntN(len(body))]
	}
	judged := allJudgedQueries(t)
	// The words most pages hold: one of them alone is the query whose walk
	// goes lazy (no page with it in its text alone can enter the top 10),
	// which the words above, half of them from titles and so from the
	// headings that raise a page's bound, seldom are.
	counts := make(map[string]int)
	for _, w := range body {
		counts[w]++
	}
	common := slices.SortedFunc(maps.Keys(counts), func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	common = common[:min(len(common), 300)]

	ix := openIndex(t)
	rounds, perRound := 4, 600
	if testing.Short() {
		rounds, perRound = 2, 150
	}
	rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	var stats topkStats
	version := uint64(1)
	for round := range rounds {
		// A share of the pages at first, then more, with updates and
		// deletions of those indexed, in batches of various sizes.
		upTo := len(es) * (round + 1) / rounds
		var batch []Update
		for i, e := range es[:upTo] {
			switch {
			case i >= len(es)*round/rounds:
				batch = append(batch, e)
			case rng.IntN(5) == 0:
				version++
				batch = append(batch, Update{Export: webtable.Export{Op: webtable.OpDelete, Version: version, Row: e.Row, URL: e.URL}})
			case rng.IntN(4) == 0:
				version++
				d := *e.Doc
				d.PageRank = 0.15 + 30*rng.Float64()*rng.Float64()
				d.LinkDensity = rng.Float64()
				batch = append(batch, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: version, Row: e.Row, URL: e.URL, Doc: &d}})
			}
		}
		for len(batch) > 0 {
			n := min(len(batch), 1+rng.IntN(200))
			if _, err := ix.Apply(batch[:n]); err != nil {
				t.Fatal(err)
			}
			batch = batch[n:]
		}

		qs := append([]string(nil), judged...)
		for range 50 {
			qs = append(qs, common[rng.IntN(len(common))])
		}
		for range perRound {
			w := make([]string, 1+rng.IntN(6))
			for i := range w {
				w[i] = word()
			}
			q := strings.Join(w, " ")
			switch rng.IntN(12) {
			case 0:
				q = `"` + q + `"`
			case 1:
				q = "title:" + q
			case 2:
				q += " -" + word()
			}
			qs = append(qs, q)
		}
		for _, q := range qs {
			var ls []string
			if rng.IntN(3) == 0 {
				ls = []string{langs[rng.IntN(3)]}
			}
			start := 10 * rng.IntN(3)
			p, err := parse(ix.bi.Mapping(), Query{Q: q, N: 10})
			if err != nil || !p.ranked {
				continue
			}
			checkTopK(t, ix, fmt.Sprintf("round %d: %q langs %v start %d", round, q, ls, start), p.q, p.heads, ls, 10, start, &stats)
			if p.relaxed != nil {
				checkTopK(t, ix, fmt.Sprintf("round %d: relaxed %q", round, q), p.relaxed, p.heads, ls, 10, start, &stats)
			}
		}
	}
	// Search itself: the same results and total with the fast path and
	// without.
	for i := range 200 {
		w := make([]string, 1+i%4)
		for i := range w {
			w[i] = word()
		}
		q := Query{Q: strings.Join(w, " "), N: 10}
		if _, err := parse(ix.bi.Mapping(), q); err != nil {
			continue
		}
		for deadline := time.Now().Add(time.Minute); ; {
			before := snapshot(t, ix)
			got := searchResults(t, ix, q, false)
			want := searchResults(t, ix, q, true)
			if snapshot(t, ix) != before {
				if time.Now().After(deadline) {
					t.Fatalf("%q: the index's snapshot changed during every comparison for a minute", q.Q)
				}
				continue
			}
			if got != want {
				t.Fatalf("Search %q:\nfast path\n%s\nexhaustive\n%s", q.Q, got, want)
			}
			break
		}
	}
	t.Logf("%d queries compared, %d on the fast path: %d that went lazy, %d of two words or more, %d of them relaxed; with any total estimated, %d estimated (at most %.2f times off)",
		stats.queries, stats.fast, stats.lazy, stats.words, stats.relaxed, stats.estimated, stats.off)
	if stats.fast < stats.queries/10 || stats.lazy == 0 || stats.words < stats.queries/10 || stats.relaxed < stats.queries/10 || stats.estimated < stats.queries/200 {
		t.Errorf("the fast path ran %d of %d queries, %d lazily, %d of several words, %d relaxed, %d estimated: the test does not exercise it",
			stats.fast, stats.queries, stats.lazy, stats.words, stats.relaxed, stats.estimated)
	}
}

type topkStats struct {
	queries, fast, lazy, words, relaxed, estimated int
	off                                            float64 // the most an estimated total was off, as a ratio
}

// checkTopK compares the fast path with the exhaustive search of pq over
// the same snapshot.
func checkTopK(t *testing.T, ix *Index, name string, pq query.Query, heads, langs []string, n, start int, st *topkStats) {
	t.Helper()
	var got, want, est string
	var exact, guess uint64
	var fast, lazy, estimated bool
	ws := wordsShapeOf(pq, ix.bi.Mapping())
	for deadline := time.Now().Add(time.Minute); ; {
		before := snapshot(t, ix)
		fq := &rankQuery{q: pq, ranks: ix.ranks, lengths: ix.lengths, heads: heads, langs: langs, topK: n + start}
		got = topkHits(t, ix, fq, n, start)
		want = topkHits(t, ix, &rankQuery{q: pq, ranks: ix.ranks, lengths: ix.lengths, heads: heads, langs: langs}, n, start)
		fast, lazy = fq.fast.Load(), fq.lazy.Load()
		// Any total may be estimated: the same results, the total
		// within its bounds.
		eq := &rankQuery{q: pq, ranks: ix.ranks, lengths: ix.lengths, heads: heads, langs: langs, topK: n + start, estimateFrom: 1}
		est = topkHits(t, ix, eq, n, start)
		estimated, guess, exact = eq.estimated.Load(), eq.total.Load(), fq.total.Load()
		if snapshot(t, ix) == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the index's snapshot changed during every comparison for a minute", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	st.queries++
	if fast {
		st.fast++
	}
	if lazy {
		st.lazy++
	}
	if fast && ws != nil {
		st.words++
		if ws.relaxed {
			st.relaxed++
		}
	}
	if got != want {
		t.Fatalf("%s (fast path %v):\nfast path\n%s\nexhaustive\n%s", name, fast, got, want)
	}
	if !estimated {
		if est != want {
			t.Fatalf("%s (total not estimated):\nfast path\n%s\nexhaustive\n%s", name, est, want)
		}
		return
	}
	st.estimated++
	if hits(est) != hits(want) {
		t.Fatalf("%s (total estimated):\nfast path\n%s\nexhaustive\n%s", name, est, want)
	}
	// Past relaxBelow both, as Search needs; at most 4 times off.
	if guess <= relaxBelow || exact <= relaxBelow || guess > 4*exact || exact > 4*guess {
		t.Fatalf("%s: total estimated %d, exactly %d", name, guess, exact)
	}
	st.off = max(st.off, float64(max(guess, exact))/float64(min(guess, exact)))
}

// hits returns the hits of a topkHits answer, without the total.
func hits(s string) string {
	_, h, _ := strings.Cut(s, "\n")
	return h
}

func topkHits(t *testing.T, ix *Index, rq *rankQuery, n, start int) string {
	t.Helper()
	res, err := ix.bi.SearchInContext(context.Background(), bleve.NewSearchRequestOptions(rq, n, start, false))
	if err != nil {
		t.Fatal(err)
	}
	total := res.Total
	if rq.fast.Load() {
		total = rq.total.Load()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "total %d\n", total)
	for _, h := range res.Hits {
		fmt.Fprintf(&b, "%s %v\n", h.ID, h.Score) // %v: the shortest exact form
	}
	return b.String()
}

func searchResults(t *testing.T, ix *Index, q Query, exhaustive bool) string {
	t.Helper()
	ix.exhaustive = exhaustive
	defer func() { ix.exhaustive = false }()
	res, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "total %d relaxed %v partial %v suggestion %q\n", res.Total, res.Relaxed, res.Partial, res.Suggestion)
	for _, r := range res.Results {
		fmt.Fprintf(&b, "%s %v\n", r.URL, r.Score)
	}
	return b.String()
}

// firstWords returns the first n words of s.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}
