package web

import (
	"encoding/xml"
	"net/http"
	"strings"
)

// OpenSearch description (https://github.com/dewitt/opensearch): browsers
// read it, from the <link rel="search"> of every page, to add the engine.
const (
	openSearchPath = "/opensearch.xml"
	openSearchType = "application/opensearchdescription+xml"
)

type openSearchDescription struct {
	XMLName       xml.Name        `xml:"http://a9.com/-/spec/opensearch/1.1/ OpenSearchDescription"`
	ShortName     string          `xml:"ShortName"`   // at most 16 characters
	Description   string          `xml:"Description"` // at most 1024
	InputEncoding string          `xml:"InputEncoding"`
	URLs          []openSearchURL `xml:"Url"`
}

type openSearchURL struct {
	Type     string `xml:"type,attr"`
	Rel      string `xml:"rel,attr,omitempty"`
	Method   string `xml:"method,attr,omitempty"`
	Template string `xml:"template,attr"`
}

// openSearch serves the description. Its URL templates are absolute, on
// the scheme and host the request reached (see origin); encoding/xml
// escapes them.
func (s *Server) openSearch(w http.ResponseWriter, r *http.Request) error {
	base, err := origin(r)
	if err != nil {
		return err
	}
	d := openSearchDescription{
		ShortName:     "caffeine",
		Description:   "Search the pages crawled by caffeine at " + base,
		InputEncoding: "UTF-8",
		URLs: []openSearchURL{
			{Type: "text/html", Method: "get", Template: base + "/search?q={searchTerms}"},
			{Type: atomType, Method: "get", Template: base + "/api/search?q={searchTerms}&format=atom"},
			{Type: "application/json", Method: "get", Template: base + "/api/search?q={searchTerms}"},
			{Type: openSearchType, Rel: "self", Template: base + openSearchPath},
		},
	}
	return writeXML(w, openSearchType, "public, max-age=3600", d)
}

// origin is the scheme and host of the request ("http://127.0.0.1:8080"),
// for the absolute URLs of feeds and the OpenSearch description. The
// scheme is https under TLS or when a proxy says so in
// X-Forwarded-Proto; a Host header that is not a host name and port is a
// bad request.
func origin(r *http.Request) (string, error) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	if !validHost(r.Host) {
		return "", badRequest("the Host header %q is not a host name", clip(r.Host, 100))
	}
	return scheme + "://" + strings.ToLower(r.Host), nil
}

// validHost: a DNS name or IP address (IPv6 in brackets), with an optional
// port. Nothing that could end the authority or the URL.
func validHost(h string) bool {
	if h == "" || len(h) > maxHostLen+8 {
		return false
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '-', c == '_', c == ':', c == '[', c == ']':
		default:
			return false
		}
	}
	return true
}

// writeXML writes v as an XML document of type typ. Marshalling happens
// before the header is written, so a failure is still a clean 500.
func writeXML(w http.ResponseWriter, typ, cache string, v any) error {
	b, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", typ+"; charset=utf-8")
	h.Set("Cache-Control", cache)
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(xml.Header))
	w.Write(append(b, '\n'))
	return nil
}
