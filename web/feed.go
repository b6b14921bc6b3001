package web

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/caffeine-go/caffeine/serving"
)

// Atom feeds (RFC 4287) of a query's newest matching pages:
// /api/search?q=…&format=atom. A feed reader polling it sees a page
// moments after the index has it.
const (
	atomType = "application/atom+xml"
	feedN    = 20 // entries of a feed that asks for no n
)

type atomFeed struct {
	XMLName   xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	ID        string      `xml:"id"`
	Title     string      `xml:"title"`
	Subtitle  string      `xml:"subtitle"`
	Updated   string      `xml:"updated"`
	Author    atomPerson  `xml:"author"`
	Generator string      `xml:"generator"`
	Links     []atomLink  `xml:"link"`
	Entries   []atomEntry `xml:"entry"`
}

type atomPerson struct {
	Name string `xml:"name"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomEntry struct {
	ID      string     `xml:"id"`
	Title   string     `xml:"title"`
	Updated string     `xml:"updated"`
	Links   []atomLink `xml:"link"`
	Summary string     `xml:"summary,omitempty"`
}

// format reads the format parameter of /api/search: json (the default) or
// atom.
func format(r *http.Request) (string, error) {
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
		return "json", nil
	case "atom":
		return "atom", nil
	default:
		return "", badRequest("format must be json or atom, not %q", clip(f, 20))
	}
}

// feedHref links to the Atom feed of q, a path of this server.
func feedHref(q string) string {
	return "/api/search?" + url.Values{"q": {q}, "format": {"atom"}}.Encode()
}

// apiFeed answers /api/search?format=atom: the pages matching q, newest
// fetched first (serving.Query.Newest), as an Atom feed. Its id and links
// are absolute URLs on the request's own origin; every text is escaped
// by encoding/xml, which also replaces the characters XML cannot hold.
func (s *Server) apiFeed(w http.ResponseWriter, r *http.Request, q serving.Query) error {
	base, err := origin(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("n") == "" {
		q.N = feedN
	}
	q.Newest = true
	res, _, err := s.search(r, q)
	if err != nil {
		return err
	}
	self := url.Values{"q": {q.Q}, "format": {"atom"}}
	if r.URL.Query().Get("n") != "" {
		self.Set("n", strconv.Itoa(q.N))
	}
	if q.Start > 0 {
		self.Set("start", strconv.Itoa(q.Start))
	}
	selfURL := base + "/api/search?" + self.Encode()
	f := atomFeed{
		ID:        selfURL,
		Title:     "caffeine: " + q.Q,
		Subtitle:  "The newest pages matching " + q.Q,
		Author:    atomPerson{Name: "caffeine"},
		Generator: "caffeine",
		Links: []atomLink{
			{Rel: "self", Type: atomType, Href: selfURL},
			{Rel: "alternate", Type: "text/html", Href: base + searchHref(serving.Query{Q: q.Q}, 0, defaultN)},
		},
		Entries: make([]atomEntry, 0, len(res.Results)),
	}
	var newest time.Time
	for _, hit := range res.Results {
		t := hit.FetchedAt
		if t.IsZero() {
			t = hit.IndexedAt
		}
		if t.After(newest) {
			newest = t
		}
		e := atomEntry{ID: hit.URL, Title: hit.Title, Summary: snippetText(hit.Snippet)}
		if e.Title == "" {
			e.Title = hit.URL
		}
		if href := safeHref(hit.URL); href != "" {
			e.Links = []atomLink{{Rel: "alternate", Href: href}}
		}
		if !t.IsZero() {
			e.Updated = atomTime(t)
		}
		f.Entries = append(f.Entries, e)
	}
	if newest.IsZero() {
		newest = s.opt.Now()
	}
	f.Updated = atomTime(newest)
	for i := range f.Entries {
		if f.Entries[i].Updated == "" {
			f.Entries[i].Updated = f.Updated
		}
	}
	return writeXML(w, atomType, "no-cache", f)
}

// atomTime is an Atom date: RFC 3339 in UTC.
func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
