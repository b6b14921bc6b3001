package serving

import (
	"encoding/json"
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
	Anchors     []string  `json:"anchors"`    // top inbound anchor texts
	ClusterSize int       `json:"cluster_size"`
	FileType    string    `json:"filetype,omitempty"` // html, pdf or txt; "" from an index built before the field
	Lang        string    `json:"lang,omitempty"`     // the page's language, a primary subtag ("en", "fr"); "" when unknown
}

// Results is a page of hits.
type Results struct {
	Total   uint64        // all matching documents
	Took    time.Duration // time spent searching
	Results []Result
	// Relaxed is true when no document has all the query's words: the
	// results are the documents with most of them.
	Relaxed bool
	// Suggestion is the query with a misspelled word corrected from the
	// index's own terms ("vacuum" for "vacum"), or "".
	Suggestion string
}

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
	Duplicates  []string  `json:"duplicates"` // the other members of its cluster
	Exported    bool      `json:"exported"`   // its document is in the export set (it is an indexed canonical)
	ExportedAt  time.Time `json:"exported_at,omitzero"`
	Indexed     bool      `json:"indexed"` // the serving index has it now
	Stages      Stages    `json:"stages"`
	History     []Fetch   `json:"history"`
	NextFetch   time.Time `json:"next_fetch,omitzero"`
}

// TopPage is a page in the top lists.
type TopPage struct {
	URL      string  `json:"url"`
	Title    string  `json:"title"`
	PageRank float64 `json:"pagerank"`
	Inbound  int     `json:"inbound"` // inbound anchors from other hosts
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

// ObserverCount is one observer's progress.
type ObserverCount struct {
	Name      string  `json:"name"`
	Column    string  `json:"column"`
	Pending   int     `json:"pending"`
	Failed    int     `json:"failed"`
	Runs      int64   `json:"runs"`
	Commits   int64   `json:"commits"`
	Conflicts int64   `json:"conflicts"`
	RunTimeS  float64 `json:"run_time_s"`
}

// Stats is the status of a deployment (GET /api/stats).
type Stats struct {
	Pages                int  `json:"pages"`    // page rows fetched at least once
	Indexed              int  `json:"indexed"`  // documents in the serving index
	Frontier             int  `json:"frontier"` // URLs waiting in the frontier (due now or later)
	Due                  int  `json:"due"`      // of them, due now
	PendingNotifications int  `json:"pending_notifications"`
	FailedNotifications  int  `json:"failed_notifications"`
	ExportQueue          int  `json:"export_queue"` // export entries not yet applied
	Idle                 bool `json:"idle"`         // nothing due, nothing pending, export queue drained
	Crawling             bool `json:"crawling"`     // a crawler runs in this process
	// BulkCrawl: this process crawls before it indexes (search -bulk) and
	// its first crawl goes on; its chain and feeder start once it is over.
	BulkCrawl bool `json:"bulk_crawl,omitempty"`
	// BulkStage: the first crawl is over and its pages go through the
	// chain in stages (percolator.WorkerOptions.Stages); this is the
	// stage being drained, "N/M: observer, observer".
	BulkStage string          `json:"bulk_stage,omitempty"`
	Observers []ObserverCount `json:"observers"`
	Latency   Latency         `json:"latency"` // crawl→searchable over the recent window
	Time      time.Time       `json:"time"`

	// IndexName is the serving index's name (search -index-name). Feeder
	// says whether this process applies the export queue to it:
	// "feeding", "standby" (another process holds the index's feeder
	// lease; FeederHolder says who: "HOST PID"), "stopped", or "none" (no
	// feeder). IndexState is the index's registry state as the feeder
	// last saw it: "live", "backfilling" (registered lately: exports from
	// before may be missing until the feeder backfills them from the
	// table), or "" (not known yet, or no feeder).
	IndexName    string `json:"index_name"`
	Feeder       string `json:"feeder"`
	FeederHolder string `json:"feeder_holder,omitempty"`
	IndexState   string `json:"index_state,omitempty"`
}

// Sample is one point of the status page's time series.
type Sample struct {
	Time       time.Time `json:"time"`
	Pages      int       `json:"pages"`
	Indexed    int       `json:"indexed"`
	Fetched    float64   `json:"fetched_per_s"` // fetch rate over the last interval
	Exported   float64   `json:"indexed_per_s"` // index updates applied per second
	LatencyP50 float64   `json:"latency_p50_s"`
	LatencyP90 float64   `json:"latency_p90_s"`
	LatencyP99 float64   `json:"latency_p99_s"`
	Pending    int       `json:"pending_notifications"`
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
