package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/style.css
var styleCSS []byte

// styleETag identifies the embedded stylesheet.
var styleETag = func() string {
	h := sha256.Sum256(styleCSS)
	return `"` + hex.EncodeToString(h[:8]) + `"`
}()

// pages are the parsed templates, each with the layout, by file name.
type pages map[string]*template.Template

var pageNames = []string{"search.html", "doc.html", "top.html", "status.html", "error.html"}

// parsePages parses the embedded templates. They are part of the binary, so
// a parse error is a programming error.
func parsePages(funcs template.FuncMap) pages {
	p := pages{}
	for _, name := range pageNames {
		p[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name))
	}
	return p
}

// funcs are the template functions; ago reads the server's clock.
func (s *Server) funcs() template.FuncMap {
	return template.FuncMap{
		"ago":       func(t time.Time) string { return ago(s.opt.Now(), t) },
		"timestamp": timestamp,
		"duration":  duration,
		"seconds":   seconds,
		"number":    number,
		"count":     countAny,
		"inc":       func(i int) int { return i + 1 },
		"add":       func(a, b float64) float64 { return a + b },
		"sub":       func(a, b float64) float64 { return a - b },
		"plural":    plural,
		"upper":     strings.ToUpper,
		"href":      safeHref,
		"docHref":   docHref,
		"topHref":   topHref,
		"clip":      clip,
		"showURL":   webtable.DisplayURL,
		"urlHTML":   urlHTML,
		"showHost":  webtable.DisplayHost,
	}
}

// page is what the layout needs; every page's data embeds it.
type page struct {
	Title   string // of the document; " – caffeine" is appended
	Nav     string // the active navigation entry: search, top, status
	Q       string // the query in the header's box
	Refresh int    // seconds between reloads, 0 for none
	Feed    string // the Atom feed of the page's query, "" for none
}

// render executes a page template into a buffer, then writes it: a template
// error is a clean 500, never half a page.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}

// errorPage is the data of error.html.
type errorPage struct {
	page
	Status  int
	Heading string
	Message string
}

// renderError writes e as a page. For the search page the box keeps the
// query, so a syntax error can be corrected in place.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, e *httpError) {
	d := errorPage{
		page:    page{Title: http.StatusText(e.status), Nav: navOf(r.URL.Path)},
		Status:  e.status,
		Heading: http.StatusText(e.status),
		Message: e.msg,
	}
	switch r.URL.Path {
	case "/", "/search":
		d.Q = r.URL.Query().Get("q")
		if e.status == http.StatusBadRequest {
			d.Heading = "That query could not be understood"
		}
	}
	switch e.status {
	case http.StatusNotFound:
		d.Heading = "Not found"
	case http.StatusGatewayTimeout:
		d.Heading = "That took too long"
	}
	if err := s.render(w, e.status, "error.html", d); err != nil {
		s.opt.Logger.Error("web: rendering the error page", "err", err)
		http.Error(w, e.msg, e.status)
	}
}

func navOf(path string) string {
	switch path {
	case "/top":
		return "top"
	case "/status":
		return "status"
	}
	return "search"
}

func serveStyle(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("ETag", styleETag)
	h.Set("Cache-Control", "public, max-age=3600")
	if r.Header.Get("If-None-Match") == styleETag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "text/css; charset=utf-8")
	w.Write(styleCSS)
	return nil
}
