package observers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// realSite is a web server with what real sites have and fixtures tend to
// lack: every kind of redirect, in scope and out, loops and long chains,
// 404 and 410, a 500, a robots.txt that disallows a page, a plain
// http.FileServer (which redirects dir/index.html to dir/), a redirect to
// a duplicate, and pages that change what they answer between crawls.
// The crawler reaches it as http://site.test (see hostTransport), so the
// address guard stays on and refuses the private address among the seeds.
type realSite struct {
	srv *httptest.Server

	mu    sync.Mutex
	round int // 1: the first crawl; 2: the flips answer differently
}

const siteURL = "http://site.test"

func newRealSite(t *testing.T) *realSite {
	t.Helper()
	s := &realSite{round: 1}
	docs := t.TempDir()
	for name, body := range map[string]string{
		"index.html":     page("Docs home", "the documentation starts here", "dir/index.html", "the dir index", "a.html", "page a"),
		"a.html":         page("Page A", "alpha page of the docs", "dir/index.html", "back to dir", "../target.html", "target from docs"),
		"dir/index.html": page("Dir", "the directory index page lists things", "../a.html", "to a"),
	} {
		p := filepath.Join(docs, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/docs/", http.StripPrefix("/docs", http.FileServer(http.Dir(docs))))
	html := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	redirect := func(path, to string, code int) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to, code)
		})
	}
	// flip serves path as before in round 1 and as after in round 2.
	flip := func(path string, before, after http.HandlerFunc) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			round := s.round
			s.mu.Unlock()
			if round == 1 {
				before(w, r)
			} else {
				after(w, r)
			}
		})
	}
	serve := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	to := func(target string, code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, code) }
	}

	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	html("/", page("Home", "welcome to the test site",
		"/moved", "moved link", "/found", "found link", "/temp", "temp link", "/perm", "perm link",
		"/away", "away link", "/loop-a", "loop link", "/long0", "long link",
		"/missing", "missing link", "/removed", "removed link", "/broken", "broken link",
		"/private/secret.html", "secret link", "http://10.9.9.9/", "private link",
		"/docs/", "docs link", "/docs/dir/index.html", "dir index link",
		"/copy1.html", "first copy", "/dup-redirect", "dup link",
		"/flip1", "flip one", "/flip2", "flip two", "/flip3", "flip three"))
	html("/target.html", page("Target", "the page moved here", "/", "home"))
	html("/t302.html", page("Found target", "found by a 302", "/", "home"))
	html("/t307.html", page("Temp target", "reached by a 307"))
	html("/t308.html", page("Perm target", "reached by a 308", "/t302.html", "to the 302 target"))
	html("/copy1.html", page("Copy", "identical duplicated wombat content"))
	html("/copy2.html", page("Copy", "identical duplicated wombat content"))
	html("/private/secret.html", page("Secret", "robots keep this out"))
	redirect("/moved", "/target.html", http.StatusMovedPermanently)
	redirect("/found", "/t302.html", http.StatusFound)
	redirect("/temp", "/t307.html", http.StatusTemporaryRedirect)
	redirect("/perm", "/t308.html", http.StatusPermanentRedirect)
	redirect("/away", "http://elsewhere.test/x", http.StatusMovedPermanently)
	redirect("/loop-a", "/loop-b", http.StatusFound)
	redirect("/loop-b", "/loop-a", http.StatusFound)
	for i := range 8 {
		redirect(fmt.Sprintf("/long%d", i), fmt.Sprintf("/long%d", i+1), http.StatusFound)
	}
	redirect("/dup-redirect", "/copy2.html", http.StatusMovedPermanently)
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/removed", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) })
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
	flip("/flip1", serve(page("Flip one", "first flip content")), to("/target.html", http.StatusMovedPermanently))
	flip("/flip2", http.NotFound, serve(page("Flip two", "second flip is back", "/target.html", "flip two to target")))
	flip("/flip3", to("/t302.html", http.StatusMovedPermanently), serve(page("Flip three", "third flip stands alone")))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *realSite) setRound(n int) {
	s.mu.Lock()
	s.round = n
	s.mu.Unlock()
}

