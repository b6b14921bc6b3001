package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crawler -warc-out archives a crawl; crawler import loads it into another
// table, again without change, and says where a cut or foreign file stops.
func TestImport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<title>home</title><a href="/a">a</a> <a href="/b">b</a> <a href="/old">old</a>`)
		case "/a", "/b":
			fmt.Fprintf(w, "<title>%s</title><p>leaf %s", r.URL.Path, strings.Repeat("text ", 2000))
		case "/old":
			http.Redirect(w, r, "/a", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	warcs := t.TempDir()
	var out bytes.Buffer
	if code := run([]string{"-data", t.TempDir(), "-seeds", srv.URL + "/", "-once", "-allow-private", "-delay", "0", "-no-sitemaps", "-warc-out", warcs}, &out); code != 0 {
		t.Fatalf("crawl: %d\n%s", code, &out)
	}
	// Four fetches and the host's robots.txt, a request and a response each.
	if !strings.Contains(out.String(), "10 WARC records written to "+warcs+", 0 fetches not archived") {
		t.Errorf("crawl output:\n%s\nwant the WARC records counted", &out)
	}
	files, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("WARC files %q, want one", files)
	}
	whole, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.warc.gz")
	os.WriteFile(cut, whole[:len(whole)*2/3], 0o644)
	garbage := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(garbage, []byte("these are not the records you are looking for\n"), 0o644)

	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"help", []string{"import", "-h"}, 0, []string{"usage: crawler import"}},
		{"no files", []string{"import", "-data", dir}, 2, []string{"usage"}},
		{"cut", []string{"import", "-data", dir, cut}, 1, []string{"cut.warc.gz: stopped at byte", "(record ", "loaded"}},
		{"whole", []string{"import", "-data", dir, files[0]}, 0, []string{"11 records read", "5 request record", "1 robots.txt", "1 warcinfo record", "0 malformed"}},
		{"again", []string{"import", "-data", dir, files[0]}, 0, []string{"11 records read, 0 loaded", "4 the table has this fetch or a later one"}},
		{"garbage and a good file", []string{"import", "-data", dir, garbage, files[0]}, 1, []string{"notes.txt: stopped at byte 0 (record 1): crawl: not a WARC file", "11 records read"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code := run(tc.args, &out)
			for _, want := range tc.out {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q", want)
				}
			}
			if code != tc.code || t.Failed() {
				t.Errorf("run(%q) = %d, output:\n%s\nwant %d", tc.args, code, out.String(), tc.code)
			}
		})
	}
}
