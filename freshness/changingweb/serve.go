package changingweb

import (
	"bytes"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// vocabulary is what body text is drawn from: common words, none of them
// a stop word of Bleve's English analyzer, so any of them is a query that
// finds pages.
var vocabulary = strings.Fields(`
	apple river stone garden window silver market engine harbor forest
	letter candle bridge mirror signal pocket ladder thunder meadow castle
	planet violin basket anchor feather lantern island compass rocket
	orchard pepper carpet needle saddle kettle marble velvet copper canyon
	glacier desert prairie volcano lagoon tunnel tower station village
	harvest painter farmer sailor baker weaver singer dancer doctor pilot
	morning evening winter summer autumn spring season weather cloud storm
	yellow purple orange crimson golden scarlet indigo amber ivory emerald
	quick gentle silent bright narrow ancient modern hidden frozen wooden
	travel gather wander borrow listen whisper follow measure balance repair
	coffee bread honey cheese butter lemon cherry walnut almond ginger
	number record table column shadow pattern rhythm circle square triangle`)

// Vocabulary returns the words body text is drawn from, in a new slice:
// every one is a one-word query that finds pages (the search load of
// cmd/bulkbench -fixture asks them).
func Vocabulary() []string { return slices.Clone(vocabulary) }

// Content returns the HTML of page at version: the bytes served while the
// page is at that version. A duplicate's content is its original's.
func (w *Web) Content(page, version int) []byte {
	o := w.orig[page]
	rng := rand.New(rand.NewPCG(uint64(w.opt.Seed)^0x74657874, uint64(o)<<32|uint64(uint32(version))))
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>Page %d, revision %d</title>\n", o, version)
	fmt.Fprintf(&b, "<meta name=\"description\" content=\"Page %d of a changing web.\">\n</head>\n<body>\n", o)
	fmt.Fprintf(&b, "<h1>Page %d</h1>\n<p>Revision %d of page %d of the changing web.</p>\n<p>", o, version, o)
	for i := range w.opt.Words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	b.WriteString(".</p>\n<ul>\n")
	for _, t := range w.links[o] {
		fmt.Fprintf(&b, "<li><a href=\"%s\">page %d</a></li>\n", w.Path(t), t)
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	return b.Bytes()
}

// ETag returns the entity tag of page at version.
func (w *Web) ETag(page, version int) string {
	return fmt.Sprintf("\"%d-%d\"", w.orig[page], version)
}

// ServeHTTP serves the site described in the package documentation.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case "/", "/index.html":
		w.serveIndex(rw)
	case "/robots.txt":
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(rw, "User-agent: *\nAllow: /\n")
		if w.opt.Sitemap {
			fmt.Fprintf(rw, "Sitemap: http://%s/sitemap.xml\n", r.Host)
		}
	case "/sitemap.xml":
		if !w.opt.Sitemap {
			http.NotFound(rw, r)
			return
		}
		w.serveSitemap(rw, r)
	default:
		p, ok := w.Page(r.URL.Path)
		if !ok {
			http.NotFound(rw, r)
			return
		}
		w.servePage(rw, r, p)
	}
}

func (w *Web) servePage(rw http.ResponseWriter, r *http.Request, p int) {
	now := w.Now()
	v := w.VersionAt(p, now)
	w.requests.Add(1)
	w.fetches[p].Add(1)
	tag := w.ETag(p, v)
	h := rw.Header()
	h.Set("ETag", tag)
	h.Set("Last-Modified", w.LastModified(p, now).UTC().Format(http.TimeFormat))
	h.Set("Cache-Control", "no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, tag) {
		rw.WriteHeader(http.StatusNotModified)
		return
	}
	body := w.Content(p, v)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	rw.Write(body)
}

func etagMatch(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}

func (w *Web) serveIndex(rw http.ResponseWriter) {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>The changing web</title></head>\n<body>\n<h1>The changing web</h1>\n<ul>\n")
	for p := range w.opt.Pages {
		fmt.Fprintf(&b, "<li><a href=\"%s\">page %d</a></li>\n", w.Path(p), p)
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.Write(b.Bytes())
}

func (w *Web) serveSitemap(rw http.ResponseWriter, r *http.Request) {
	now := w.Now()
	base := "http://" + r.Host
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for p := range w.opt.Pages {
		last := w.start
		if cs := w.ChangesUntil(p, now); len(cs) > 0 {
			last = cs[len(cs)-1]
		}
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>%s</lastmod></url>\n",
			html.EscapeString(w.URL(base, p)), last.UTC().Format(time.RFC3339))
	}
	b.WriteString("</urlset>\n")
	rw.Header().Set("Content-Type", "application/xml")
	rw.Write(b.Bytes())
}
