package serving

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// TestRankedSearchStopsAtCutoff: a ranked search past its cutoff stops
// scoring within checkEvery hits and answers with the best of those,
// marked partial; one with time to spare scores every hit and is not.
func TestRankedSearchStopsAtCutoff(t *testing.T) {
	ix := openIndex(t)
	const n = 3 * checkEvery
	var us []Update
	for i := range n {
		e := upsert(uint64(i+1), fmt.Sprintf("com.example/p%04d", i), fmt.Sprintf("http://example.com/p%04d", i), "Page", "okapi", float64(i%7))
		us = append(us, Update{Export: e})
	}
	if _, err := ix.Apply(us); err != nil {
		t.Fatal(err)
	}
	pq, err := parse(ix.bi.Mapping(), Query{Q: "okapi", N: 10})
	if err != nil {
		t.Fatal(err)
	}
	run := func(cut time.Time) (*bleve.SearchResult, bool) {
		t.Helper()
		rq := &rankQuery{q: pq.q, ranks: ix.ranks, cutoff: cut}
		res, err := ix.bi.SearchInContext(context.Background(), bleve.NewSearchRequestOptions(rq, 10, 0, false))
		if err != nil {
			t.Fatal(err)
		}
		return res, rq.partial.Load()
	}
	res, partial := run(time.Now().Add(-time.Second))
	if !partial || res.Total >= n || res.Total < checkEvery-1 || len(res.Hits) != 10 {
		t.Errorf("past its cutoff: partial %v, %d hits counted, %d shown; want partial, about %d counted, 10 shown", partial, res.Total, len(res.Hits), checkEvery)
	}
	res, partial = run(time.Now().Add(time.Minute))
	if partial || res.Total != n {
		t.Errorf("with time to spare: partial %v, %d hits; want whole, %d", partial, res.Total, n)
	}
	res, partial = run(time.Time{})
	if partial || res.Total != n {
		t.Errorf("without a cutoff: partial %v, %d hits; want whole, %d", partial, res.Total, n)
	}
}

// TestCutoff: a search keeps a fifth of the time left, and minReserve at
// least, for the rest of its request; none without a deadline.
func TestCutoff(t *testing.T) {
	if !cutoff(context.Background()).IsZero() {
		t.Error("a cutoff without a deadline")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, _ := ctx.Deadline()
	if c := cutoff(ctx); d.Sub(c) < 900*time.Millisecond || d.Sub(c) > time.Second {
		t.Errorf("cutoff %v before a 5 s deadline, want about 1 s", d.Sub(c))
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	d2, _ := ctx2.Deadline()
	if c := cutoff(ctx2); d2.Sub(c) != minReserve {
		t.Errorf("cutoff %v before a 30 ms deadline, want %v", d2.Sub(c), minReserve)
	}
}

// TestFastPathStopsAtCutoff: the fast path (topk.go) past its cutoff
// stops within checkEvery pages, with the best of those, marked partial
// and counted as the pages it looked at; with time to spare it counts
// every hit. (Its pages have anchors: BM25 needs every field's length.)
func TestFastPathStopsAtCutoff(t *testing.T) {
	ix := openIndex(t)
	const n = 3 * checkEvery
	var us []Update
	for i := range n {
		e := upsert(uint64(i+1), fmt.Sprintf("com.example/p%04d", i), fmt.Sprintf("http://example.com/p%04d", i), "Page", "okapi", float64(i%7), "a page")
		us = append(us, Update{Export: e})
	}
	if _, err := ix.Apply(us); err != nil {
		t.Fatal(err)
	}
	pq, err := parse(ix.bi.Mapping(), Query{Q: "okapi", N: 10})
	if err != nil {
		t.Fatal(err)
	}
	run := func(cut time.Time) (total uint64, hits int, partial bool) {
		t.Helper()
		rq := &rankQuery{q: pq.q, ranks: ix.ranks, cutoff: cut, topK: 10}
		res, err := ix.bi.SearchInContext(context.Background(), bleve.NewSearchRequestOptions(rq, 10, 0, false))
		if err != nil {
			t.Fatal(err)
		}
		if !rq.fast.Load() {
			t.Fatal("the query did not take the fast path")
		}
		return rq.total.Load(), len(res.Hits), rq.partial.Load()
	}
	if total, hits, partial := run(time.Now().Add(-time.Second)); !partial || total >= n || total < checkEvery-1 || hits != 10 {
		t.Errorf("past its cutoff: partial %v, %d hits counted, %d shown; want partial, about %d counted, 10 shown", partial, total, hits, checkEvery)
	}
	if total, hits, partial := run(time.Now().Add(time.Minute)); partial || total != n || hits != 10 {
		t.Errorf("with time to spare: partial %v, %d hits counted, %d shown; want whole, %d, 10", partial, total, hits, n)
	}
}
