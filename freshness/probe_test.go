package freshness_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/freshness/changingweb"
)

// fakeDeployment stands in for cmd/search's JSON API over a crawl of a
// changingweb fixture: for each page it "indexed" the version live at a
// chosen fetch time. Only the fields Probe reads are served.
type fakeDeployment struct {
	web     *changingweb.Web
	base    string // the fixture's URL
	fetched map[int]time.Time
	pending map[int]bool // newer content fetched, not yet searchable
	history map[int][]map[string]any
}

func (f *fakeDeployment) hash(p int, at time.Time) string {
	u := f.web.URL(f.base, p)
	pg, err := extract.HTML(u, f.web.Content(p, f.web.VersionAt(p, at)), "text/html; charset=utf-8", extract.Options{})
	if err != nil {
		panic(err)
	}
	return pg.Hash
}

func (f *fakeDeployment) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	switch r.URL.Path {
	case "/api/search":
		if r.FormValue("q") == "" {
			w.WriteHeader(400)
			enc.Encode(map[string]string{"error": "empty query"})
			return
		}
		n, _ := strconv.Atoi(r.FormValue("n"))
		start, _ := strconv.Atoi(r.FormValue("start"))
		var res []map[string]any
		for p := start; p < min(start+n, f.web.Pages()); p++ {
			res = append(res, map[string]any{"url": f.web.URL(f.base, p), "title": "t", "score": 1.0,
				"fetched_at": f.fetched[p], "indexed_at": f.fetched[p].Add(500 * time.Millisecond)})
		}
		enc.Encode(map[string]any{"total": f.web.Pages(), "took_ms": 1.5, "results": res})
	case "/api/doc":
		p, ok := f.web.Page(r.FormValue("url"))
		if !ok {
			w.WriteHeader(404)
			enc.Encode(map[string]string{"error": "not found"})
			return
		}
		fe := f.fetched[p]
		stages := map[string]any{"fetched": fe, "parsed": fe.Add(100 * time.Millisecond),
			"clustered": fe.Add(200 * time.Millisecond), "exported": fe.Add(300 * time.Millisecond), "searchable": fe.Add(500 * time.Millisecond)}
		hash := f.hash(p, fe)
		if f.pending[p] {
			// The table holds content fetched later, parsed but not yet
			// searchable; the search result still has the old copy.
			later := fe.Add(time.Second)
			stages = map[string]any{"fetched": later, "parsed": later.Add(100 * time.Millisecond)}
			hash = f.hash(p, later)
		}
		enc.Encode(map[string]any{"url": r.FormValue("url"), "content_hash": hash, "status": "ok",
			"fetched_at": fe, "stages": stages, "history": f.history[p]})
	case "/api/stats":
		enc.Encode(map[string]any{"pages": f.web.Pages(), "latency": map[string]any{"count": 7, "p50_s": 0.5, "p90_s": 0.9, "p99_s": 1.2}})
	default:
		http.NotFound(w, r)
	}
}

// politeWeb wraps the fixture: robots.txt forbids one page to the probe
// and asks for a Crawl-delay of 0 (the probe's own delay applies); it
// records the User-Agent of every request.
type politeWeb struct {
	web *changingweb.Web
	mu  sync.Mutex
	ua  map[string]bool
}

func (p *politeWeb) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.ua[r.UserAgent()] = true
	p.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		w.Write([]byte("User-agent: caffeine-freshness\nDisallow: /s0/3.html\n\nUser-agent: *\nAllow: /\n"))
		return
	}
	p.web.ServeHTTP(w, r)
}

// sendTimes records when requests to host are sent.
type sendTimes struct {
	host  string
	base  http.RoundTripper
	mu    sync.Mutex
	times []time.Time
}

func (s *sendTimes) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == s.host {
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
	}
	return s.base.RoundTrip(r)
}

func (s *sendTimes) sent() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.times)
}

