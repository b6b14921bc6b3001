package webtable

import (
	"fmt"
	"math"
	"strconv"
)

// Columns of a page row written by the crawler's loader transaction, one
// transaction per fetch. Writing (or deleting) Body notifies the parse
// observer, and the loader does so for every fetch whose outcome changes
// what the index shows: a first fetch of any outcome (a 404, a redirect,
// a refusal deletes the Body it never had), a new status, a new redirect
// target, new bytes or headers. A fetch that did not change the page (304,
// same bytes, the same error again) leaves Body alone and notifies nothing.
const (
	Body      = "fetch:body"      // raw response body (possibly truncated); deleted for non-2xx responses, kept across a failed fetch (timeout)
	Status    = "fetch:status"    // HTTP status code, decimal; "0" when the fetch failed without one
	Type      = "fetch:type"      // Content-Type as sent
	FetchedAt = "fetch:time"      // fetch time, Unix milliseconds, decimal
	Headers   = "fetch:headers"   // selected response headers as a JSON object
	Redirect  = "fetch:redirect"  // normalized redirect target for 3xx; deleted otherwise
	Truncated = "fetch:truncated" // "1" when Body was cut at the size limit
	Error     = "fetch:error"     // why the fetch failed (timeout, robots, too many redirects ...); deleted on success
	URLCol    = "fetch:url"       // the page's normalized URL
)

// Causes the crawler records in Error (as a prefix: details may follow
// after ": ") for pages it did not fetch on purpose.
const (
	CauseRefused = "crawl: refusing private address" // the host is or resolves to a private, loopback or link-local address
	CauseRobots  = "crawl: disallowed by robots.txt" // robots.txt disallows the page
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
	History  = "crawl:history"  // the last fetches, newest first: JSON [FetchEvent]
)

// FetchEvent is one fetch in a page's History.
type FetchEvent struct {
	Time    int64 `json:"t"`           // Unix ms
	Status  int   `json:"s"`           // HTTP status, 0 when the fetch failed without one
	Changed bool  `json:"c,omitempty"` // the content (or status) changed
	Failed  bool  `json:"f,omitempty"` // the fetch failed (network, robots, retries exhausted)
}

// DuePrefix starts the frontier's time index: row DuePrefix + 13-digit Unix
// ms + "/" + page row, one per page waiting to be fetched, so the crawler
// finds due pages with one range scan in time order; in a table of spread
// N > 1, DuePrefix + %02x(bucket) + "/" + the same, a scan of each bucket
// (SpreadDueRow).
const DuePrefix = "!due/"

