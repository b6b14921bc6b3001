package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a> <a href="/b">b</a>`)
		case "/a", "/b":
			fmt.Fprint(w, "leaf")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"help", []string{"-h"}, 0, "usage"},
		{"no data", []string{"-seeds", srv.URL}, 2, "usage"},
		{"bad scope", []string{"-data", t.TempDir(), "-seeds", srv.URL, "-scope", "planet"}, 2, "scope"},
		{"crawl", []string{"-data", dir, "-seeds", srv.URL + "/", "-once", "-allow-private", "-delay", "0"}, 0, "3 pages (0 errors"},
		{"resume: nothing due", []string{"-data", dir, "-once", "-allow-private"}, 0, "0 pages"},
		{"private refused", []string{"-data", t.TempDir(), "-seeds", srv.URL + "/", "-once"}, 0, "1 pages (1 errors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(tc.args, &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
				t.Errorf("run(%q) = %d, output:\n%s\nwant %d and %q", tc.args, code, out.String(), tc.code, tc.out)
			}
		})
	}
}