// TestProbe checks the measurement mode against a fake deployment whose
// index holds known versions of a changingweb fixture, frozen at one time
// so the live pages do not move while they are refetched.
func TestProbe(t *testing.T) {
	now := time.Now().UTC()
	start := now.Add(-200 * time.Second)
	web, err := changingweb.New(changingweb.Options{Pages: 12, HotFraction: 0.5, HotRate: 0.05, ColdRate: 0.002,
		Seed: 3, Start: start, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	live := &politeWeb{web: web, ua: map[string]bool{}}
	site := httptest.NewServer(live)
	defer site.Close()

	dep := &fakeDeployment{web: web, base: site.URL, fetched: map[int]time.Time{}, pending: map[int]bool{5: true}, history: map[int][]map[string]any{}}
	for p := range 12 {
		dep.fetched[p] = now.Add(-time.Duration(10*(p+1)) * time.Second) // 10 s … 120 s ago
	}
	// Page 7 was fetched 10 times, 5 s apart, 4 of the 9 revisits found a
	// change: λ̂ = −ln((9−4+0.5)/(9+0.5))/5 per second.
	for i := range 10 {
		dep.history[7] = append(dep.history[7], map[string]any{"time": dep.fetched[7].Add(-time.Duration(5*i) * time.Second), "status": 200, "changed": i%2 == 1 && i < 9})
	}
	api := httptest.NewServer(dep)
	defer api.Close()

	truth := web.History(site.URL, now) // what the frozen fixture served
	const delay = 20 * time.Millisecond
	// Live fetches are timed as the probe sends them: times of arrival at
	// the server shift with the machine's load.
	sends := &sendTimes{host: site.Listener.Addr().String(), base: http.DefaultTransport}
	client := &http.Client{Transport: sends, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	opt := freshness.ProbeOptions{Server: api.URL, Sample: 100, Queries: []string{"page"}, Delay: delay, Client: client}
	rep, err := freshness.Probe(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Candidates != 12 || rep.Sampled != 12 || rep.Checked != 11 || rep.Skipped != 1 {
		t.Fatalf("candidates %d sampled %d checked %d skipped %d", rep.Candidates, rep.Sampled, rep.Checked, rep.Skipped)
	}
	fresh := 0
	for _, d := range rep.Docs {
		p, _ := web.Page(d.URL)
		switch {
		case p == 3:
			if d.Skipped == "" {
				t.Errorf("page 3 refetched despite robots.txt")
			}
			continue
		case p == 5:
			if d.Fresh || !d.Pending {
				t.Errorf("page 5 (newer content not searchable): fresh %v pending %v", d.Fresh, d.Pending)
			}
		default:
			want := freshness.Fresh(truth, d.URL, d.FetchedAt, now)
			if d.Fresh != want {
				t.Errorf("page %d: fresh %v, ground truth %v", p, d.Fresh, want)
			}
		}
		if d.Fresh {
			if p == 7 {
				t.Error("page 7 is fresh: pick fetch times that leave it stale")
			}
			fresh++
			if d.Age != 0 || d.AgeUpper != 0 {
				t.Errorf("page %d: fresh with age %v ≤ %v", p, d.Age, d.AgeUpper)
			}
			continue
		}
		D := d.CheckedAt.Sub(d.FetchedAt).Seconds()
		if math.Abs(d.AgeUpper-D) > 1e-9 || d.Age <= 0 || d.Age > D {
			t.Errorf("page %d: age %v, upper bound %v, want (0, %v]", p, d.Age, d.AgeUpper, D)
		}
		if p != 7 && math.Abs(d.Age-D/2) > 1e-9 {
			t.Errorf("page %d without history: age %v, want D/2 = %v", p, d.Age, D/2)
		}
		if p == 7 {
			lambda := -math.Log(5.5/9.5) / 5
			if math.Abs(d.ChangeRate-lambda) > 1e-9 {
				t.Errorf("page 7: change rate %v, want %v", d.ChangeRate, lambda)
			}
			want := D/(1-math.Exp(-lambda*D)) - 1/lambda
			if math.Abs(d.Age-want) > 1e-9 {
				t.Errorf("page 7: age %v, want %v", d.Age, want)
			}
		}
	}
	if fresh == 0 || fresh == 11 || rep.Fresh != fresh || rep.Freshness != float64(fresh)/11 || rep.Pending != 1 {
		t.Errorf("fresh %d of 11 (report %d, %v, pending %d): want some of each", fresh, rep.Fresh, rep.Freshness, rep.Pending)
	}
	if l := rep.Latency["searchable"]; l.Count != 11 || l.P50 != 0.5 {
		t.Errorf("fetched→searchable: %+v (page 5's current content is not searchable)", l)
	}
	if l := rep.Latency["parsed"]; l.Count != 12 || math.Abs(l.P99-0.1) > 1e-9 {
		t.Errorf("fetched→parsed: %+v", l)
	}
	if rep.ServerLatency == nil || rep.ServerLatency.P90 != 0.9 {
		t.Errorf("server latency %+v", rep.ServerLatency)
	}

	// Politeness: one User-Agent, requests at least the delay apart.
	if len(live.ua) != 1 || !live.ua[freshness.DefaultProbeAgent] {
		t.Errorf("user agents %v", live.ua)
	}
	times := sends.sent()
	if len(times) < 12 {
		t.Errorf("%d live requests sent, want robots.txt and the 11 pages", len(times))
	}
	for i := 1; i < len(times); i++ {
		// The probe's delay runs from the previous response: sends are
		// at least the delay apart whatever the machine's load.
		if gap := times[i].Sub(times[i-1]); gap < delay {
			t.Errorf("requests %d and %d sent %v apart, delay %v", i-1, i, gap, delay)
		}
	}

	// With the ground truth, ages are exact.
	opt.Truth = truth
	opt.Sample = 4
	rep, err = freshness.Probe(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sampled != 4 || rep.AgeEstimator != "exact" {
		t.Fatalf("sampled %d estimator %s", rep.Sampled, rep.AgeEstimator)
	}
	for _, d := range rep.Docs {
		if d.Skipped != "" {
			continue
		}
		if want := freshness.Age(truth, d.URL, d.FetchedAt, d.CheckedAt).Seconds(); d.Age != want {
			t.Errorf("%s: age %v, exact %v", d.URL, d.Age, want)
		}
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "fetched→searchable") {
		t.Errorf("text report: %v\n%s", err, text.String())
	}
}

func TestProbeErrors(t *testing.T) {
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("q") == "bad:" {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"syntax error"}`))
			return
		}
		w.Write([]byte(`{"total":0,"results":[]}`))
	}))
	defer empty.Close()
	ctx := context.Background()
	if _, err := freshness.Probe(ctx, freshness.ProbeOptions{Server: empty.URL, Queries: []string{"x"}}); err != freshness.ErrNoDocuments {
		t.Errorf("no documents: %v", err)
	}
	if _, err := freshness.Probe(ctx, freshness.ProbeOptions{Server: empty.URL, Queries: []string{"bad:"}}); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("bad query: %v", err)
	}
	if _, err := freshness.Probe(ctx, freshness.ProbeOptions{}); err == nil {
		t.Error("no server: no error")
	}
}