// Columns of a page row written by the indexing chain's observers.
const (
	// Written by the parse observer (observes Body).
	Title        = "page:title"
	Text         = "page:text"          // visible text
	Description  = "page:desc"          // meta description
	TitleCore    = "page:titlecore"     // the title without its site's affix (extract.Page.TitleCore); deleted when none
	LinkDensity  = "page:linkdensity"   // share of the visible text in links, decimal with 2 digits (extract.Page.LinkDensity)
	Lang         = "page:lang"          // language: declared (lang attribute, content-language meta or header) unless the text clearly says another, else detected (extract.DetectLang)
	LangMismatch = "page:lang-mismatch" // "1" when the page declares a language its text clearly is not (extract.Page.LangMismatch); absent otherwise. Of near-copies, the lead is one without it
	Kind         = "page:kind"          // pdf | txt (extract.KindPDF, KindText); absent for HTML
	Sections     = "page:sections"      // the headings that have a fragment to link to, JSON [{"id":..,"heading":..,"at":..}] (Section); deleted when none
	ParseError   = "page:error"         // why an unparsed page's body could not be read (a broken PDF); absent otherwise
	Canonical    = "page:canonical"     // rel=canonical, normalized URL
	Hash         = "page:hash"          // content hash of the normalized text; deleted unless State is ok (observed: cluster)
	SimHash      = "page:simhash"       // similarity fingerprint of the text without boilerplate, 16 hex digits (extract.SimHash); deleted unless State is ok and the text has extract.SimHashMinWords words (observed: near)
	Links        = "page:links"         // outlinks as JSON [{"url":..,"anchor":..}]; deleted unless State is ok (observed: links)
	State        = "page:state"         // ok | redirect | gone | noindex | unparsed (see the State constants)
	AliasOf      = "page:redirect-to"   // for a redirecting page: the target's row
	ParsedAt     = "page:parsed"        // Unix ms when parsed

	// Written by the links observer in the SOURCE row: the outlinks it last
	// published, JSON {"targetRow": "anchor"}: exactly those with an InPrefix
	// cell in their target's row (a page with more changed links than one
	// run writes publishes them over several runs, LinksMore).
	LinksOut = "links:out"
	// LinksMore (weak) on a SOURCE row: its links are published only in
	// part, and the links-more observer goes on with the rest.
	LinksMore = "links:more"
	// InPrefix + source row, in the TARGET row: the anchor text of the
	// source's link to it. Written by the links observer; past a limit the
	// export observer moves them into rows of their own (inbound.go:
	// InSpillRow, InSpilled; read both with ScanIn).
	InPrefix = "in:"
	// AliasPrefix + redirecting row, in the redirect TARGET's row: that row
	// redirects here. Written by the parse observer of the redirecting row.
	AliasPrefix = "alias:"

	// Written by the cluster observer (observes Hash).
	ClusterHash = "cluster:hash"  // the hash under which the page is a member of a cluster row
	ClusterOf   = "cluster:canon" // the canonical row of the page's cluster (written by elect)
	ClusterSize = "cluster:size"  // "1" when the page is alone in its cluster, "2" when it has company (written by elect; tables elected before wrote the exact count, which reads the same)

	// Written by the near observer (observes SimHash): the fingerprint
	// under which the page's band rows (NearRow) list it; deleted with them.
	NearFP = "near:fp"
	// NearWas: the fingerprints (NearFPString, space-separated) whose
	// band rows the page left and whose neighbourhoods the near-docs
	// observer has not looked at since; written by near, deleted by
	// near-docs.
	NearWas = "near:was"

	// PageRank, kept by the rank observers.
	Rank = "rank:value" // decimal float

	// Export bookkeeping in the page row.
	ExportDigest = "export:digest"  // digest of the last exported document; deleted when not exported
	ExportedAt   = "export:time"    // Unix ms of the last export
	ExportLast   = "export:last"    // the last exported document (JSON), for inspection and verification
	ExportRank   = "export:rank"    // RoundRank of the PageRank last exported
	ExportVer    = "export:version" // version (start timestamp) of the last export, decimal

	// Written by the serving feeder when it applied an export of the page:
	// "SEARCHABLEMS VERSION FETCHEDMS EXPORTEDMS": the export's version (the
	// feeder skips exports not newer), the fetch time of its document (0 for
	// a delete), and when that content was first exported and became
	// searchable (later exports of the same content keep those).
	SearchableAt = "serve:time"

	// Written by the cluster observer when it placed the page's current
	// content in its cluster, Unix ms.
	ClusteredAt = "cluster:time"
)

// States of a page (column State).
const (
	StateOK       = "ok"       // an HTML page with content: indexed (if canonical)
	StateRedirect = "redirect" // a 3xx with a target: an alias of the target
	StateGone     = "gone"     // 404/410/other errors or no content: not indexed
	StateNoIndex  = "noindex"  // the page asked not to be indexed
	StateUnparsed = "unparsed" // not HTML: recorded, not parsed
)

// Weak columns: only notified (percolator DB.Notify), never written. They
// carry work to hot rows without conflicts (section 2.4 of the paper).
const (
	DupDirty  = "dup:dirty"  // on a cluster row: membership or a member's rank changed; elect runs
	DocDirty  = "doc:dirty"  // on a page row: its document may have changed; export runs
	RankDirty = "rank:dirty" // on a page row: its rank inputs changed; the rank observer runs
	// RankOutside is on a PageRank block row (observers/rank) when what
	// its pages get from outside the block changed: a page of another
	// block that they link to became or stopped being a page, or one of
	// them links to a page it did not before (their out-degrees changed),
	// or what another block's pages give them moved a little (by less
	// than rank.Options.UrgentEpsilon).
	// The background rank-outside observer solves the block again. During
	// a bulk crawl both happen with every page crawled, and a block solved
	// again for each (a site's index linking thousands of pages of other
	// blocks reads all its targets every time) would cost each page a few
	// solves of whole blocks; held, a block solves once for many.
	RankOutside = "rank:outside"

	// The same work when only a PageRank changed, done in the background
	// (percolator.Observer.Background) so that it never holds up content.
	DupRanked = "dup:ranked" // on a cluster row: a member's rank changed; elect-rank runs

	// The same work when only the anchors a document gathers changed (a
	// link to the page or to one of its duplicates or redirects was added,
	// changed or removed, or a linker's canonical changed) or its PageRank
	// as the index shows it (RoundRank), in the background too: during a
	// bulk crawl a page's inbound links and PageRank move many times, and
	// the background export runs once for all the moves meanwhile (one
	// column, so anchors and PageRank moving together are one run).
	DocLinked = "doc:linked" // on a page row: its inbound anchors or its shown rank changed; export-links runs

	// NearDirty is on a page row when its fingerprint's band rows or its
	// standing as a canonical changed: the near-docs observer notifies the
	// documents whose near-copies may have changed (those within two steps
	// of NearBits of the page).
	NearDirty = "near:dirty"
	// NearCheck is on a canonical page row when its near-copies may have
	// changed: the near-check observer compares the page's standing with
	// the one its document was exported with, and notifies DocDirty when
	// they differ.
	NearCheck = "near:check"
)

