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

// DueRow returns the frontier index row of page row at due time ms in a
// table of spread 1: DuePrefix + 13-digit Unix ms + "/" + row, so the
// frontier is in time order. In a table of spread N it is also the row's
// position in the frontier's merged order (DuePos): SpreadDueRow is its key.
func DueRow(ms int64, row string) string {
	return fmt.Sprintf("%s%013d/%s", DuePrefix, ms, row)
}

// SpreadDueRow returns the frontier index row of page row at due time ms
// in a table of spread n (Spread): DueRow when n ≤ 1, else DuePrefix +
// %02x(SpreadOf(row, n)) + "/" + 13-digit Unix ms + "/" + row. Each bucket
// is in time order; readers merge them (DueIn).
func SpreadDueRow(n int, ms int64, row string) string {
	return DueIn(n, SpreadOf(row, n), DueRow(ms, row))
}

// DueIn maps pos, a position in the frontier's merged order (a DueRow, a
// DueFrom, DuePrefix, or any key between), to the key of the same position
// in bucket b of a table of spread n.
func DueIn(n, b int, pos string) string {
	if n <= 1 {
		return pos
	}
	return fmt.Sprintf("%s%02x/%s", DuePrefix, b, strings.TrimPrefix(pos, DuePrefix))
}

// DueBucketEnd is where bucket b's rows end in a table of spread n.
func DueBucketEnd(n, b int) string {
	if n <= 1 {
		return DuePrefix + "\xff"
	}
	return fmt.Sprintf("%s%02x/\xff", DuePrefix, b)
}

// DuePos returns the position in the frontier's merged order of a frontier
// index row of any spread: the row with its bucket taken out (DueRow).
func DuePos(key string) string {
	rest, ok := strings.CutPrefix(key, DuePrefix)
	if ok && len(rest) > 3 && rest[2] == '/' {
		return DuePrefix + rest[3:]
	}
	return key
}

// DueFrom is where the frontier's index rows due at ms or later start, in
// the merged order (DueIn maps it to a bucket).
func DueFrom(ms int64) string {
	return fmt.Sprintf("%s%013d", DuePrefix, ms)
}

// ParseDueRow splits a frontier index row, of any spread, into its due
// time and page row.
func ParseDueRow(key string) (ms int64, row string, ok bool) {
	rest, ok := strings.CutPrefix(DuePos(key), DuePrefix)
	if !ok || len(rest) < 15 || rest[13] != '/' {
		return 0, "", false
	}
	ms, err := strconv.ParseInt(rest[:13], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return ms, rest[14:], true
}
