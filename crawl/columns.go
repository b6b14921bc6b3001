package crawl

// Columns the crawler keeps next to webtable's fetch:* and crawl:* columns.
// They are crawler bookkeeping: the observers need not read them.
const (
	// ColPage is the one column of a frontier row (webtable.DuePrefix +
	// 13-digit Unix ms + "/" + page row): the page row it points at.
	ColPage = "crawl:page"
	// ColBodySum is the hex SHA-256 of the stored fetch:body with its
	// Content-Type and X-Robots-Tag, so a refetch with identical bytes and
	// headers leaves the body (and its observers) alone.
	ColBodySum = "crawl:bodysum"
	// ColTextSum is, for HTML, the page's content hash as package extract
	// computes it (extract.Page.Hash: the hex SHA-256 of the visible text,
	// lower-cased, whitespace collapsed; of "" when there is none), and
	// the body's SHA-256 for other types: "changed" for the adaptive
	// schedule.
	ColTextSum = "crawl:textsum"
	// ColFails counts consecutive failed fetches (network errors, 5xx,
	// 429), for the retry backoff. Deleted on success.
	ColFails = "crawl:fails"
	// ColHops counts the redirects that led to the page (0 for links and
	// seeds), for the hop limit.
	ColHops = "crawl:hops"
	// ColSeed is the column of a seed row (SeedPrefix + page row): the
	// seed's URL. Seeds define the crawl's scope across restarts.
	ColSeed = "crawl:seed"
)

// SeedPrefix starts the rows that remember the crawl's seeds.
const SeedPrefix = "!seed/"
