package webtable

// Columns of a page row written by the crawler's loader transaction, one
// transaction per fetch. Writing (or deleting) Body notifies the parse
// observer; a fetch that did not change the page (304, same bytes) leaves
// Body alone and notifies nothing.
const (
	Body      = "fetch:body"      // raw response body (possibly truncated); deleted for non-2xx responses
	Status    = "fetch:status"    // HTTP status code, decimal; "0" when the fetch failed without one
	Type      = "fetch:type"      // Content-Type as sent
	FetchedAt = "fetch:time"      // fetch time, Unix milliseconds, decimal
	Headers   = "fetch:headers"   // selected response headers as a JSON object
	Redirect  = "fetch:redirect"  // normalized redirect target for 3xx; deleted otherwise
	Truncated = "fetch:truncated" // "1" when Body was cut at the size limit
	Error     = "fetch:error"     // why the fetch failed (timeout, robots, too many redirects ...); deleted on success
	URLCol    = "fetch:url"       // the page's normalized URL
)

// Frontier columns of a page row, owned by the crawler.
const (
	Depth    = "crawl:depth"    // link distance from a seed, decimal
	Due      = "crawl:due"      // when the page is next due for fetching, Unix ms; its !due/ row mirrors it
	Interval = "crawl:interval" // current revisit interval, milliseconds (adaptive: ×0.8 changed, ×1.4 unchanged)
	ETag     = "crawl:etag"     // validator for conditional GET
	LastMod  = "crawl:lastmod"  // Last-Modified for conditional GET
	Hint     = "crawl:hint"     // sitemap <lastmod>, Unix ms, a recrawl hint
	Lease    = "crawl:lease"    // crawler id and expiry while a fetch is in flight, so two crawlers never fetch one URL at once
)

// DuePrefix starts the frontier's time index: row DuePrefix + 13-digit Unix
// ms + "/" + page row, one per page waiting to be fetched, so the crawler
// finds due pages with one range scan in time order.
const DuePrefix = "!due/"

// Observed lists the columns with an observer in the indexing chain. Every
// process that writes the table opens it with these
// (percolator.Options.Observed), so its writes set the notifications the
// observers need.
var Observed = []string{Body}

// Weak lists the columns that are only notified, never written.
var Weak []string
