package crawl

import (
	"sync/atomic"
	"testing"
	"time"
)

// While Options.Behind says the indexing chain is behind, no page is
// handed out; the crawl goes on once it is not.
func TestBehindPausesDispatch(t *testing.T) {
	const paused = 300 * time.Millisecond
	s := newSite(t)
	s.page("/", `<html><body><a href="/a">a</a> <a href="/b">b</a></body></html>`)
	s.page("/a", "<html><body>a</body></html>")
	s.page("/b", "<html><body>b</body></html>")
	tb := openTable(t, "")
	var behind atomic.Bool
	behind.Store(true)
	var asked atomic.Int64
	opt := testOptions(s.URL + "/")
	opt.Behind = func() bool {
		asked.Add(1)
		return behind.Load()
	}
	began := time.Now()
	time.AfterFunc(paused, func() { behind.Store(false) })
	tb.crawl(opt)
	for _, p := range []string{"/", "/a", "/b"} {
		if n := s.count(p); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
	if first := s.startTimes("/")[0].Sub(began); first < paused-10*time.Millisecond {
		t.Errorf("the seed was fetched %v after the start, while the chain was behind (%v)", first, paused)
	}
	if n := asked.Load(); n < 5 {
		t.Errorf("Behind asked %d times in %v, want it polled", n, paused)
	}
}
