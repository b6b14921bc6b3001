package crawl

import (
	"context"
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

// A crawler that is not Once calls Options.CaughtUp once, when every page
// is fetched and nothing is due, and goes on running.
func TestCaughtUpOnce(t *testing.T) {
	s := newSite(t)
	s.page("/", `<html><body><a href="/a">a</a> <a href="/b">b</a></body></html>`)
	s.page("/a", "<html><body>a</body></html>")
	s.page("/b", "<html><body>b</body></html>")
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.Once = false
	var calls atomic.Int64
	caught := make(chan int64, 1)
	var c *Crawler
	opt.CaughtUp = func() {
		if calls.Add(1) == 1 {
			caught <- c.Stats().Fetched
		}
	}
	c, err := New(tb.db, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	select {
	case n := <-caught:
		if n != 3 {
			t.Errorf("CaughtUp after %d fetches, want all 3", n)
		}
	case err := <-done:
		t.Fatalf("Run = %v before CaughtUp", err)
	case <-time.After(30 * time.Second):
		t.Fatal("CaughtUp never called")
	}
	select {
	case err := <-done:
		t.Fatalf("Run = %v after CaughtUp: a crawl that is not Once goes on", err)
	case <-time.After(2500 * time.Millisecond): // passes go on every second
	}
	cancel()
	<-done
	if n := calls.Load(); n != 1 {
		t.Errorf("CaughtUp called %d times, want once", n)
	}
}
