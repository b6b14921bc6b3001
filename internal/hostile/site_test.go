package hostile

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Every page the root links to is served, at least Size bytes long for
// the large ones, the same bytes each time; unknown paths are 404s.
func TestSite(t *testing.T) {
	s := Site{Pages: 2, Size: 64 << 10}
	srv := httptest.NewServer(s)
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	_, root := get("/")
	for _, k := range Kinds {
		for _, n := range []string{"0", "1"} {
			path := "/" + k + "/" + n
			if !strings.Contains(root, `href="`+path+`"`) {
				t.Errorf("the root does not link to %s", path)
			}
			code, body := get(path)
			if code != 200 || len(body) < s.Size {
				t.Errorf("%s: status %d, %d bytes; want 200 and %d at least", path, code, len(body), s.Size)
			}
			if _, again := get(path); again != body {
				t.Errorf("%s: another body the second time", path)
			}
		}
	}
	if code, body := get("/small/5"); code != 200 || !strings.Contains(body, "Small page 5") {
		t.Errorf("/small/5: status %d, %q", code, body)
	}
	for _, p := range []string{"/text/2", "/small/2000", "/other/0", "/text/x", "/robots.txt"} {
		if code, _ := get(p); code != 404 {
			t.Errorf("%s: status %d, want 404", p, code)
		}
	}
}

// A client that goes away mid-body ends the handler: nothing writes on.
func TestSiteStopsWhenTheClientGoes(t *testing.T) {
	s := Site{Pages: 1, Size: 1 << 30}
	done := make(chan string, len(Kinds))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		done <- r.URL.Path
	}))
	defer srv.Close()
	for _, k := range Kinds {
		resp, err := http.Get(srv.URL + "/" + k + "/0")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 1<<10)); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("/%s/0 still writing 10 s after its client went away", k)
		}
	}
}
