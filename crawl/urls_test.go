package crawl

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// Links are resolved as a browser resolves them, the server sees exactly
// the stored URL, and every stored URL is its own normal form: spaces are
// encoded, empty segments kept, escapes of unreserved characters one row
// with the characters.
func TestLinkForms(t *testing.T) {
	var mu sync.Mutex // guards seen
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.RequestURI]++
		mu.Unlock()
		if r.URL.Path == "/robots.txt" || r.URL.Path == "/sitemap.xml" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		if r.RequestURI != "/" {
			w.Write([]byte("<p>leaf</p>"))
			return
		}
		w.Write([]byte(`<a href="p.html? #x">1</a> <a href="p.html?">2</a> <a href="p.html?%20">3</a>
			<a href="a//b">4</a> <a href="a/x/../c">5</a> <a href="sp ace.html">6</a> <a href="é.html">7</a>
			<a href="\back\slash">8</a> <a href="%7Euser">9</a> <a href="~user">10</a> <a href="q?a b&c=d e">11</a>
			<a href="	/tab
			bed">12</a> <a href="100%.html">13</a>`))
	}))
	t.Cleanup(srv.Close)
	tb := openTable(t, "")
	tb.crawl(testOptions(srv.URL + "/"))

	want := []string{"/", "/p.html?%20", "/p.html?", "/a//b", "/a/c", "/sp%20ace.html", "/%C3%A9.html",
		"/back/slash", "/~user", "/q?a%20b&c=d%20e", "/tabbed", "/100%25.html"}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range want {
		if seen[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, seen[p])
		}
	}
	delete(seen, "/robots.txt")
	delete(seen, "/sitemap.xml")
	if len(seen) != len(want) {
		t.Errorf("requests %v, want %q", seen, want)
	}
	got := tb.pages()
	for _, u := range got {
		if n, err := webtable.Normalize(u); err != nil || n != u {
			t.Errorf("stored %q normalizes to %q, %v", u, n, err)
		}
	}
	var wantURLs []string
	for _, p := range want {
		wantURLs = append(wantURLs, srv.URL+p)
	}
	slices.Sort(got)
	slices.Sort(wantURLs)
	if !slices.Equal(got, wantURLs) {
		t.Errorf("pages:\n got %q\nwant %q", got, wantURLs)
	}
}

// A seed in a numeric IPv4 spelling is fetched at its dotted address.
func TestNumericHostSeed(t *testing.T) {
	s := newSite(t)
	s.page("/", "<p>home</p>")
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	tb := openTable(t, "")
	tb.crawl(testOptions("http://2130706433:" + port + "/"))
	if s.count("/") != 1 {
		t.Fatalf("server got %d requests for /", s.count("/"))
	}
	if got := tb.pages(); !slices.Equal(got, []string{"http://127.0.0.1:" + port + "/"}) {
		t.Errorf("pages %q", got)
	}
	if !strings.Contains(string(tb.get("http://0x7f.1:"+port+"/", webtable.Body)), "home") {
		t.Error("no body")
	}
}
