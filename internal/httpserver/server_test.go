package httpserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// start serves h on 127.0.0.1 and checks, once the test is over, that
// closing the server gives every connection's slot back.
func start(t *testing.T, h http.Handler, opt Options) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(h, opt)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v, want http.ErrServerClosed", err)
		}
		waitFor(t, "no connection open after Close", func() bool { return s.Conns() == 0 })
	})
	return s, ln.Addr().String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })

// idleConn makes one request on a new connection and keeps it alive.
func idleConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	get(t, c)
	return c
}

func get(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "hello" {
		t.Fatalf("response %q, %v; want hello", b, err)
	}
	c.SetDeadline(time.Time{})
}

// closed reports whether the server closed c within d.
func closed(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// fresh makes a request on a connection of its own.
func fresh(addr string) error {
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := cl.Get("http://" + addr + "/")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if string(b) != "hello" {
		return fmt.Errorf("response %q, want hello", b)
	}
	return nil
}

func idles(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lns {
		l.mu.Lock()
		n += len(l.idles)
		l.mu.Unlock()
	}
	return n
}

// TestIdleFlood opens many more kept-alive connections than the cap: each
// new one is served, the server closes the ones idle the longest, and no
// more than the cap stay open.
func TestIdleFlood(t *testing.T) {
	const max, n = 8, 100
	s, addr := start(t, hello, Options{MaxConns: max, IdleTimeout: time.Hour})
	var cs []net.Conn
	for i := range n {
		cs = append(cs, idleConn(t, addr))
		if got := s.Conns(); got > max {
			t.Fatalf("after %d connections: %d open, cap %d", i+1, got, max)
		}
	}
	waitFor(t, "the last connections idle", func() bool { return idles(s) == max })
	if err := fresh(addr); err != nil {
		t.Fatalf("a request past the cap: %v", err)
	}
	for i, c := range cs[:n-max] {
		if !closed(c, 5*time.Second) {
			t.Errorf("connection %d of %d still open, only the last %d may be", i, n, max)
		}
	}
	if got := s.Conns(); got > max {
		t.Errorf("%d connections open, cap %d", got, max)
	}
}

// TestIdleTimeout: kept-alive connections close after IdleTimeout.
func TestIdleTimeout(t *testing.T) {
	s, addr := start(t, hello, Options{IdleTimeout: 100 * time.Millisecond})
	var cs []net.Conn
	for range 3 {
		cs = append(cs, idleConn(t, addr))
	}
	for i, c := range cs {
		if !closed(c, 5*time.Second) {
			t.Errorf("idle connection %d open after 5s, IdleTimeout 100ms", i)
		}
	}
	waitFor(t, "no connection open", func() bool { return s.Conns() == 0 })
}

// TestSilentConns: connections that send nothing hold their slots until
// ReadHeaderTimeout; a client behind them waits, then is served.
func TestSilentConns(t *testing.T) {
	const max = 2
	timeout := 300 * time.Millisecond
	s, addr := start(t, hello, Options{MaxConns: max, ReadHeaderTimeout: timeout})
	for range max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	waitFor(t, "the silent connections accepted", func() bool { return s.Conns() == max })
	began := time.Now()
	if err := fresh(addr); err != nil {
		t.Fatalf("a request behind silent connections: %v", err)
	}
	if took := time.Since(began); took < timeout/2 {
		t.Errorf("served in %v, before a silent connection could time out (%v): the cap let it through", took, timeout)
	}
}

// TestActiveCap: requests past the cap wait for one to end; no more than
// the cap are ever handled at once.
func TestActiveCap(t *testing.T) {
	const max, n = 2, 6
	var now, most atomic.Int32
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := now.Add(1)
		for m := most.Load(); v > m && !most.CompareAndSwap(m, v); m = most.Load() {
		}
		<-release
		now.Add(-1)
		io.WriteString(w, "hello")
	})
	_, addr := start(t, h, Options{MaxConns: max})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- fresh(addr) })
	}
	waitFor(t, "requests handled", func() bool { return now.Load() == max })
	time.Sleep(200 * time.Millisecond)
	if got := now.Load(); got != max {
		t.Errorf("%d requests handled at once, cap %d", got, max)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a request waiting past the cap: %v", err)
		}
	}
	if got := most.Load(); got > max {
		t.Errorf("%d requests handled at once, cap %d", got, max)
	}
}
