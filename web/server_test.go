package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/serving/feed"
)

// every route, with a query that succeeds on the canned backend.
var routes = []string{
	"/",
	"/search?q=percolator",
	"/doc?url=https://www.example.com/percolator",
	"/top",
	"/top?host=www.example.com",
	"/status",
	"/api/search?q=percolator",
	"/api/doc?url=https://www.example.com/percolator",
	"/api/top",
	"/api/stats",
	"/static/style.css",
}

func TestRoutesOK(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	for _, target := range routes {
		res, body := get(t, s, target)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d; body %.300s", target, res.StatusCode, body)
		}
		ct := res.Header.Get("Content-Type")
		switch {
		case strings.HasPrefix(target, "/api/"):
			if ct != "application/json; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q", target, ct)
			}
		case strings.HasPrefix(target, "/static/"):
			if ct != "text/css; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q", target, ct)
			}
		default:
			if ct != "text/html; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q", target, ct)
			}
			wantContains(t, target, body, "<!doctype html>", `<link rel="stylesheet" href="/static/style.css">`, `name="q"`)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", target, csp)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", target)
		}
	}
}

func TestHead(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	for _, target := range routes {
		res, _ := do(t, s, http.MethodHead, target)
		if res.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s: status %d", target, res.StatusCode)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		for _, target := range []string{"/", "/search?q=x", "/doc?url=x", "/status", "/api/search?q=percolator", "/api/stats", "/nope"} {
			res, body := do(t, s, method, target)
			if res.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want 405", method, target, res.StatusCode)
			}
			if got := res.Header.Get("Allow"); got != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q", method, target, got)
			}
			if strings.HasPrefix(target, "/api/") && !strings.Contains(body, `"error":"method `+method) {
				t.Errorf("%s %s: body %s", method, target, body)
			}
		}
	}
	if calls := s.b.(*fake).calls(); len(calls) != 0 {
		t.Errorf("the backend was called: %v", calls)
	}
}

func TestNotFoundPaths(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	for _, target := range []string{"/nope", "/search/", "/doc/x", "/index.html", "/static/", "/static/app.js", "/metrics", "//search", "/api", "/api/", "/api/nope", "/api/search/"} {
		res, body := get(t, s, target)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", target, res.StatusCode)
			continue
		}
		if strings.HasPrefix(target, "/api/") {
			m := getJSON(t, s, target, http.StatusNotFound)
			wantKeys(t, target, m, []string{"error"})
		} else {
			wantContains(t, target, body, "Not found", "<!doctype html>")
		}
	}
}

func TestMetrics(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "caffeine_pages 1169")
	})
	s, _ := newTestServer(t, canned(), Options{Metrics: metrics})
	res, body := get(t, s, "/metrics")
	if res.StatusCode != http.StatusOK || body != "caffeine_pages 1169\n" {
		t.Errorf("GET /metrics: %d %q", res.StatusCode, body)
	}
	if res, _ := do(t, s, http.MethodPost, "/metrics"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d", res.StatusCode)
	}
}

func TestStyle(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	res, body := get(t, s, "/static/style.css")
	if !strings.Contains(body, "mark {") {
		t.Errorf("stylesheet: %.100s", body)
	}
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req, _ := http.NewRequest(http.MethodGet, "/static/style.css", nil)
	req.Header.Set("If-None-Match", etag)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d", rec.Code)
	}
}

