package crawl

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

func redirect(s *site, from, to string, code int) {
	s.mux.HandleFunc(from, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", to)
		w.WriteHeader(code)
	})
}

func TestRedirects(t *testing.T) {
	s := newSite(t)
	s.page("/", `<a href="/r1">chain</a> <a href="/loop-a">loop</a> <a href="/long0">long</a> <a href="/self">self</a> <a href="/out">out</a>`)
	redirect(s, "/r1", "/r2", http.StatusMovedPermanently)
	redirect(s, "/r2", "r3", http.StatusFound) // relative Location
	redirect(s, "/r3", s.URL+"/final", http.StatusTemporaryRedirect)
	s.page("/final", "final")
	redirect(s, "/loop-a", "/loop-b", http.StatusFound)
	redirect(s, "/loop-b", "/loop-a", http.StatusFound)
	redirect(s, "/self", "/self", http.StatusFound)
	redirect(s, "/out", "http://elsewhere.example.com/", http.StatusFound)
	for i := range 10 {
		redirect(s, fmt.Sprintf("/long%d", i), fmt.Sprintf("/long%d", i+1), http.StatusFound)
	}

	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.MaxRedirects = 3
	tb.crawl(opt)

	for from, to := range map[string]string{"/r1": "/r2", "/r2": "/r3", "/r3": "/final", "/loop-a": "/loop-b", "/loop-b": "/loop-a", "/self": "/self"} {
		if got := string(tb.get(s.URL+from, webtable.Redirect)); got != s.URL+to {
			t.Errorf("%s redirect = %q, want %q", from, got, s.URL+to)
		}
		if st := string(tb.get(s.URL+from, webtable.Status))[0]; st != '3' {
			t.Errorf("%s status %c..", from, st)
		}
		if tb.get(s.URL+from, webtable.Body) != nil {
			t.Errorf("%s has a body", from)
		}
	}
	if got := string(tb.get(s.URL+"/final", webtable.Body)); got != "final" {
		t.Errorf("final body %q", got)
	}
	if h := string(tb.get(s.URL+"/final", webtable.Hops)); h != "3" {
		t.Errorf("final hops %q, want 3", h)
	}
	for _, p := range []string{"/r1", "/r2", "/r3", "/final", "/loop-a", "/loop-b", "/self"} {
		if n := s.count(p); n != 1 {
			t.Errorf("%s fetched %d times", p, n)
		}
	}
	if e := string(tb.get(s.URL+"/loop-b", webtable.Error)); !strings.Contains(e, "loop") {
		t.Errorf("loop-b error %q", e)
	}
	if e := string(tb.get(s.URL+"/self", webtable.Error)); !strings.Contains(e, "loop") {
		t.Errorf("self error %q", e)
	}
	// /long0 is a link (0 hops); /long1..3 are 1..3 hops; /long3 → /long4
	// would be a 4th hop.
	for i := range 4 {
		if n := s.count(fmt.Sprintf("/long%d", i)); n != 1 {
			t.Errorf("/long%d fetched %d times", i, n)
		}
	}
	if n := s.count("/long4"); n != 0 {
		t.Errorf("/long4 fetched past the hop limit")
	}
	if e := string(tb.get(s.URL+"/long3", webtable.Error)); !strings.Contains(e, "too many redirects") {
		t.Errorf("long3 error %q", e)
	}
	if tb.get("http://elsewhere.example.com/", webtable.Depth) != nil {
		t.Error("out-of-scope redirect target added to the frontier")
	}
}
