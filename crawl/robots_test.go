package crawl

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestRobots(t *testing.T) {
	s := newSite(t)
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.2\n\nUser-agent: othercrawler\nDisallow: /\n")
	})
	links := `<a href="/private/secret">s</a>`
	for i := range 5 {
		links += fmt.Sprintf(`<a href="/p%d">p</a>`, i)
	}
	s.page("/", links)
	for i := range 5 {
		s.page(fmt.Sprintf("/p%d", i), "leaf")
	}
	s.page("/private/secret", "secret")

	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.Parallel = 4 // Crawl-delay forces 1
	tb.crawl(opt)

	if n := s.count("/private/secret"); n != 0 {
		t.Errorf("disallowed page fetched %d times", n)
	}
	if e := string(tb.get(s.URL+"/private/secret", webtable.Error)); !strings.Contains(e, "robots") {
		t.Errorf("disallowed page error = %q", e)
	}
	if tb.get(s.URL+"/private/secret", webtable.Body) != nil {
		t.Error("disallowed page has a body")
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (cached)", n)
	}
	var starts []time.Time
	for _, p := range []string{"/", "/p0", "/p1", "/p2", "/p3", "/p4"} {
		if s.count(p) != 1 {
			t.Errorf("%s fetched %d times", p, s.count(p))
		}
		starts = append(starts, s.startTimes(p)...)
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(starts); i++ {
		// The server sees the requests with the scheduler's jitter
		// (tens of ms on a loaded machine under -race); the crawler's
		// own spacing is checked exactly by TestPaceFromTheRequest.
		if gap := starts[i].Sub(starts[i-1]); gap < 160*time.Millisecond {
			t.Errorf("request %d came %v after the previous one; Crawl-delay is 200ms", i, gap)
		}
	}
}

func TestRobotsServerError(t *testing.T) {
	s := newSite(t)
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	s.page("/", "hello")
	tb := openTable(t, "")
	tb.crawl(testOptions(s.URL + "/"))
	if s.count("/") != 0 {
		t.Error("page fetched although robots.txt answered 503 (full disallow)")
	}
	if e := string(tb.get(s.URL+"/", webtable.Error)); !strings.Contains(e, "robots") {
		t.Errorf("error = %q", e)
	}
}

// TestPaceFromTheRequest: a slot is taken before the page's claim, so a
// slow claim followed by a quick one must not bring two requests closer
// than the delay: the gap counts from when a request went out.
func TestPaceFromTheRequest(t *testing.T) {
	const delay = 100 * time.Millisecond
	opt := &Options{Delay: delay, Parallel: 2}
	hs := newHosts(opt)
	h := hs.get("h", "http://h")
	h.robotsSeen = true
	start := time.Now()
	// The first slot is taken 80 ms before its request goes out (a slow
	// claim); the second, a delay after the first was taken, has a quick
	// claim.
	for _, at := range []time.Time{start.Add(-80 * time.Millisecond), start.Add(25 * time.Millisecond)} {
		if ok, _, _ := hs.acquire(h, at); !ok {
			t.Fatalf("slot at %v not taken", at.Sub(start))
		}
	}
	a, err := hs.pace(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hs.pace(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if gap := b.Sub(a); gap < delay {
		t.Errorf("second request went out %v after the first; the delay is %v", gap, delay)
	}
}

// TestRobotsHalfBroken: lines of robots.txt that cannot be read are
// ignored one by one, never the whole file. Here a rule before the first
// user-agent and a Crawl-delay that is no number stand among the rules
// the crawler must obey; a group for "caffeine", a shorter product token,
// is not ours.
func TestRobotsHalfBroken(t *testing.T) {
	s := newSite(t)
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# stray rules before any user-agent\n"+
			"disallow: /stray/\n"+
			"allow: /private/\n"+
			"\n"+
			"User-agent: *\n"+
			"Crawl-delay: fast\n"+
			"Disallow: /private/ # all of it\n"+
			"Allow: /private/open$\n"+
			"Disallow: /*.pdf$\n"+
			"Disallow: /ツ\n"+
			"\n"+
			"User-agent: caffeine\n"+
			"Disallow: /\n")
	})
	allowed := []string{"/", "/stray/page", "/private/open", "/x/private/a", "/a.pdf?download", "/p0"}
	disallowed := []string{"/private/secret", "/private/open/x", "/a.pdf", "/docs/b.pdf", "/%E3%83%84/page"}
	var links strings.Builder
	served := map[string]bool{}
	for _, p := range append(allowed[1:], disallowed...) {
		fmt.Fprintf(&links, `<a href="%s">x</a> `, p)
		u, err := url.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		if !served[u.Path] {
			served[u.Path] = true
			s.page(u.Path, "leaf")
		}
	}
	s.page("/", links.String())

	tb := openTable(t, "")
	c := tb.crawl(testOptions(s.URL + "/"))

	for _, p := range allowed {
		if n := s.count(p); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
	for _, p := range disallowed {
		if n := s.count(p); n != 0 {
			t.Errorf("%s fetched %d times; robots.txt disallows it", p, n)
		}
		if e := string(tb.get(s.URL+p, webtable.Error)); !strings.Contains(e, "robots") {
			t.Errorf("%s: error %q, want the robots.txt cause", p, e)
		}
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
	c.hosts.mu.Lock()
	defer c.hosts.mu.Unlock()
	for _, h := range c.hosts.m {
		if h.crawlDelay != 0 {
			t.Errorf("host %s has Crawl-delay %v; the file's is no number", h.origin, h.crawlDelay)
		}
	}
}

// TestRobotsUnreachableKeepsPages: a robots.txt that answers 503 disallows
// every page for a while (RFC 9309 section 2.3.1.4), as a failure: the
// pages fetched before keep their bodies.
func TestRobotsUnreachableKeepsPages(t *testing.T) {
	s := newSite(t)
	var down atomic.Bool
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	s.page("/", "hello")
	tb := openTable(t, "")
	tb.crawl(testOptions(s.URL + "/"))
	if s.count("/") != 1 || tb.get(s.URL+"/", webtable.Body) == nil {
		t.Fatalf("/ fetched %d times, body %q", s.count("/"), tb.get(s.URL+"/", webtable.Body))
	}

	down.Store(true)
	if n, err := Recrawl(t.Context(), tb.db, []string{s.URL + "/"}, time.Now()); err != nil || n != 1 {
		t.Fatalf("Recrawl: %d, %v", n, err)
	}
	tb.crawl(testOptions(s.URL + "/"))
	if n := s.count("/"); n != 1 {
		t.Errorf("/ fetched %d times while robots.txt answered 503", n)
	}
	if e := string(tb.get(s.URL+"/", webtable.Error)); !strings.Contains(e, "robots") || !strings.Contains(e, "503") {
		t.Errorf("error = %q, want robots.txt unreachable (503)", e)
	}
	if tb.get(s.URL+"/", webtable.Body) == nil {
		t.Error("the body was deleted because robots.txt answered 503")
	}
}
