package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/freshness/changingweb"
)

// fakeAPI is cmd/search's JSON API over an index holding, for every page
// of web, the version live at fetched (only the fields the probe reads).
func fakeAPI(t *testing.T, web *changingweb.Web, base string, fetched time.Time) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := json.NewEncoder(w)
		switch r.URL.Path {
		case "/api/search":
			var res []map[string]any
			for p := range web.Pages() {
				res = append(res, map[string]any{"url": web.URL(base, p), "fetched_at": fetched, "indexed_at": fetched.Add(time.Second)})
			}
			enc.Encode(map[string]any{"total": len(res), "results": res})
		case "/api/doc":
			p, _ := web.Page(r.FormValue("url"))
			pg, err := extract.HTML(r.FormValue("url"), web.Content(p, web.VersionAt(p, fetched)), "text/html", extract.Options{})
			if err != nil {
				t.Error(err)
			}
			enc.Encode(map[string]any{"url": r.FormValue("url"), "content_hash": pg.Hash, "fetched_at": fetched,
				"stages": map[string]any{"fetched": fetched, "searchable": fetched.Add(time.Second)}})
		default:
			http.NotFound(w, r)
		}
	}))
}

func TestMeasure(t *testing.T) {
	now := time.Now()
	web, err := changingweb.New(changingweb.Options{Pages: 6, HotFraction: 0.5, HotRate: 0.1, Seed: 2,
		Start: now.Add(-100 * time.Second), Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(web)
	defer site.Close()
	api := fakeAPI(t, web, site.URL, now.Add(-30*time.Second))
	defer api.Close()
	dir := t.TempDir()
	queries := filepath.Join(dir, "queries")
	os.WriteFile(queries, []byte("# one query\npage\n"), 0o644)
	truth := filepath.Join(dir, "changes.jsonl")
	f, _ := os.Create(truth)
	web.WriteLog(f, site.URL, now)
	f.Close()

	ctx := context.Background()
	var out, errb bytes.Buffer
	svg := filepath.Join(dir, "out.svg")
	if code := run(ctx, []string{"-server", api.URL, "-queries", queries, "-delay", "0", "-plot", svg}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"freshness", "fetched→searchable", "6 of 6 documents",
		"What the rows mean", "pipeline latency", "indexed_at−fetched_at  from a result's fetch to its latest write"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out.String())
		}
	}
	// Progress, off a terminal: a line when the sample is drawn, one
	// when the last document is checked.
	for _, want := range []string{"checking a sample of indexed documents against the live pages", "sample=6", "checked=6 of=6"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, errb.String())
		}
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}

	out.Reset()
	png := filepath.Join(dir, "out.png")
	if code := run(ctx, []string{"-server", api.URL, "-delay", "0", "-json", "-truth", truth, "-plot", png}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep freshness.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("-json: %v\n%s", err, out.String())
	}
	if rep.Checked != 6 || rep.AgeEstimator != "exact" || rep.Latency["searchable"].P50 != 1 {
		t.Errorf("report: checked %d estimator %s latency %+v", rep.Checked, rep.AgeEstimator, rep.Latency["searchable"])
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("png plot: %v", err)
	}
}

func TestUsage(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"extra"},
		{"-web", "127.0.0.1:0", "-experiment"},
		{"-nope"},
		{"-experiment", "-rates", "1,x"},
		{"-queries", filepath.Join(t.TempDir(), "empty")},
	} {
		if len(args) == 2 && args[0] == "-queries" {
			os.WriteFile(args[1], []byte("# nothing\n"), 0o644)
		}
		var out, errb bytes.Buffer
		if code := run(ctx, args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"-server", "http://127.0.0.1:1", "-timeout", "1s"}, &out, &errb); code != 1 {
		t.Errorf("unreachable server: exit %d, want 1", code)
	}
}

// TestServeWeb runs the fixture as a server and stops it: the change log
// is written and reads back.
func TestServeWeb(t *testing.T) {
	var now atomic.Int64 // the fixture's clock, Unix ns
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	webClock = func() time.Time { return time.Unix(0, now.Load()) }
	defer func() { webClock = time.Now }()
	ctx, cancel := context.WithCancel(context.Background())
	logPath := filepath.Join(t.TempDir(), "changes.jsonl")
	done := make(chan int)
	var out bytes.Buffer
	errb := newWatchWriter("changing web of")
	go func() {
		done <- run(ctx, []string{"-web", "127.0.0.1:0", "-pages", "20", "-hot-rate", "50", "-log", logPath}, &out, errb)
	}()
	select {
	case <-errb.seen: // serving
	case code := <-done:
		t.Fatalf("exit %d before serving: %s", code, errb.String())
	}
	now.Add(int64(time.Minute)) // 20 pages changing 50 times a second (hot) or 0.002 (cold)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := freshness.ReadHistory(f)
	if err != nil || len(h) == 0 {
		t.Errorf("change log: %d pages, %v (%s)", len(h), err, errb.String())
	}
}

// watchWriter is a concurrency-safe buffer that closes seen once what was
// written contains want.
type watchWriter struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
}

func newWatchWriter(want string) *watchWriter {
	return &watchWriter{want: want, seen: make(chan struct{})}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.b.String(), w.want)
	n, err := w.b.Write(p)
	if !had && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
