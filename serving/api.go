package serving

import (
	"errors"
	"time"
)

// Errors of the serving API. Handlers map them to HTTP statuses.
var (
	ErrBadQuery = errors.New("serving: bad query") // wrapped with the reason; HTTP 400
	ErrNotFound = errors.New("serving: not found") // HTTP 404
)

// Limits on queries.
const (
	MaxQueryLen = 512 // bytes of the query string
	MaxResults  = 100 // results per page
	MaxStart    = 10_000
)

// Query is one search request.
type Query struct {
	Q     string // the query, Bleve query-string syntax
	N     int    // results wanted, 1..MaxResults (0 means 10)
	Start int    // offset of the first result
	// Langs are the searcher's languages, best first (language tags, as
	// a browser's Accept-Language names them): ranked searches put pages
	// in them first, unless the query itself is clearly in another
	// language (see searchLangs).
	Langs []string
	// Verbatim searches the query as written: a misspelled word is
	// suggested (Results.Suggestion) but never corrected automatically.
	Verbatim bool
	// Newest orders the matching pages by the time their indexed copy
	// was fetched, newest first, instead of ranking them: what a feed
	// of the query shows. The query runs as written (no correction,
	// no relaxing); a page without a fetch time comes last.
	Newest bool
}

// Span is a piece of a snippet; Mark spans matched the query. Text is raw
// page text: the renderer escapes it (escape first, then mark).
type Span struct {
	Text string `json:"text"`
	Mark bool   `json:"mark,omitempty"`
}

// Result is one hit.
type Result struct {
	URL         string    `json:"url"`
	Title       string    `json:"title"`
	Snippet     []Span    `json:"-"`
	Score       float64   `json:"score"`
	PageRank    float64   `json:"pagerank"`
	FetchedAt   time.Time `json:"fetched_at"`
	IndexedAt   time.Time `json:"indexed_at"`
	Duplicates  []string  `json:"duplicates"` // the other URLs of the page's duplicate cluster
	Similar     []string  `json:"similar"`    // the near-copies folded under the page (webtable.Doc.Similar)
	Anchors     []string  `json:"anchors"`    // top inbound anchor texts
	ClusterSize int       `json:"cluster_size"`
	FileType    string    `json:"filetype,omitempty"` // html, pdf or txt; "" from an index built before the field
	Lang        string    `json:"lang,omitempty"`     // the page's language, a primary subtag ("en", "fr"); "" when unknown
	// Section is the fragment of the part of the page that answers the
	// query (URL#Section), SectionHeading its heading; "" when the page
	// as a whole does.
	Section        string `json:"section,omitempty"`
	SectionHeading string `json:"section_heading,omitempty"`
}

// Results is a page of hits.
type Results struct {
	Total   uint64        // all matching documents
	Took    time.Duration // time spent searching
	Results []Result
	// Relaxed is true when few documents (fewer than relaxBelow) or none
	// have all the query's words: the results are the documents with
	// most of them, those with all of them first unless one with fewer
	// matches clearly better. AllWords counts the documents with all
	// the words.
	Relaxed  bool
	AllWords uint64
	// Suggestion is the query with a misspelled word corrected from the
	// index's own terms ("vacuum" for "vacum"), or "".
	Suggestion string
	// Corrected is true when the results are those of Suggestion, not
	// of the query as written: it found clearly more pages (see
	// Search). Query.Verbatim turns this off.
	Corrected bool
	// Partial is true when the search stopped scoring at its time budget
	// (see budget.go): the results are the best of the hits it scored,
	// and Total counts only those, a lower bound.
	Partial bool
	// TotalEstimated is true when Total is an estimate: a query of
	// several words whose matches may number estimateFrom (10,000) or
	// more stops counting them once no page left uncounted can enter the
	// results (see topk_words.go). The estimate is never below the pages
	// counted nor above the postings of the query's rarest word
	// (relaxed: of all its words).
	TotalEstimated bool
}

// TopPage is a page in the top lists.
type TopPage struct {
	URL      string  `json:"url"`
	Title    string  `json:"title"`
	PageRank float64 `json:"pagerank"`
	Inbound  int     `json:"inbound"` // inbound anchors from other hosts
	// InboundHost counts inbound anchors from the page's own host (0 in
	// an index built before the field, until search -rebuild).
	InboundHost int `json:"inbound_host"`
}

// HostCount is a host with its number of indexed pages.
type HostCount struct {
	Host  string `json:"host"`
	Pages int    `json:"pages"`
}

// Top is the top pages view (/top): by PageRank overall, or for one host.
type Top struct {
	Host  string      `json:"host,omitempty"` // the host asked for, or "" for all
	Pages []TopPage   `json:"pages"`
	Hosts []HostCount `json:"hosts"` // hosts by indexed pages, most first
}

// Latency summarizes crawl→searchable latencies in seconds.
type Latency struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_s"`
	P90   float64 `json:"p90_s"`
	P99   float64 `json:"p99_s"`
}