// Rows that are not pages. '!' sorts before every reversed host.
const (
	ClusterPrefix = "!dup/"      // ClusterPrefix + content hash: a duplicate cluster
	MemberPrefix  = "m:"         // MemberPrefix + page row, in a cluster row: a member
	ClusterCanon  = "dup:canon"  // in a cluster row: the elected canonical row
	ExportPrefix  = "!export/"   // ExportPrefix + %020d(start ts) + "/" + page row: an export queue entry (with a bucket segment in a spread table: Queue)
	ExportDoc     = "export:doc" // in an export queue row: the JSON document, or "" for a delete
	NearPrefix    = "!near/"     // NearPrefix + band + "/" + 4 hex digits + "/" + page row: a band row (NearRow)
	// StatsRow holds the counts that take a scan of every page, made by
	// one search process of a shared table (the holder of its engine
	// duty) for the others' status pages.
	StatsRow   = "!stats"
	StatsPages = "stats:pages" // in StatsRow: JSON {pages, frontier, due, next_due, at, took_ms}
	// StatsChanged, in StatsRow: when a process other than the counting
	// one last committed (Unix ms, decimal), so the counts are made
	// again only after the table changed.
	StatsChanged = "stats:changed"
)

// NearBands is how many blocks of 16 bits a fingerprint is cut into for
// the band rows: two fingerprints within NearBands-1 bits of each other
// agree on at least one whole block.
const NearBands = 4

// NearRow is the band row of page row under its fingerprint fp's block
// band (0 to NearBands-1): NearPrefix + band + "/" + the block's 4 hex
// digits + "/" + row, with column NearFP holding fp (NearFPString). The
// pages whose fingerprints share that block are a prefix read
// (NearBlock), never a full scan.
func NearRow(band int, fp uint64, row string) string {
	return NearBlock(band, fp) + row
}

// NearBlock is the prefix of the band rows of every fingerprint that
// agrees with fp on block band.
func NearBlock(band int, fp uint64) string {
	return fmt.Sprintf("%s%d/%04x/", NearPrefix, band, (fp>>(16*band))&0xffff)
}

// NearFPString is a fingerprint as the SimHash and NearFP columns hold it:
// 16 lower-case hex digits.
func NearFPString(fp uint64) string { return fmt.Sprintf("%016x", fp) }

// ParseNearFP reads a fingerprint written by NearFPString.
func ParseNearFP(s string) (uint64, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("webtable: fingerprint %q: not 16 hex digits", s)
	}
	return strconv.ParseUint(s, 16, 64)
}

// Observed lists the columns with an observer in the indexing chain. Every
// process that writes the table opens it with these
// (percolator.Options.Observed), so its writes set the notifications the
// observers need.
var Observed = []string{Body, Hash, Links, SimHash}

// Weak lists the columns that are only notified, never written.
var Weak = []string{DupDirty, DocDirty, RankDirty, RankOutside, DupRanked, DocLinked, LinksMore, NearDirty, NearCheck}

// RoundRank is PageRank as the index sees it: a document is re-exported
// when this changes, not on every small move. Ranked search multiplies
// BM25 by 1 + 0.45 × ln(1 + PageRank) (serving.Score), so RoundRank
// quantizes ln(1 + PageRank) in steps of RankStep: a step moves that
// factor by at most 0.45 × RankStep (2.25%), and a document's score
// differs from the one the table's value would give by less than that.
// (Two significant digits would be as coarse for pages of average rank
// and five times finer for the many below it, re-exporting most pages of
// a bulk crawl once more only for the ranking's sake.) The string is the
// bucket's middle value to four significant digits.
func RoundRank(x float64) string {
	if !(x > 0) {
		return "0"
	}
	q := math.Round(math.Log1p(x)/RankStep) * RankStep
	return strconv.FormatFloat(math.Expm1(q), 'g', 4, 64)
}

// RankStep is RoundRank's step in ln(1 + PageRank).
const RankStep = 0.05
