package freshness_test

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/freshness/changingweb"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestHandComputed checks every metric on a case small enough to work out
// by hand. Times are seconds after t0.
//
// Ground truth: A changes at 10 and 30; B at 20.
// Index: A fetched 0 indexed 2; A fetched 12 indexed 15; A refetched
// unchanged at 18, re-exported at 20; B fetched 1 indexed 4; B deleted 36.
//
// At 1: nothing indexed yet: 2 pages missing.
// At 12: A holds copy 0, first change after 0 is 10 ≤ 12: age 2, stale.
//
//	B holds copy 1, first change after 1 is 20 > 12: fresh.
//	Freshness 1/2, mean age 1 s, max 2 s.
//
// At 25: A holds copy 18, next change 30 > 25: fresh. B holds copy 1, change
//
//	20 ≤ 25: age 5. Freshness 1/2, mean age 2.5 s, max 5 s.
//
// Over [0, 40], segment by segment (fresh time; ∫age):
//
//	A [2,15) copy 0, c=10:  fresh 8;  ∫_10^15 (t−10) = 12.5
//	A [15,20) copy 12, c=30: fresh 5
//	A [20,40] copy 18, c=30: fresh 10; ∫_30^40 (t−30) = 50
//	B [4,36) copy 1, c=20:   fresh 16; ∫_20^36 (t−20) = 128
//	page-time 13+5+20+32 = 70; fresh 39; ∫age 190.5
//	freshness 39/70 = 0.5571428…, mean age 190.5/70 = 2.7214285… s
//
// Latencies of new content: A 2−0 = 2, A 15−12 = 3, B 4−1 = 3; the
// re-export at 20 brought nothing new (no change in (12, 18]), but without
// ground truth it counts (20−18 = 2).
//
// Search results at 25 holding A's copy 0 (age 25−10 = 15) and B's copy 1
// (age 5): freshness 0, mean age 10 s.
func TestHandComputed(t *testing.T) {
	truth := freshness.History{"A": {at(10), at(30)}, "B": {at(20)}}
	x := freshness.NewIndex()
	x.Apply(
		freshness.Event{URL: "B", FetchedAt: at(1), IndexedAt: at(4)},
		freshness.Event{URL: "A", FetchedAt: at(18), IndexedAt: at(20)}, // out of order on purpose
		freshness.Event{URL: "A", FetchedAt: at(0), IndexedAt: at(2)},
		freshness.Event{URL: "A", FetchedAt: at(12), IndexedAt: at(15)},
		freshness.Event{URL: "B", IndexedAt: at(36), Deleted: true},
	)

	if x.Held(at(1)) != 0 || x.Held(at(12)) != 2 || x.Held(at(37)) != 1 {
		t.Errorf("held at 1, 12, 37: %d %d %d, want 0 2 1", x.Held(at(1)), x.Held(at(12)), x.Held(at(37)))
	}
	s := freshness.At(truth, x, nil, at(1))
	if s.Pages != 2 || s.Indexed != 0 || s.Missing != 2 {
		t.Errorf("at 1: %+v", s)
	}
	for _, c := range []struct {
		t              float64
		fresh          int
		freshness      float64
		meanAge, maxAg time.Duration
	}{
		{12, 1, 0.5, sec(1), sec(2)},
		{25, 1, 0.5, sec(2.5), sec(5)},
	} {
		s := freshness.At(truth, x, nil, at(c.t))
		if s.Indexed != 2 || s.Fresh != c.fresh || s.Freshness != c.freshness || s.MeanAge != c.meanAge || s.MaxAge != c.maxAg {
			t.Errorf("at %v: %+v, want fresh %d freshness %v mean age %v max age %v", c.t, s, c.fresh, c.freshness, c.meanAge, c.maxAg)
		}
	}

	avg := freshness.Over(truth, x, nil, at(0), at(40))
	if !near(avg.PageTime.Seconds(), 70) || !near(avg.Freshness, 39.0/70) || !near(avg.MeanAge.Seconds(), 190.5/70) {
		t.Errorf("over [0,40]: page-time %v freshness %v mean age %v; want 70s, %v, %vs",
			avg.PageTime, avg.Freshness, avg.MeanAge, 39.0/70, 190.5/70)
	}

	lat := x.Latencies(truth, at(0), at(40))
	if len(lat) != 3 || lat[0] != sec(2) || lat[1] != sec(3) || lat[2] != sec(3) {
		t.Errorf("latencies with truth: %v, want [2s 3s 3s]", lat)
	}
	if lat := x.Latencies(nil, at(0), at(40)); len(lat) != 4 {
		t.Errorf("latencies without truth: %v, want 4", lat)
	}
	if lat := x.Latencies(truth, at(3), at(16)); len(lat) != 2 {
		t.Errorf("latencies applied in [3,16]: %v, want B's and A's second", lat)
	}
	d := freshness.Summarize(lat)
	if d.Count != 3 || d.P50 != 3 || d.Max != 3 || !near(d.Mean, 8.0/3) || !near(d.P90, 3) {
		t.Errorf("summary %+v", d)
	}

	rs := freshness.Results(truth, []freshness.Result{{URL: "A", FetchedAt: at(0)}, {URL: "B", FetchedAt: at(1)}}, at(25))
	if rs.Freshness != 0 || rs.MeanAge != sec(10) {
		t.Errorf("results at 25: %+v", rs)
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{sec(4), sec(1), sec(3), sec(2)} // sorted by Summarize: 1 2 3 4
	d := freshness.Summarize(ds)
	// type 7: p50 at rank 1.5 → 2.5; p90 at rank 2.7 → 3.7
	if d.P50 != 2.5 || !near(d.P90, 3.7) || d.Max != 4 || d.Mean != 2.5 {
		t.Errorf("%+v", d)
	}
	if freshness.Percentile(nil, 0.5) != 0 || freshness.Summarize(nil).Count != 0 {
		t.Error("empty input")
	}
}

// TestRecrawl drives the metrics with the fixture's ground truth: a page is
// fetched over HTTP, changes, and is recrawled; its freshness goes 1 → 0 →
// 1 and its age grows from the change and drops back to 0 once the recrawl
// is indexed. The fetched bytes' content hash (the chain's) tells the same
// story.
func TestRecrawl(t *testing.T) {
	var now atomic.Int64
	now.Store(t0.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	set := func(t time.Time) { now.Store(t.UnixNano()) }
	w, err := changingweb.New(changingweb.Options{Pages: 3, HotFraction: 1, HotRate: 0.1, Seed: 11, Clock: clock, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	defer srv.Close()
	const page = 1
	u := w.URL(srv.URL, page)
	c1, _ := w.FirstChangeAfter(page, t0)
	c2, _ := w.FirstChangeAfter(page, c1)
	if c2.Sub(c1) < time.Second {
		t.Fatalf("changes %v apart: pick another seed", c2.Sub(c1))
	}
	fetch := func() (time.Time, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		p, err := extract.HTML(u, body, resp.Header.Get("Content-Type"), extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return clock(), p.Hash
	}
	truth := w.Truth()
	x := freshness.NewIndex()

	// Crawl halfway to the first change; searchable 100 ms later.
	set(t0.Add(c1.Sub(t0) / 2))
	f0, h0 := fetch()
	x.Apply(freshness.Event{URL: u, FetchedAt: f0, IndexedAt: f0.Add(100 * time.Millisecond)})
	if s := freshness.At(truth, x, nil, f0.Add(100*time.Millisecond)); s.Fresh != 1 || s.MeanAge != 0 {
		t.Fatalf("just indexed: %+v", s)
	}

	// The page changes at c1; 2 s later the index is stale with age 2 s.
	if s := freshness.At(truth, x, nil, c1.Add(2*time.Second)); s.Fresh != 0 || s.MeanAge != 2*time.Second {
		t.Fatalf("2 s after the change: %+v", s)
	}

	// Recrawl 0.5 s after the change: new content, indexed 300 ms later.
	set(c1.Add(500 * time.Millisecond))
	f1, h1 := fetch()
	if h1 == h0 {
		t.Fatal("the content hash did not change with the page")
	}
	x.Apply(freshness.Event{URL: u, FetchedAt: f1, IndexedAt: f1.Add(300 * time.Millisecond)})
	before := freshness.At(truth, x, nil, f1.Add(299*time.Millisecond)) // still the old copy: age 0.5 + 0.299 s
	after := freshness.At(truth, x, nil, f1.Add(300*time.Millisecond))
	if before.Freshness != 0 || before.MeanAge != 799*time.Millisecond {
		t.Errorf("before the recrawl is searchable: %+v", before)
	}
	if after.Freshness != 1 || after.MeanAge != 0 {
		t.Errorf("after the recrawl is searchable: %+v", after)
	}

	// Over [f0+0.1 s, f1+0.3 s]: fresh until c1, then age rises to
	// (f1+0.3 s) − c1 = 0.8 s; ∫age = 0.8²/2 = 0.32 s².
	from, to := f0.Add(100*time.Millisecond), f1.Add(300*time.Millisecond)
	avg := freshness.Over(truth, x, nil, from, to)
	span := to.Sub(from).Seconds()
	if !near(avg.Freshness, (span-0.8)/span) || !near(avg.MeanAge.Seconds(), 0.32/span) {
		t.Errorf("over the episode: %+v, want freshness %v mean age %vs", avg, (span-0.8)/span, 0.32/span)
	}
	if lat := x.Latencies(truth, from.Add(-time.Hour), to); len(lat) != 2 || lat[0] != 100*time.Millisecond || lat[1] != 300*time.Millisecond {
		t.Errorf("latencies %v, want [100ms 300ms]", lat)
	}
}
