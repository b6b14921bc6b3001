// Package crawl is the crawler: it fetches pages politely and writes each
// into the web table with a loader transaction, which notifies the
// document-processing observers (section 2.4 of the Percolator paper).
//
// # Basics
//
//	c, err := crawl.New(db, crawl.Options{Seeds: []string{"https://example.com/"}, Once: true})
//	err = c.Run(ctx) // returns when nothing is due (Once), or when ctx is done
//
// The frontier lives in the table: each page row has crawl:due and an index
// row webtable.DuePrefix + %013d(due ms) + "/" + page row (with the row's
// bucket before the time in a table of spread N > 1: webtable.Spread); Run
// scans that index in time order (each bucket, merged), leases each page (crawl:lease) in a claim
// transaction, fetches it with colly, reads a 2xx HTML body's links,
// robots rules and text hash with package extract (as the parse observer
// will read the stored body), and loads it. The table is the visited
// set: memory stays bounded whatever the crawl's size, a restart resumes
// where the last run stopped, and two crawlers on one table never fetch a
// page at once (their claims conflict).
//
// Politeness: robots.txt (cached per host, with Crawl-delay), a delay and a
// parallelism bound per host, a global bound on fetching goroutines
// (colly runs synchronously inside them), sitemaps as hints, and no
// private, loopback or link-local addresses unless AllowPrivate. On a
// store other processes share, each host's delay and parallelism hold
// across all crawlers on the table (see polite.go).
//
// Revisits follow NextInterval: ×0.8 when the visible text changed, ×1.4
// when not, clamped to [MinInterval, MaxInterval]. The first interval is
// the time since the page's Last-Modified when it sends one
// (FirstInterval), else InitialInterval.
//
// WARC: an Importer loads WARC records through the same loader
// transaction (crawler import), and Options.WARCDir archives every fetch
// as WARC records (see warcout.go for the queue and what the records hold).
//
// # Caveats
//
//   - Every non-2xx response but 304 deletes the page's body, also a 5xx
//     or 429 that outlasts the retries (it is then retried with backoff,
//     not after the revisit interval); robots.txt and private-address
//     refusals delete it too. A fetch without a response (timeout,
//     connection refused) keeps the last body, as does a robots.txt that
//     cannot be had (no answer, 5xx, 429): the host's pages fail until it
//     answers (asked again after a minute).
//   - A 304 leaves fetch:status at the last full response's status.
//   - Due rows whose host has no request slot free are held in memory
//     (per host, up to 100,000 rows) and each pass reads the index from
//     where the last one ended, so a wake-up does not read a host's
//     backlog again. Past that many held rows, a pass reads the index
//     again from the first row it could not hold; when it found nothing
//     it could dispatch, the next waits until half the held rows are gone
//     or nine times that pass's reading time (1 s to 1 min, so rows of
//     other hosts behind a big host's backlog wait a minute at most).
//     At least every 10 s (or when such a wait ends) a pass reads it
//     from its start (rows others wrote with an earlier due time), which
//     reads the index rows deleted since GC last ran.
//   - Links go to the frontier in their own transactions before the loader
//     transaction; a crash in between refetches the page, loses nothing.
package crawl
