package serving

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

// TestNewest: Query.Newest orders the pages with all the words by fetch
// time, newest first, across segments, whatever their rank; a page with
// no fetch time comes last; it neither relaxes nor corrects the query.
func TestNewest(t *testing.T) {
	ix, err := OpenIndex(filepath.Join(t.TempDir(), "index"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	apply := func(row, text string, pr float64, fetched time.Time) {
		t.Helper()
		u := "http://example.com/" + row
		d := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: row, Text: text, PageRank: pr, FetchedAt: fetched, ClusterSize: 1}
		if _, err := ix.Apply([]Update{{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: row, URL: u, Doc: d}}}); err != nil {
			t.Fatal(err)
		}
	}
	apply("b", "vacuum freeze", 5, t0.Add(2*time.Hour))
	apply("a", "vacuum freeze", 9, t0)
	apply("nofetch", "vacuum freeze", 20, time.Time{})
	apply("c", "vacuum freeze", 1, t0.Add(time.Hour))
	apply("d", "vacuum only", 2, t0.Add(3*time.Hour))
	urls := func(q Query) []string {
		t.Helper()
		res, err := ix.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if res.Relaxed || res.Corrected {
			t.Errorf("%q: relaxed %v, corrected %v", q.Q, res.Relaxed, res.Corrected)
		}
		var out []string
		for _, r := range res.Results {
			out = append(out, strings.TrimPrefix(r.URL, "http://example.com/"))
		}
		return out
	}
	if got, want := urls(Query{Q: "vacuum freeze", N: 10, Newest: true}), "b c a nofetch"; strings.Join(got, " ") != want {
		t.Errorf("newest: %v, want %s", got, want)
	}
	if got, want := urls(Query{Q: "vacuum freeze", N: 2, Start: 1, Newest: true}), "c a"; strings.Join(got, " ") != want {
		t.Errorf("newest, second page: %v, want %s", got, want)
	}
	// Ranked, a query no page fully matches is corrected or relaxed;
	// newest, it finds nothing.
	if res, err := ix.Search(context.Background(), Query{Q: "vacuum freezer", N: 10}); err != nil || len(res.Results) == 0 {
		t.Fatalf("ranked: %v results, %v", res, err)
	}
	if got := urls(Query{Q: "vacuum freezer", N: 10, Newest: true}); len(got) != 0 {
		t.Errorf("newest of a query no page matches: %v", got)
	}
}

// BenchmarkNewest compares a query ordered by fetch time with the same
// query ranked, on 5,000 synthetic pages fetched over a day.
func BenchmarkNewest(b *testing.B) {
	ix, err := OpenIndex(filepath.Join(b.TempDir(), "index"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	applySyntheticPages(b, ix, rng, func() time.Time { return t0.Add(time.Duration(rng.IntN(86400)) * time.Second) })
	for _, c := range []struct {
		name string
		q    Query
	}{
		{"term_ranked", Query{Q: "w1x", N: 20}},
		{"term_newest", Query{Q: "w1x", N: 20, Newest: true}},
		{"two_ranked", Query{Q: "w1x w2x", N: 20}},
		{"two_newest", Query{Q: "w1x w2x", N: 20, Newest: true}},
		{"all_newest", Query{Q: "*", N: 20, Newest: true}},
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
