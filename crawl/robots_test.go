package crawl

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
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
