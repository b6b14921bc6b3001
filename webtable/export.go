package webtable

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Doc is the search document of a duplicate cluster, built from its
// canonical page by the export observer: what the export queue carries to
// serving.
type Doc struct {
	URL         string    `json:"url"`
	Host        string    `json:"host"`
	Title       string    `json:"title"`
	TitleCore   string    `json:"title_core,omitempty"`   // Title without its site's affix, "" when it has none
	Text        string    `json:"text"`                   // the page's own text, without boilerplate
	LinkDensity float64   `json:"link_density,omitempty"` // share of the page's visible text in links (0.00–1.00)
	Description string    `json:"description,omitempty"`
	Lang        string    `json:"lang,omitempty"`
	Kind        string    `json:"kind,omitempty"` // pdf | txt; "" for HTML
	PageRank    float64   `json:"pagerank"`
	FetchedAt   time.Time `json:"fetched_at"`
	ClusterSize int       `json:"cluster_size"`
	Duplicates  []string  `json:"duplicates,omitempty"` // the other members' URLs
	Similar     []string  `json:"similar,omitempty"`    // the near-copies folded under this document: their URLs (observers.NearBits)
	Anchors     []Anchor  `json:"anchors,omitempty"`    // inbound links to any member or alias
	Sections    []Section `json:"sections,omitempty"`   // the page's headings with a fragment, in page order
}

// Section is a heading of a page that a link can point to: URL#ID shows
// it. At is the byte offset in the page's Text where the section's
// heading begins (the section runs to the next one's At).
type Section struct {
	ID      string `json:"id"`
	Heading string `json:"heading"`
	At      int    `json:"at"`
}

// EncodeSections is the JSON of secs (the Sections column, the serving
// index's stored field); "" for none.
func EncodeSections(secs []Section) string {
	if len(secs) == 0 {
		return ""
	}
	b, err := json.Marshal(secs)
	if err != nil {
		return "" // strings and ints: cannot fail
	}
	return string(b)
}

// DecodeSections reads what EncodeSections wrote; an unreadable value is
// no sections.
func DecodeSections(v string) []Section {
	if v == "" {
		return nil
	}
	var secs []Section
	if json.Unmarshal([]byte(v), &secs) != nil {
		return nil
	}
	return secs
}

// Anchor is one inbound link's text.
type Anchor struct {
	From string `json:"from"` // URL of the linking page (the canonical of its cluster)
	Text string `json:"text"`
}

// CrossHostAnchors counts the document's inbound anchors from other hosts.
func (d *Doc) CrossHostAnchors() int {
	n := 0
	for _, a := range d.Anchors {
		if HostOf(a.From) != d.Host {
			n++
		}
	}
	return n
}

// Op is what an export queue entry does to the index.
type Op string

const (
	OpUpsert Op = "upsert" // add or replace the document
	OpDelete Op = "delete" // remove the document
)

// Export is one entry of the export queue (row ExportRow(Version, Row),
// column ExportDoc, as JSON), applied by serving in row order. Version is
// the start timestamp of the exporting transaction; two exports of one
// document conflict in the table, so a later version is always the newer
// document, and serving ignores anything older than what it has.
type Export struct {
	Op      Op     `json:"op"`
	Version uint64 `json:"version"`
	Row     string `json:"row"`
	URL     string `json:"url"`
	Doc     *Doc   `json:"doc,omitempty"` // nil for OpDelete
}

// ExportFrom is where the export queue's entries of version and later
// start.
func ExportFrom(version uint64) string {
	return fmt.Sprintf("%s%020d/", ExportPrefix, version)
}

// HostOf returns the host (with its port) of an http(s) URL.
func HostOf(u string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
