// Package corpus gives tests and benchmarks the pages of the shared
// PostgreSQL manual corpus (../shared/corpora beside the repository),
// read straight from its archive.
package corpus

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Archive is the corpus file name under ../shared/corpora.
const Archive = "postgresql-15-docs.tar.gz"

// Page is one HTML page of the corpus.
type Page struct {
	Path string // relative to the manual's root, e.g. "sql-set.html"
	Body []byte
}

// Pages returns the HTML pages of the corpus sorted by path, or skips tb
// when the corpus is not beside the repository.
func Pages(tb testing.TB) []Page {
	tb.Helper()
	path, err := find()
	if err != nil {
		tb.Skipf("corpus: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var pages []Page
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".html") {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			tb.Fatal(err)
		}
		rel := h.Name
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			rel = rel[i+1:] // drop the archive's top directory
		}
		pages = append(pages, Page{Path: rel, Body: b})
	}
	if len(pages) == 0 {
		tb.Fatalf("corpus: no pages in %s", path)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].Path < pages[j].Path })
	return pages
}

// find locates the archive: ../shared/corpora beside the module root.
func find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "..", "shared", "corpora", Archive)
			if _, err := os.Stat(p); err != nil {
				return "", err
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Handler serves pages at their paths, "/" as index.html, with a
// robots.txt allowing everything; extra adds or overrides paths (fixtures).
func Handler(pages []Page, extra map[string]string) http.Handler {
	byPath := make(map[string][]byte, len(pages)+len(extra))
	for _, p := range pages {
		byPath["/"+p.Path] = p.Body
	}
	for p, body := range extra {
		byPath[p] = []byte(body)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if path == "/" {
			path = "/index.html"
		}
		if path == "/robots.txt" && byPath[path] == nil {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		body, ok := byPath[path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	})
}
