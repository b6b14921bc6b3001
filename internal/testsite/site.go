// Package testsite serves, for tests, a small site with what real sites
// have and fixtures tend to lack.
package testsite

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Site is a web server with what real sites have and fixtures tend to
// lack: every kind of redirect, in scope and out, loops and long chains,
// 404 and 410, a 500, a robots.txt that disallows a page, a plain
// http.FileServer (which redirects dir/index.html to dir/), a redirect to
// a duplicate, and pages that change what they answer between crawls.
// Its home page also links to http://10.9.9.9/, a private address the
// crawler must refuse.
type Site struct {
	*httptest.Server

	mu    sync.Mutex
	round int // 1: the first crawl; 2: the flips answer differently
}

// New starts the site; it stops when the test ends.
func New(t testing.TB) *Site {
	t.Helper()
	s := &Site{round: 1}
	docs := t.TempDir()
	for name, body := range map[string]string{
		"index.html":     Page("Docs home", "the documentation starts here", "dir/index.html", "the dir index", "a.html", "page a"),
		"a.html":         Page("Page A", "alpha page of the docs", "dir/index.html", "back to dir", "../target.html", "target from docs"),
		"dir/index.html": Page("Dir", "the directory index page lists things", "../a.html", "to a"),
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
	html("/", Page("Home", "welcome to the test site",
		"/moved", "moved link", "/found", "found link", "/temp", "temp link", "/perm", "perm link",
		"/away", "away link", "/loop-a", "loop link", "/long0", "long link",
		"/missing", "missing link", "/removed", "removed link", "/broken", "broken link",
		"/private/secret.html", "secret link", "http://10.9.9.9/", "private link",
		"/docs/", "docs link", "/docs/dir/index.html", "dir index link",
		"/copy1.html", "first copy", "/dup-redirect", "dup link",
		"/flip1", "flip one", "/flip2", "flip two", "/flip3", "flip three"))
	html("/target.html", Page("Target", "the page moved here", "/", "home"))
	html("/t302.html", Page("Found target", "found by a 302", "/", "home"))
	html("/t307.html", Page("Temp target", "reached by a 307"))
	html("/t308.html", Page("Perm target", "reached by a 308", "/t302.html", "to the 302 target"))
	html("/copy1.html", Page("Copy", "identical duplicated wombat content"))
	html("/copy2.html", Page("Copy", "identical duplicated wombat content"))
	html("/private/secret.html", Page("Secret", "robots keep this out"))
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
	flip("/flip1", serve(Page("Flip one", "first flip content")), to("/target.html", http.StatusMovedPermanently))
	flip("/flip2", http.NotFound, serve(Page("Flip two", "second flip is back", "/target.html", "flip two to target")))
	flip("/flip3", to("/t302.html", http.StatusMovedPermanently), serve(Page("Flip three", "third flip stands alone")))
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// SetRound makes the flips answer as in round n: 1 as first crawled, 2
// changed (/flip1 200 → 301, /flip2 404 → 200, /flip3 301 → 200).
func (s *Site) SetRound(n int) {
	s.mu.Lock()
	s.round = n
	s.mu.Unlock()
}

// Page is an HTML page with a title, a paragraph and links given as
// href, anchor pairs.
func Page(title, text string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><p>%s</p>", title, text)
	for i := 0; i+1 < len(links); i += 2 {
		fmt.Fprintf(&b, `<a href="%s">%s</a>`, links[i], links[i+1])
	}
	b.WriteString("</body></html>")
	return b.String()
}
