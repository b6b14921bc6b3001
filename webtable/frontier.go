package webtable

import (
	"fmt"
	"strconv"
	"strings"
)

// Crawler bookkeeping, kept next to the fetch:* and frontier columns. The
// observers need not read them.
const (
	// DuePage is the one column of a frontier index row (DueRow): the page
	// row it points at.
	DuePage = "crawl:page"
	// BodySum is the hex SHA-256 of the stored Body with its Content-Type
	// and X-Robots-Tag, so a refetch with identical bytes and headers
	// leaves the body (and its observers) alone.
	BodySum = "crawl:bodysum"
	// TextSum is, for HTML, the page's content hash as package extract
	// computes it (extract.Page.Hash: the hex SHA-256 of the visible text,
	// lower-cased, whitespace collapsed; of "" when there is none), and
	// the body's SHA-256 for other types: "changed" for the adaptive
	// schedule.
	TextSum = "crawl:textsum"
	// Fails counts consecutive failed fetches (network errors, 5xx, 429),
	// for the retry backoff. Deleted on success.
	Fails = "crawl:fails"
	// Hops counts the redirects that led to the page (0 for links and
	// seeds), for the hop limit.
	Hops = "crawl:hops"
	// SeedURL is the column of a seed row (SeedPrefix + page row): the
	// seed's URL. Seeds define the crawl's scope across restarts.
	SeedURL = "crawl:seed"
)

// SeedPrefix starts the rows that remember the crawl's seeds.
const SeedPrefix = "!seed/"

// DueRow returns the frontier index row of page row at due time ms:
// DuePrefix + 13-digit Unix ms + "/" + row, so the frontier is in time
// order.
func DueRow(ms int64, row string) string {
	return fmt.Sprintf("%s%013d/%s", DuePrefix, ms, row)
}

// DueFrom is where the frontier's index rows due at ms or later start.
func DueFrom(ms int64) string {
	return fmt.Sprintf("%s%013d", DuePrefix, ms)
}

// ParseDueRow splits a frontier index row into its due time and page row.
func ParseDueRow(key string) (ms int64, row string, ok bool) {
	rest, ok := strings.CutPrefix(key, DuePrefix)
	if !ok || len(rest) < 15 || rest[13] != '/' {
		return 0, "", false
	}
	ms, err := strconv.ParseInt(rest[:13], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return ms, rest[14:], true
}
