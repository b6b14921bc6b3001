package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestIdleConnections: far more kept-alive connections than -max-conns
// neither stop the server answering nor stay open: the ones idle the
// longest are closed to make room.
func TestIdleConnections(t *testing.T) {
	const max, n = 4, 40
	d := start(t, "-data", t.TempDir(), "-no-crawl", "-max-conns", "4")
	addr := strings.TrimPrefix(d.base, "http://")
	var cs []net.Conn
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET /api/stats HTTP/1.1\r\nHost: test\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d of %d: %v", i, n, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: status %d", i, resp.StatusCode)
		}
		cs = append(cs, c)
	}
	var st stats
	if code := d.get("/api/stats", &st); code != http.StatusOK {
		t.Fatalf("a request past the cap: status %d", code)
	}
	open := 0
	for _, c := range cs {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			open++
		}
	}
	if open > max {
		t.Errorf("%d of %d idle connections still open, -max-conns %d", open, n, max)
	}
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

func TestMaxConnsUsage(t *testing.T) {
	var out syncBuffer
	if code := run(context.Background(), []string{"-data", t.TempDir(), "-max-conns", "0"}, &out, nil); code != 2 {
		t.Errorf("search -max-conns 0 = %d, want 2:\n%s", code, out.String())
	}
}

// TestAddrInUse: a UI address another process holds is an error that
// says to choose another with -addr, and names one.
func TestAddrInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-data", t.TempDir(), "-no-crawl", "-addr", ln.Addr().String()}, &out, nil); code != 1 || !strings.Contains(out.String(), "is in use") || !strings.Contains(out.String(), "-addr 127.0.0.1:") {
		t.Fatalf("exit %d, %q; want 1 and a message naming -addr", code, out.String())
	}
}
