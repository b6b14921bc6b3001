package webtable

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Doc is the search document of a duplicate cluster, built from its
// canonical page by the export observer: what the export queue carries to
// serving.
type Doc struct {
	URL         string  `json:"url"`
	Host        string  `json:"host"`
	Title       string  `json:"title"`
	TitleCore   string  `json:"title_core,omitempty"`   // Title without its site's affix, "" when it has none
	Text        string  `json:"text"`                   // the page's own text, without boilerplate
	LinkDensity float64 `json:"link_density,omitempty"` // share of the page's visible text in links (0.00–1.00)
	Description string  `json:"description,omitempty"`
	Lang        string  `json:"lang,omitempty"`
	// LangMismatch: the page declares a language its text clearly is not
	// (page:lang-mismatch), as an untranslated copy in another language's
	// part of a site does; such a page ranks a little lower.
	LangMismatch bool      `json:"lang_mismatch,omitempty"`
	Kind         string    `json:"kind,omitempty"` // pdf | txt; "" for HTML
	PageRank     float64   `json:"pagerank"`
	FetchedAt    time.Time `json:"fetched_at"`
	ClusterSize  int       `json:"cluster_size"`
	Duplicates   []string  `json:"duplicates,omitempty"` // the other members' URLs, in order, the first MaxDuplicates (ClusterSize counts them all)
	Similar      []string  `json:"similar,omitempty"`    // the near-copies folded under this document: their URLs (observers.NearBits)
	Anchors      []Anchor  `json:"anchors,omitempty"`    // inbound links to any member or alias, at most MaxAnchors (CutAnchors)
	// MoreAnchors is how many inbound links CutAnchors left out of
	// Anchors, MoreCrossHost how many of them are from other hosts.
	MoreAnchors   int       `json:"more_anchors,omitempty"`
	MoreCrossHost int       `json:"more_cross_host,omitempty"`
	Sections      []Section `json:"sections,omitempty"` // the page's headings with a fragment, in page order
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

// CrossHostAnchors counts the document's inbound anchors from other
// hosts, those CutAnchors left out included.
func (d *Doc) CrossHostAnchors() int {
	n := d.MoreCrossHost
	for _, a := range d.Anchors {
		if HostOf(a.From) != d.Host {
			n++
		}
	}
	return n
}

// AnchorCount counts the document's inbound anchors, those CutAnchors
// left out included.
func (d *Doc) AnchorCount() int { return len(d.Anchors) + d.MoreAnchors }

// MaxDuplicates is how many of its duplicates' URLs a document lists at
// most (Doc.Duplicates, in URL order): the same page on every URL of a
// site (a soft 404) would list them all in every export of the
// cluster's document. ClusterSize counts them all.
const MaxDuplicates = 100

// MaxAnchors is how many inbound anchors a document carries at most: a
// page that every page of a big site links to would carry a line a
// linker (some 16 MB at 200,000 linkers) in its export queue entries, in
// its row's export:last cell and in the index's anchors field, where
// past a few repeats a text weighs no more (BM25 saturates). A variable
// so that tests can make it small.
var MaxAnchors = 1000

// CutAnchors keeps at most max of d.Anchors, counting the rest in
// MoreAnchors and MoreCrossHost: every distinct text once before any
// twice, and so on, the texts most links have first (then in text
// order), each text's anchors in the order of d.Anchors. What it keeps is
// left in the order it was. The choice depends only on the anchors, so
// the export observer and the batch cut alike.
func (d *Doc) CutAnchors(max int) {
	if len(d.Anchors) <= max {
		return
	}
	byText := make(map[string][]int) // text → indexes in d.Anchors
	var texts []string
	for i, a := range d.Anchors {
		if _, ok := byText[a.Text]; !ok {
			texts = append(texts, a.Text)
		}
		byText[a.Text] = append(byText[a.Text], i)
	}
	slices.SortFunc(texts, func(a, b string) int {
		if c := cmp.Compare(len(byText[b]), len(byText[a])); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	keep := make([]bool, len(d.Anchors))
	for n, round := 0, 0; n < max; round++ {
		for _, t := range texts {
			if is := byText[t]; round < len(is) && n < max {
				keep[is[round]] = true
				n++
			}
		}
	}
	kept := d.Anchors[:0:0]
	for i, a := range d.Anchors {
		switch {
		case keep[i]:
			kept = append(kept, a)
		case HostOf(a.From) != d.Host:
			d.MoreAnchors++
			d.MoreCrossHost++
		default:
			d.MoreAnchors++
		}
	}
	d.Anchors = kept
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