// TestBackendErrors maps the backend's errors to statuses on every route
// that calls it, as JSON under /api/ and as a page elsewhere.
func TestBackendErrors(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		msg    string // in the body
	}{
		{"bad query", fmt.Errorf("%w: unexpected token", serving.ErrBadQuery), 400, "bad query: unexpected token"},
		{"not found", fmt.Errorf("%w: no such thing", serving.ErrNotFound), 404, "not found: no such thing"},
		{"deadline", fmt.Errorf("index: %w", errDeadline), 504, "took longer than"},
		{"other", errors.New("disk on fire (secret detail)"), 500, "internal error"},
	}
	targets := []string{
		"/search?q=x", "/doc?url=x", "/top", "/status",
		"/api/search?q=x", "/api/doc?url=x", "/api/top", "/api/stats",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := canned()
			f.err = c.err
			s, logs := newTestServer(t, f, Options{})
			for _, target := range targets {
				res, body := get(t, s, target)
				if res.StatusCode != c.status {
					t.Errorf("GET %s: status %d, want %d; body %.300s", target, res.StatusCode, c.status, body)
				}
				if !strings.Contains(body, c.msg) {
					t.Errorf("GET %s: body lacks %q: %.500s", target, c.msg, body)
				}
				if strings.Contains(body, "secret detail") {
					t.Errorf("GET %s: the error detail leaked to the client", target)
				}
				if strings.HasPrefix(target, "/api/") {
					m := getJSON(t, s, target, c.status)
					wantKeys(t, target, m, []string{"error"})
				}
			}
			if c.status == 500 && !strings.Contains(logs.String(), "secret detail") {
				t.Errorf("the detail of a 500 is not logged: %s", logs)
			}
			if c.status != 500 && strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("a %d was logged as an error: %s", c.status, logs)
			}
		})
	}
}

// errDeadline is what a backend that honours the deadline returns.
var errDeadline = fmt.Errorf("wrapped: %w", context.DeadlineExceeded)

// TestQueryTimeout: a backend that waits for its context is stopped at
// QueryTimeout with 504, not left to hang.
func TestQueryTimeout(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{QueryTimeout: 50 * time.Millisecond})
	for _, target := range []string{"/search?q=slow", "/api/search?q=slow", "/doc?url=slow", "/api/doc?url=slow", "/top?host=slow", "/api/top?host=slow"} {
		began := time.Now()
		res, body := get(t, s, target)
		if res.StatusCode != http.StatusGatewayTimeout {
			t.Errorf("GET %s: status %d, want 504", target, res.StatusCode)
		}
		if !strings.Contains(body, "took longer than 50ms") {
			t.Errorf("GET %s: body %.300s", target, body)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("GET %s: took %v", target, d)
		}
	}
}

func TestBackendFailureIs500(t *testing.T) {
	s, logs := newTestServer(t, canned(), Options{})
	for _, target := range []string{"/search?q=boom", "/api/search?q=boom", "/search?q=panic", "/api/search?q=panic", "/doc?url=panic"} {
		res, body := get(t, s, target)
		if res.StatusCode != http.StatusInternalServerError {
			t.Errorf("GET %s: status %d, want 500", target, res.StatusCode)
		}
		if strings.Contains(body, "secret detail") || strings.Contains(body, "panicked") {
			t.Errorf("GET %s: detail leaked: %.300s", target, body)
		}
	}
	if l := logs.String(); !strings.Contains(l, "segment 7 is corrupt") || !strings.Contains(l, "the backend panicked") {
		t.Errorf("log: %s", l)
	}
}

// nilBackend returns neither values nor errors, a backend bug.
type nilBackend struct{}

func (nilBackend) Search(context.Context, serving.Query) (*serving.Results, error) { return nil, nil }
func (nilBackend) Doc(context.Context, string) (*feed.DocInfo, error)              { return nil, nil }
func (nilBackend) Top(context.Context, string, int) (*serving.Top, error)          { return nil, nil }
func (nilBackend) Stats(context.Context) (*Stats, error)                           { return nil, nil }
func (nilBackend) History() []Sample                                               { return nil }

func TestNilBackendValues(t *testing.T) {
	s, logs := newTestServer(t, nilBackend{}, Options{})
	for _, target := range routes {
		res, _ := get(t, s, target)
		want := http.StatusInternalServerError
		if target == "/" || strings.HasPrefix(target, "/static/") {
			want = http.StatusOK
		}
		if res.StatusCode != want {
			t.Errorf("GET %s: status %d, want %d", target, res.StatusCode, want)
		}
	}
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("a nil value panicked: %s", logs)
	}
}

// TestConcurrentRequests: one Server serves many requests at once (run
// with -race).
func TestConcurrentRequests(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				target := routes[(g+i)%len(routes)]
				req := httptest.NewRequest(http.MethodGet, target, nil)
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Errorf("GET %s: %d", target, rec.Code)
				}
			}
		})
	}
	wg.Wait()
}
