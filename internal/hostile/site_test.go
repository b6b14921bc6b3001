package hostile

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
