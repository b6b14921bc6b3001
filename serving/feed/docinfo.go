package feed

import (
	"encoding/json"
	"time"
)

// Inlink is an inbound link of a page.
type Inlink struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor"`
	Via    string `json:"via,omitempty"` // the URL linked to, when it redirects here
}

// Fetch is one fetch of a page, newest first in DocInfo.History.
type Fetch struct {
	Time    time.Time `json:"time"`
	Status  int       `json:"status"`
	Changed bool      `json:"changed"`
}

// Stages are the times a page's current content passed each stage of the
// pipeline; zero when it has not (yet).
type Stages struct {
	Fetched    time.Time `json:"fetched,omitzero"`
	Parsed     time.Time `json:"parsed,omitzero"`
	Clustered  time.Time `json:"clustered,omitzero"`
	Exported   time.Time `json:"exported,omitzero"`
	Searchable time.Time `json:"searchable,omitzero"`
}

// DocInfo is everything the table knows about a URL (the document page and
// GET /api/doc).
type DocInfo struct {
	URL         string    `json:"url"`
	Row         string    `json:"row"`
	Canonical   string    `json:"canonical"` // URL of the cluster's canonical; URL itself when it is the canonical
	ContentHash string    `json:"content_hash"`
	PageRank    float64   `json:"pagerank"`
	Status      string    `json:"status"`      // page state: ok, redirect, gone, noindex, unparsed; refused (private address) or disallowed (robots.txt) for pages not fetched on purpose; fetched (not parsed yet) or unfetched
	HTTPStatus  int       `json:"http_status"` // last HTTP status, 0 if none
	FetchedAt   time.Time `json:"fetched_at,omitzero"`
	Title       string    `json:"title"`
	Text        string    `json:"text"` // the indexed text: the "cached copy"
	RedirectTo  string    `json:"redirect_to,omitempty"`
	Error       string    `json:"error,omitempty"` // why the last fetch failed
	Outlinks    []string  `json:"outlinks"`
	Inlinks     []Inlink  `json:"inlinks"`
	Duplicates  []string  `json:"duplicates"`             // the other members of its cluster
	Similar     []string  `json:"similar"`                // the near-copies folded under it (observers.NearCopies)
	NearCopyOf  string    `json:"near_copy_of,omitempty"` // the page it is folded under, a near-copy of it with a document
	Exported    bool      `json:"exported"`               // its document is in the export set (it is an indexed canonical)
	ExportedAt  time.Time `json:"exported_at,omitzero"`
	Indexed     bool      `json:"indexed"` // the serving index has it now
	Stages      Stages    `json:"stages"`
	History     []Fetch   `json:"history"`
	NextFetch   time.Time `json:"next_fetch,omitzero"`
}

// MarshalJSON always writes fetched_at, as null for a page never fetched.
func (d DocInfo) MarshalJSON() ([]byte, error) {
	type plain DocInfo
	var fetched *time.Time
	if !d.FetchedAt.IsZero() {
		fetched = &d.FetchedAt
	}
	return json.Marshal(struct {
		plain
		FetchedAt *time.Time `json:"fetched_at"`
	}{plain(d), fetched})
}