// hostTransport sends requests for site.test to the test server and
// everything else to the crawler's guarded transport.
type hostTransport struct {
	guarded http.RoundTripper
	direct  *http.Transport
	addr    string
}

func (h *hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "site.test" {
		return h.guarded.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.URL.Host = h.addr
	r2.Host = "site.test"
	return h.direct.RoundTrip(r2)
}

func (s *realSite) crawl(t *testing.T, e *env) {
	t.Helper()
	direct := &http.Transport{}
	t.Cleanup(direct.CloseIdleConnections)
	c, err := crawl.New(e.db, crawl.Options{
		Seeds:        []string{siteURL + "/", "http://10.9.9.9/"},
		Once:         true,
		Delay:        -1,
		Parallel:     4,
		Workers:      8,
		Timeout:      5 * time.Second,
		RetryBackoff: 5 * time.Millisecond,
		MaxRedirects: 3,
		NoSitemaps:   true,
		WrapTransport: func(guarded http.RoundTripper) http.RoundTripper {
			return &hostTransport{guarded: guarded, direct: direct, addr: s.srv.Listener.Addr().String()}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 60*time.Second)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// texts are the anchor texts of d, sorted.
func texts(d *observers.Doc) []string {
	var out []string
	if d != nil {
		for _, a := range d.Anchors {
			out = append(out, a.Text)
		}
	}
	slices.Sort(out)
	return out
}

// verifyIdle runs the chain until idle and compares it with the batch.
func verifyIdle(t *testing.T, e *env) *observers.Batch {
	t.Helper()
	e.idle()
	diffs, b, err := observers.Verify(bg, e.db, 0.002, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error("verify:", d)
	}
	return b
}

// Every fetch outcome reaches the chain: redirects, 404s, robots and
// refusals get the page state the batch gives them, redirect targets carry
// the anchors and the PageRank that flow through the redirects, and
// Verify passes after a first crawl and after pages changed what they
// answer (200 → 301, 404 → 200, 301 → 200).
func TestRealSiteVerify(t *testing.T) {
	s := newRealSite(t)
	e := newEnv(t)
	s.crawl(t, e)
	b := verifyIdle(t, e)

	states := map[string]string{
		"/":                    webtable.StateOK,
		"/moved":               webtable.StateRedirect,
		"/found":               webtable.StateRedirect,
		"/temp":                webtable.StateRedirect,
		"/perm":                webtable.StateRedirect,
		"/away":                webtable.StateRedirect,
		"/loop-a":              webtable.StateRedirect,
		"/loop-b":              webtable.StateRedirect,
		"/long0":               webtable.StateRedirect,
		"/missing":             webtable.StateGone,
		"/removed":             webtable.StateGone,
		"/broken":              webtable.StateGone,
		"/private/secret.html": webtable.StateGone,
		"/docs/dir/index.html": webtable.StateRedirect,
		"/docs/dir/":           webtable.StateOK,
		"/dup-redirect":        webtable.StateRedirect,
		"/flip1":               webtable.StateOK,
		"/flip2":               webtable.StateGone,
		"/flip3":               webtable.StateRedirect,
	}
	for p, want := range states {
		if got := e.get(siteURL+p, webtable.State); got != want {
			t.Errorf("%s: state %q, want %q", p, got, want)
		}
	}
	if got := e.get("http://10.9.9.9/", webtable.State); got != webtable.StateGone {
		t.Errorf("refused seed: state %q, want gone", got)
	}
	if got := e.get("http://10.9.9.9/", webtable.Error); !strings.HasPrefix(got, webtable.CauseRefused) {
		t.Errorf("refused seed: error %q, want %q...", got, webtable.CauseRefused)
	}
	if got := e.get(siteURL+"/private/secret.html", webtable.Error); !strings.HasPrefix(got, webtable.CauseRobots) {
		t.Errorf("disallowed page: error %q, want %q...", got, webtable.CauseRobots)
	}

	// The document page (/api/doc) says why a page is not indexed.
	for u, want := range map[string]string{
		"http://10.9.9.9/":               "refused",
		siteURL + "/private/secret.html": "disallowed",
		siteURL + "/missing":             webtable.StateGone,
		siteURL + "/docs/dir/index.html": webtable.StateRedirect,
		siteURL + "/long0":               webtable.StateRedirect,
	} {
		info, err := serving.LookupDoc(bg, e.db, nil, u)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != want {
			t.Errorf("%s: /api/doc status %q, want %q", u, info.Status, want)
		}
	}
	if info, err := serving.LookupDoc(bg, e.db, nil, siteURL+"/docs/dir/"); err != nil || len(info.Inlinks) != 3 {
		t.Errorf("/docs/dir/: inlinks %v (%v), want the 3 links to dir/ and dir/index.html", info.Inlinks, err)
	}

	idx := e.index()
	wantAnchors := map[string][]string{
		"/target.html": {"moved link", "target from docs"},
		"/t302.html":   {"flip three", "found link", "to the 302 target"},
		"/t307.html":   {"temp link"},
		"/t308.html":   {"perm link"},
		"/docs/dir/":   {"back to dir", "dir index link", "the dir index"},
	}
	for p, want := range wantAnchors {
		d := idx[siteURL+p]
		if d == nil {
			t.Errorf("%s: not in the index", p)
			continue
		}
		if got := texts(d); !slices.Equal(got, want) {
			t.Errorf("%s: anchors %q, want %q", p, got, want)
		}
	}
	// The redirect to a duplicate: its anchor reaches the cluster's one
	// document, whichever copy is canonical.
	var copies []*observers.Doc
	for _, p := range []string{"/copy1.html", "/copy2.html"} {
		if d := idx[siteURL+p]; d != nil {
			copies = append(copies, d)
		}
	}
	if len(copies) != 1 {
		t.Errorf("%d documents for the duplicate pair, want 1", len(copies))
	} else if got := texts(copies[0]); !slices.Contains(got, "dup link") || !slices.Contains(got, "first copy") {
		t.Errorf("duplicate pair anchors %q, want both links", got)
	}
	// PageRank flows through the redirect: the target has more than a page
	// nothing links to.
	if r := b.Rank[mustRow(siteURL+"/target.html")]; r < 0.3 {
		t.Errorf("target.html batch PageRank %.3f: nothing flowed through the redirect", r)
	}
	for _, p := range []string{"/missing", "/moved", "/private/secret.html"} {
		if idx[siteURL+p] != nil {
			t.Errorf("%s is in the index", p)
		}
	}

	// Round 2: the flips change what they answer.
	s.setRound(2)
	var flips []string
	for _, p := range []string{"/flip1", "/flip2", "/flip3"} {
		flips = append(flips, siteURL+p)
	}
	if n, err := crawl.Recrawl(bg, e.db, flips, time.Time{}); err != nil || n != 3 {
		t.Fatalf("Recrawl: %d, %v", n, err)
	}
	s.crawl(t, e)
	verifyIdle(t, e)
	for p, want := range map[string]string{"/flip1": webtable.StateRedirect, "/flip2": webtable.StateOK, "/flip3": webtable.StateOK} {
		if got := e.get(siteURL+p, webtable.State); got != want {
			t.Errorf("round 2: %s: state %q, want %q", p, got, want)
		}
	}
	idx = e.index()
	if idx[siteURL+"/flip1"] != nil {
		t.Error("round 2: /flip1 redirects but is still in the index")
	}
	for _, p := range []string{"/flip2", "/flip3"} {
		if idx[siteURL+p] == nil {
			t.Errorf("round 2: %s answers 200 but is not in the index", p)
		}
	}
	if got := texts(idx[siteURL+"/target.html"]); !slices.Contains(got, "flip one") || !slices.Contains(got, "flip two to target") {
		t.Errorf("round 2: target.html anchors %q, want the flip links too", got)
	}
	if got := texts(idx[siteURL+"/t302.html"]); slices.Contains(got, "flip three") {
		t.Errorf("round 2: t302.html anchors %q still hold /flip3's, which no longer redirects there", got)
	}
}
