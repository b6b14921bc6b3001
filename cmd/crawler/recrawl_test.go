package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hits is a site of three pages that counts the requests for each.
type hits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.n[r.URL.Path]++
	h.mu.Unlock()
	switch r.URL.Path {
	case "/":
		fmt.Fprint(w, `<a href="/a">a</a> <a href="/b">b</a>`)
	case "/a", "/b":
		fmt.Fprint(w, "leaf")
	default:
		http.NotFound(w, r)
	}
}

func (h *hits) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[path]
}

func newHits(t *testing.T) (*hits, *httptest.Server) {
	h := &hits{n: map[string]int{}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

// slowCrawl crawls once, leaving every page due in an hour.
var slowCrawl = []string{"-allow-private", "-delay", "0", "-min-interval", "1h", "-initial-interval", "1h", "-no-sitemaps"}

func runOK(t *testing.T, want string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if code := run(args, &out); code != 0 || !strings.Contains(out.String(), want) {
		t.Fatalf("run(%q) = %d, output:\n%s\nwant 0 and %q", args, code, out.String(), want)
	}
	return out.String()
}

// With no process holding the table, recrawl makes pages due in it and
// the next crawl fetches them.
func TestRecrawlDirect(t *testing.T) {
	h, srv := newHits(t)
	dir := t.TempDir()
	runOK(t, "3 pages (0 errors", append([]string{"-data", dir, "-seeds", srv.URL + "/", "-once"}, slowCrawl...)...)
	runOK(t, "0 pages", "-data", dir, "-once", "-allow-private")

	runOK(t, "crawler recrawl: 1 page due now", "recrawl", "-data", dir, srv.URL+"/a")
	runOK(t, "1 pages (0 errors", "-data", dir, "-once", "-allow-private")
	if h.count("/a") != 2 || h.count("/b") != 1 {
		t.Errorf("fetches: /a %d, /b %d; want /a again only", h.count("/a"), h.count("/b"))
	}

	host := strings.TrimPrefix(srv.URL, "http://")
	runOK(t, "crawler recrawl: 3 pages due now", "recrawl", "-data", dir, "-host", host)
	runOK(t, "3 pages (0 errors", "-data", dir, "-once", "-allow-private")

	// A request left in the spool by a process that ended is applied too.
	if err := os.MkdirAll(spoolDir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(spoolDir(dir), "1-left.json"), []byte(`{"urls": ["`+srv.URL+`/b"]}`), 0o644)
	runOK(t, "applied 1 queued request left in", "recrawl", "-data", dir, srv.URL+"/a")
	runOK(t, "2 pages (0 errors", "-data", dir, "-once", "-allow-private")

	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"unknown URLs named", []string{"-data", dir, srv.URL + "/a", srv.URL + "/nowhere", "http://example.com/"}, 1, "page not in the frontier: [" + srv.URL + "/nowhere http://example.com/]"},
		{"unknown host", []string{"-data", dir, "-host", "example.com"}, 1, "no page of host example.com"},
		{"nothing asked", []string{"-data", dir}, 2, "usage"},
		{"no data", []string{srv.URL + "/a"}, 2, "usage"},
		{"not a URL", []string{"-data", dir, "mailto:someone@example.com"}, 2, "mailto"},
		{"not a host", []string{"-data", dir, "-host", "http://example.com/"}, 2, "not a host"},
		{"no table", []string{"-data", filepath.Join(dir, "nowhere"), srv.URL + "/a"}, 1, "no table in"},
		{"help", []string{"-h"}, 0, "usage: crawler recrawl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(append([]string{"recrawl"}, tc.args...), &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
				t.Errorf("recrawl %q = %d, output:\n%s\nwant %d and %q", tc.args, code, out.String(), tc.code, tc.out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Errorf("recrawl created a table: %v", err)
	}
}

// With a crawler running on the table (another process, holding Badger's
// lock), recrawl queues the request and the crawler applies it: the pages
// are fetched again at once; a malformed request file is moved aside.
func TestRecrawlRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the crawler")
	}
	bin := filepath.Join(t.TempDir(), "crawler")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	h, srv := newHits(t)
	dir := t.TempDir()
	var log bytes.Buffer
	cmd := exec.Command(bin, append([]string{"-data", dir, "-seeds", srv.URL + "/"}, slowCrawl...)...)
	cmd.Stderr = &syncWriter{w: &log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGINT)
			<-exited
		}
	}
	defer stop()
	waitFor(t, "the first crawl", func() bool { return h.count("/a") == 1 && h.count("/b") == 1 })

	runOK(t, "the running process took the request: 1 page due now", "recrawl", "-data", dir, srv.URL+"/a")
	waitFor(t, "/a fetched again", func() bool { return h.count("/a") == 2 })

	out := runOK(t, "queued for it in "+spoolDir(dir), "recrawl", "-data", dir, "-host", strings.TrimPrefix(srv.URL, "http://"), "-wait", "0")
	if strings.Contains(out, "took") {
		t.Errorf("-wait 0 waited:\n%s", out)
	}
	waitFor(t, "the host fetched again", func() bool { return h.count("/") == 2 && h.count("/a") == 3 && h.count("/b") == 2 })

	// Unknown URLs: the running process applies the known ones, and
	// recrawl names the others and fails, as it does without a running
	// process.
	var unknown bytes.Buffer
	if code := run([]string{"recrawl", "-data", dir, srv.URL + "/b", srv.URL + "/nowhere"}, &unknown); code != 1 ||
		!strings.Contains(unknown.String(), "took the request: 1 page due now") || !strings.Contains(unknown.String(), srv.URL+"/nowhere") {
		t.Errorf("recrawl of an unknown URL = %d:\n%s\nwant 1, one page due and the URL named", code, unknown.String())
	}
	waitFor(t, "/b fetched again", func() bool { return h.count("/b") == 3 })
	// The outcomes read are gone; the one of the -wait 0 request is left
	// for its hour.
	if ents, _ := os.ReadDir(filepath.Join(spoolDir(dir), "done")); len(ents) != 1 {
		t.Errorf("%d outcomes left in the spool, want 1 (the -wait 0 request's)", len(ents))
	}

	if err := os.WriteFile(filepath.Join(spoolDir(dir), "broken.json"), []byte(`{"urls": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the malformed request moved aside", func() bool {
		_, err := os.Stat(filepath.Join(spoolDir(dir), "bad", "broken.json"))
		return err == nil
	})
	stop()
	for _, want := range []string{"recrawl request applied", "pages_due=3", "recrawl request applied in part", "/nowhere", "recrawl request malformed; moved aside"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("crawler log lacks %q:\n%s", want, log.String())
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not after 30 s", what)
}
