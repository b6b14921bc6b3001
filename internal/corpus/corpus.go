// Package corpus holds a real site for tests, benchmarks and the demo:
// the PostgreSQL 15 manual (Debian's postgresql-doc-15, 1,169 pages,
// under the PostgreSQL licence in its legalnotice.html), embedded from
// its archive.
package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	_ "embed" // the archive
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

//go:embed postgresql-15-docs.tar.gz
var archive []byte

// Page is one HTML page of the corpus.
type Page struct {
	Path string // relative to the manual's root, e.g. "sql-set.html"
	Body []byte
}

// TB is the part of testing.TB that Pages uses.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Pages returns the HTML pages of the corpus sorted by path; it fails tb
// if the archive cannot be read.
func Pages(tb TB) []Page {
	tb.Helper()
	pages, err := Load()
	if err != nil {
		tb.Fatal(err)
	}
	return pages
}

var load = sync.OnceValues(func() ([]Page, error) { return Read(bytes.NewReader(archive)) })

// Load returns the HTML pages of the embedded manual sorted by path. The
// slice is shared: callers must not modify it.
func Load() ([]Page, error) { return load() }

// Read returns the HTML pages of a gzipped tar archive sorted by path,
// with the archive's top directory dropped from their paths.
func Read(r io.Reader) ([]Page, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var pages []Page
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".html") {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", h.Name, err)
		}
		rel := h.Name
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			rel = rel[i+1:] // drop the archive's top directory
		}
		pages = append(pages, Page{Path: rel, Body: b})
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("corpus: no HTML pages in the archive")
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].Path < pages[j].Path })
	return pages, nil
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
