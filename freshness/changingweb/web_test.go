package changingweb_test

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/freshness/changingweb"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is a settable clock for a Web.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) set(t time.Time)  { c.ns.Store(t.UnixNano()) }
func (c *clock) now() time.Time   { return time.Unix(0, c.ns.Load()).UTC() }

func newWeb(t *testing.T, opt changingweb.Options) *changingweb.Web {
	t.Helper()
	if opt.Start.IsZero() {
		opt.Start = t0
	}
	w, err := changingweb.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestDeterministic(t *testing.T) {
	opt := changingweb.Options{Pages: 50, Duplicates: 5, HotFraction: 0.2, HotRate: 1, ColdRate: 0.01, Seed: 7}
	a, b := newWeb(t, opt), newWeb(t, opt)
	end := t0.Add(100 * time.Second)
	// Ask in opposite orders and at different points: the answers must not
	// depend on it.
	for p := range 50 {
		a.VersionAt(p, t0.Add(time.Duration(p)*time.Second))
	}
	for p := 49; p >= 0; p-- {
		ca, cb := a.ChangesUntil(p, end), b.ChangesUntil(p, end)
		if len(ca) != len(cb) {
			t.Fatalf("page %d: %d vs %d changes", p, len(ca), len(cb))
		}
		for i := range ca {
			if !ca[i].Equal(cb[i]) {
				t.Fatalf("page %d change %d: %v vs %v", p, i, ca[i], cb[i])
			}
		}
		if a.Hot(p) != b.Hot(p) || a.Original(p) != b.Original(p) || !slicesEqual(a.Links(p), b.Links(p)) {
			t.Fatalf("page %d: structure differs", p)
		}
		v := a.VersionAt(p, end)
		if v != len(ca) || !bytes.Equal(a.Content(p, v), b.Content(p, v)) {
			t.Fatalf("page %d: version %d with %d changes, or content differs", p, v, len(ca))
		}
	}
	c := newWeb(t, changingweb.Options{Pages: 50, Duplicates: 5, HotFraction: 0.2, HotRate: 1, ColdRate: 0.01, Seed: 8})
	same := 0
	for p := range 50 {
		if len(c.ChangesUntil(p, end)) == len(a.ChangesUntil(p, end)) {
			same++
		}
	}
	if same == 50 {
		t.Error("another seed gives the same change counts on every page")
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPoissonRates checks the change counts over a long (simulated) window
// against the configured rates: the totals per class within 5 standard
// deviations, and the per-page counts about as dispersed as a Poisson
// distribution's (variance ≈ mean).
func TestPoissonRates(t *testing.T) {
	const (
		pages  = 200
		window = 2000 * time.Second
	)
	w := newWeb(t, changingweb.Options{Pages: pages, HotFraction: 0.2, HotRate: 0.5, ColdRate: 0.02, Seed: 42})
	end := t0.Add(window)
	var hot, cold []float64
	for p := range pages {
		n := float64(len(w.ChangesUntil(p, end)))
		if w.Hot(p) {
			hot = append(hot, n)
		} else {
			cold = append(cold, n)
		}
	}
	if len(hot) != 40 {
		t.Fatalf("%d hot pages, want 40", len(hot))
	}
	for _, c := range []struct {
		name   string
		counts []float64
		rate   float64
	}{{"hot", hot, 0.5}, {"cold", cold, 0.02}} {
		want := c.rate * window.Seconds() // per page
		var sum, sq float64
		for _, n := range c.counts {
			sum += n
			sq += (n - want) * (n - want)
		}
		total := want * float64(len(c.counts))
		if math.Abs(sum-total) > 5*math.Sqrt(total) {
			t.Errorf("%s: %v changes, want %v ± %.0f", c.name, sum, total, 5*math.Sqrt(total))
		}
		dispersion := sq / float64(len(c.counts)-1) / want
		if dispersion < 0.6 || dispersion > 1.4 {
			t.Errorf("%s: variance/mean = %.2f, want about 1", c.name, dispersion)
		}
		t.Logf("%s: %d pages, %.0f changes (expected %.0f), variance/mean %.2f", c.name, len(c.counts), sum, total, dispersion)
	}
}

func TestGroundTruthAPI(t *testing.T) {
	w := newWeb(t, changingweb.Options{Pages: 10, HotFraction: 1, HotRate: 2, Seed: 3})
	end := t0.Add(20 * time.Second)
	cs := w.ChangesUntil(4, end)
	if len(cs) < 10 {
		t.Fatalf("%d changes in 20 s at 2/s", len(cs))
	}
	if w.VersionAt(4, t0) != 0 || w.VersionAt(4, t0.Add(-time.Hour)) != 0 {
		t.Error("a version before the first change")
	}
	first, ok := w.FirstChangeAfter(4, t0.Add(-time.Hour))
	if !ok || !first.Equal(cs[0]) {
		t.Errorf("first change from before Start: %v, want %v", first, cs[0])
	}
	for i, c := range cs {
		if got := w.VersionAt(4, c); got != i+1 {
			t.Errorf("version at change %d: %d", i, got)
		}
		if got := w.VersionAt(4, c.Add(-1)); got != i {
			t.Errorf("version just before change %d: %d", i, got)
		}
		next, ok := w.FirstChangeAfter(4, c)
		if i+1 < len(cs) && (!ok || !next.Equal(cs[i+1])) {
			t.Errorf("first change after change %d: %v, want %v", i, next, cs[i+1])
		}
	}
	never := newWeb(t, changingweb.Options{Pages: 2, HotFraction: -1, ColdRate: -1})
	if _, ok := never.FirstChangeAfter(1, t0); ok || never.VersionAt(1, end) != 0 {
		t.Error("a page with rate 0 changed")
	}

	// The log reads back as the same history.
	var buf bytes.Buffer
	if err := w.WriteLog(&buf, "http://h", end); err != nil {
		t.Fatal(err)
	}
	h, err := freshness.ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := w.History("http://h", end)
	for p := range 10 {
		u := w.URL("http://h", p)
		if len(h[u]) != len(want[u]) {
			t.Fatalf("%s: %d changes in the log, %d in the history", u, len(h[u]), len(want[u]))
		}
		for i := range h[u] {
			if !h[u][i].Equal(want[u][i]) {
				t.Fatalf("%s change %d: %v vs %v", u, i, h[u][i], want[u][i])
			}
		}
	}
	if p, ok := w.Page("http://h/s0/7.html"); !ok || p != 7 {
		t.Errorf("Page(URL) = %d, %v", p, ok)
	}
	for _, bad := range []string{"/s0/10.html", "/s0/07.html", "/s0/-1.html", "/s0/+1.html", "/s0/.html", "/", "/s0/3", "/s1/7.html", "/s00/7.html", "/s/7.html", "/p/7.html", "/s0/7.html/x"} {
		if _, ok := w.Page(bad); ok {
			t.Errorf("Page(%q) names a page", bad)
		}
	}
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestServe: the site as a crawler sees it. Every version's visible text
// hashes differently (the chain's content hash), a duplicate serves its
// original's bytes, ETags revalidate, the index page and the sitemap list
// every page.
func TestServe(t *testing.T) {
	clk := newClock(t0)
	born := t0.Add(-30 * 24 * time.Hour)
	w := newWeb(t, changingweb.Options{Pages: 20, Duplicates: 3, HotFraction: 1, HotRate: 1, Seed: 5, Clock: clk.now, Born: born, Sitemap: true})
	srv := httptest.NewServer(w)
	defer srv.Close()

	_, idx := get(t, srv.URL+"/")
	for p := range 20 {
		if !bytes.Contains(idx, []byte(`href="`+w.Path(p)+`"`)) {
			t.Errorf("index page has no link to page %d", p)
		}
	}
	resp, robots := get(t, srv.URL+"/robots.txt")
	if resp.StatusCode != 200 || !strings.Contains(string(robots), "Allow: /") || !strings.Contains(string(robots), "Sitemap: "+srv.URL+"/sitemap.xml") {
		t.Errorf("robots.txt: %d %q", resp.StatusCode, robots)
	}
	_, sm := get(t, srv.URL+"/sitemap.xml")
	if n := bytes.Count(sm, []byte("<loc>")); n != 20 {
		t.Errorf("sitemap lists %d pages", n)
	}
	if resp, _ := get(t, srv.URL+"/s0/20.html"); resp.StatusCode != 404 {
		t.Errorf("page 20 of 20: %d", resp.StatusCode)
	}

	hashes := map[string]int{}
	page := 2
	c1, _ := w.FirstChangeAfter(page, t0)
	c2, _ := w.FirstChangeAfter(page, c1)
	var etag string
	for v, at := range []time.Time{t0, c1, c2} {
		clk.set(at)
		resp, body := get(t, srv.URL+w.Path(page))
		if resp.StatusCode != 200 || !bytes.Equal(body, w.Content(page, v)) {
			t.Fatalf("version %d: status %d, or not Content(%d, %d)", v, resp.StatusCode, page, v)
		}
		p, err := extract.HTML(srv.URL+w.Path(page), body, resp.Header.Get("Content-Type"), extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hashes[p.Hash] = v
		want := at
		if v == 0 {
			want = born
		}
		if lm, err := http.ParseTime(resp.Header.Get("Last-Modified")); err != nil || !lm.Equal(want.Truncate(time.Second)) {
			t.Errorf("version %d: Last-Modified %q, want %v", v, resp.Header.Get("Last-Modified"), want)
		}
		if v == 0 {
			etag = resp.Header.Get("ETag")
			if len(p.Links) != len(w.Links(page)) {
				t.Errorf("page %d: %d links extracted, %d made", page, len(p.Links), len(w.Links(page)))
			}
		}
	}
	if len(hashes) != 3 {
		t.Errorf("3 versions, %d content hashes", len(hashes))
	}
	if resp, _ := get(t, srv.URL+w.Path(page), "If-None-Match", etag); resp.StatusCode != 200 {
		t.Errorf("stale ETag revalidated: %d", resp.StatusCode)
	}
	if resp, _ := get(t, srv.URL+w.Path(page), "If-None-Match", w.ETag(page, 2)); resp.StatusCode != 304 {
		t.Errorf("current ETag: %d, want 304", resp.StatusCode)
	}

	dup := 19
	o := w.Original(dup)
	if o >= 17 {
		t.Fatalf("duplicate %d copies %d, not an original page", dup, o)
	}
	_, a := get(t, srv.URL+w.Path(dup))
	_, b := get(t, srv.URL+w.Path(o))
	if !bytes.Equal(a, b) {
		t.Errorf("duplicate %d and its original %d serve different bytes", dup, o)
	}
	if w.Fetches(page) != 5 || w.Requests() != 7 {
		t.Errorf("fetches: page %d %d, all %d", page, w.Fetches(page), w.Requests())
	}
}

// Every word of a page's body text is a Vocabulary word, and Vocabulary
// hands out a copy.
func TestVocabulary(t *testing.T) {
	voc := changingweb.Vocabulary()
	in := make(map[string]bool)
	for _, v := range voc {
		in[v] = true
	}
	if len(voc) < 50 || len(in) != len(voc) {
		t.Fatalf("Vocabulary: %d words, %d distinct", len(voc), len(in))
	}
	w := newWeb(t, changingweb.Options{Pages: 3, Words: 200})
	body := string(w.Content(1, 0))
	_, text, _ := strings.Cut(body, "of the changing web.</p>\n<p>")
	text, _, ok := strings.Cut(text, ".</p>")
	if !ok {
		t.Fatalf("no body text in\n%s", body)
	}
	for _, word := range strings.Fields(text) {
		if !in[word] {
			t.Errorf("body word %q is not in Vocabulary", word)
		}
	}
	voc[0] = "changed"
	if changingweb.Vocabulary()[0] == "changed" {
		t.Error("Vocabulary returns the package's slice")
	}
}
