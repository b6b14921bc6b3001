package crawl

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// The frontier lives in the table. Every page row has crawl:due and one
// index row webtable.SpreadDueRow(spread, due, row) mirroring it; a page is
// fetched when its index row comes up in a time-ordered scan (of each
// bucket, merged: scanDue) and a claim transaction gives this
// crawler its crawl:lease. The loader transaction deletes the lease and
// moves the index row to the next due time, with the page's fetch columns,
// atomically.

// dueEnd is the first index row due after ms.
func dueEnd(ms int64) string { return webtable.DueFrom(ms + 1) }

func itoa(n int64) []byte { return strconv.AppendInt(nil, n, 10) }

func atoi(b []byte) int64 {
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return n
}

// A lease is "owner expiryMs"; owner is "dbID/crawlerID".
func (c *Crawler) leaseValue(now time.Time) []byte {
	return fmt.Appendf(nil, "%s %d", c.id, now.Add(c.opt.LeaseTTL).UnixMilli())
}

// leaseLive reports whether lease v still holds off other crawlers.
func (c *Crawler) leaseLive(v []byte, now time.Time) bool {
	owner, exp, ok := strings.Cut(string(v), " ")
	if !ok {
		return false
	}
	if atoi([]byte(exp)) <= now.UnixMilli() {
		return false
	}
	// On an exclusive store no other process writes: a lease of another
	// DB was left by a process that is gone.
	db, _, _ := strings.Cut(owner, "/")
	return !c.exclusive || db == c.db.ID()
}

// link is a URL to add to the frontier.
type link struct {
	url   string
	row   string
	depth int
	hops  int
	hint  int64 // sitemap lastmod, Unix ms; 0 if none
}

// enqueue adds the links whose rows do not exist yet to the frontier, due
// now, in transactions of a few rows (two crawlers adding one URL conflict
// on its crawl:depth cell and one of them retries and skips it). Links with
// a sitemap hint newer than the page's last fetch make it due now. It
// returns how many rows it added.
func (c *Crawler) enqueue(ctx context.Context, links []link) (int, error) {
	const chunk = 32
	var todo []link
	seen := make(map[string]bool, len(links))
	for _, l := range links {
		if seen[l.row] || (l.hint == 0 && c.known.has(l.row)) {
			continue
		}
		seen[l.row] = true
		todo = append(todo, l)
	}
	added := 0
	for len(todo) > 0 {
		n := min(chunk, len(todo))
		batch := todo[:n]
		todo = todo[n:]
		var got int
		err := c.db.Update(ctx, func(tx *percolator.Tx) error {
			got = 0
			now := time.Now().UnixMilli()
			for _, l := range batch {
				depth, err := tx.Get(ctx, l.row, webtable.Depth)
				if err != nil {
					return err
				}
				if depth != nil {
					if l.hint > 0 {
						if err := c.hint(ctx, tx, l, now); err != nil {
							return err
						}
					}
					continue
				}
				got++
				tx.Set(l.row, webtable.Depth, itoa(int64(l.depth)))
				tx.Set(l.row, webtable.Due, itoa(now))
				tx.Set(webtable.SpreadDueRow(c.spread, now, l.row), webtable.DuePage, []byte(l.row))
				if l.hops > 0 {
					tx.Set(l.row, webtable.Hops, itoa(int64(l.hops)))
				}
				if l.hint > 0 {
					tx.Set(l.row, webtable.Hint, itoa(l.hint))
				}
			}
			return nil
		})
		if err != nil {
			return added, fmt.Errorf("add links: %w", err)
		}
		added += got
		for _, l := range batch {
			c.known.add(l.row)
		}
	}
	return added, nil
}

// hint records a sitemap lastmod on an existing row and, when it is newer
// than the last fetch, makes the page due now (unless it is in flight).
func (c *Crawler) hint(ctx context.Context, tx *percolator.Tx, l link, now int64) error {
	old, err := tx.Get(ctx, l.row, webtable.Hint)
	if err != nil || (old != nil && atoi(old) >= l.hint) {
		return err
	}
	tx.Set(l.row, webtable.Hint, itoa(l.hint))
	fetched, err := tx.Get(ctx, l.row, webtable.FetchedAt)
	if err != nil || fetched == nil || atoi(fetched) >= l.hint {
		return err
	}
	lease, err := tx.Get(ctx, l.row, webtable.Lease)
	if err != nil || (lease != nil && c.leaseLive(lease, time.UnixMilli(now))) {
		return err
	}
	due, err := tx.Get(ctx, l.row, webtable.Due)
	if err != nil || due == nil || atoi(due) <= now {
		return err
	}
	tx.Delete(webtable.SpreadDueRow(c.spread, atoi(due), l.row), webtable.DuePage)
	tx.Set(webtable.SpreadDueRow(c.spread, now, l.row), webtable.DuePage, []byte(l.row))
	return tx.Set(l.row, webtable.Due, itoa(now))
}

// addSeeds remembers the seeds and adds them to the frontier.
func (c *Crawler) addSeeds(ctx context.Context, seeds []string) error {
	var links []link
	err := c.db.Update(ctx, func(tx *percolator.Tx) error {
		links = links[:0]
		for _, s := range seeds {
			u, err := webtable.Normalize(s)
			if err != nil {
				return fmt.Errorf("%w: seed %q: %w", ErrInvalidOptions, s, err)
			}
			row, err := webtable.Row(u)
			if err != nil {
				return fmt.Errorf("%w: seed %q: %w", ErrInvalidOptions, s, err)
			}
			if err := tx.Set(webtable.SeedPrefix+row, webtable.SeedURL, []byte(u)); err != nil {
				return err
			}
			links = append(links, link{url: u, row: row})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add seeds: %w", err)
	}
	n, err := c.enqueue(ctx, links)
	c.stats.discovered.Add(int64(n))
	return err
}

// loadSeeds returns every seed the table remembers.
func (c *Crawler) loadSeeds(ctx context.Context) ([]string, error) { return Seeds(ctx, c.db) }

// Seeds returns every seed the table remembers: the seeds of every crawl
// into it, which define its scope across restarts.
func Seeds(ctx context.Context, db *percolator.DB) ([]string, error) {
	var seeds []string
	err := db.View(ctx, func(tx *percolator.Tx) error {
		return tx.Scan(ctx, webtable.SeedPrefix, webtable.SeedPrefix[:len(webtable.SeedPrefix)-1]+"0", webtable.SeedURL, func(_, _ string, v []byte) bool {
			seeds = append(seeds, string(v))
			return true
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load seeds: %w", err)
	}
	return seeds, nil
}

// candidate is a frontier index row seen by a scan.
type candidate struct {
	key string // the index row
	pos string // its position in the frontier's merged order (webtable.DuePos)
	due int64
	row string
}

// scanDue reads up to limit index rows due at or before now, from the
// position from on (in the frontier's merged order: webtable.DuePos), in
// that order; more reports that it stopped at limit (rows due may be
// left). It also returns the due time of the first row after now when the
// scan reached now (0 if none, or with more).
//
// In a table of spread N the frontier is N buckets, each in time order:
// scanDue merges them (k-way), each read from the same position at one
// snapshot in chunks (1.5/N of limit, so that a scan takes about one chunk
// of each), taking the lowest position at the head of any bucket and
// reading a bucket's next chunk when its chunk runs out, so that it never
// takes a row past one of a bucket it has not read that far.
func (c *Crawler) scanDue(ctx context.Context, from string, now int64, limit int) (out []candidate, next int64, more bool, err error) {
	n := max(c.spread, 1)
	chunk := limit
	if n > 1 {
		chunk = max((3*limit+2*n-1)/(2*n), 2)
	}
	end := dueEnd(now)
	type stream struct {
		buf  []candidate
		next string // where the bucket's next chunk starts
		done bool   // the bucket has no rows due past buf
	}
	err = c.db.View(ctx, func(tx *percolator.Tx) error {
		out, next, more = out[:0], 0, false
		streams := make([]stream, n)
		for b := range streams {
			streams[b].next = webtable.DueIn(n, b, from)
		}
		refill := func(b int) error {
			s := &streams[b]
			s.buf = s.buf[:0]
			read, last := 0, ""
			err := tx.Scan(ctx, s.next, webtable.DueIn(n, b, end), webtable.DuePage, func(key, _ string, _ []byte) bool {
				c.indexRead.Add(1)
				read, last = read+1, key
				if ms, row, ok := webtable.ParseDueRow(key); ok {
					s.buf = append(s.buf, candidate{key: key, pos: webtable.DuePos(key), due: ms, row: row})
				}
				return read < chunk
			})
			s.done = read < chunk
			if last != "" {
				s.next = last + "\x00"
			}
			return err
		}
		if n > 1 {
			// Every bucket first with one call (Bigtable: one call, not a
			// scan a bucket), up to 1.5 times limit: the buckets read to
			// their end need no chunk.
			ranges := make([]percolator.KeyRange, n)
			for b := range streams {
				start, stop := streams[b].next, webtable.DueIn(n, b, end)
				ranges[b] = percolator.KeyRange{Start: start, End: max(start, stop)}
			}
			read, stopped := 0, -1
			err := tx.ScanRanges(ctx, ranges, webtable.DuePage, func(b int, key, _ string, _ []byte) bool {
				c.indexRead.Add(1)
				s := &streams[b]
				if ms, row, ok := webtable.ParseDueRow(key); ok {
					s.buf = append(s.buf, candidate{key: key, pos: webtable.DuePos(key), due: ms, row: row})
				}
				s.next = key + "\x00"
				read++
				if read >= chunk*n {
					stopped = b
					return false
				}
				return true
			})
			if err != nil {
				return err
			}
			for b := range streams {
				streams[b].done = stopped < 0 || b < stopped
			}
		}
		for len(out) < limit {
			best := -1
			for b := range streams {
				s := &streams[b]
				for len(s.buf) == 0 && !s.done {
					if err := refill(b); err != nil {
						return err
					}
				}
				if len(s.buf) > 0 && (best < 0 || s.buf[0].pos < streams[best].buf[0].pos) {
					best = b
				}
			}
			if best < 0 {
				break // every bucket read up to now
			}
			out = append(out, streams[best].buf[0])
			streams[best].buf = streams[best].buf[1:]
		}
		if len(out) >= limit {
			more = true
			return nil
		}
		for b := range n {
			err := tx.Scan(ctx, webtable.DueIn(n, b, end), webtable.DueBucketEnd(n, b), webtable.DuePage, func(key, _ string, _ []byte) bool {
				if ms, _, ok := webtable.ParseDueRow(key); ok && (next == 0 || ms < next) {
					next = ms
				}
				return false
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, next, more, err
}

// crawlColumns returns the crawler's columns (crawl:*) of row, by name.
func crawlColumns(ctx context.Context, tx *percolator.Tx, row string) (map[string][]byte, error) {
	cols := make(map[string][]byte, 12)
	err := tx.Scan(ctx, row, row+"\x00", "crawl:", func(_, col string, v []byte) bool {
		cols[col] = v
		return true
	})
	return cols, err
}

// claim leases j's page to this crawler and fills j with what its row
// holds. It reports false if the page is not ours to fetch: leased by a
// live crawler, or the index row is stale (then it is deleted).
func (c *Crawler) claim(ctx context.Context, j *job) (bool, error) {
	ok := false
	err := c.db.Update(ctx, func(tx *percolator.Tx) error {
		ok = false
		now := time.Now()
		cols, err := crawlColumns(ctx, tx, j.row)
		if err != nil {
			return err
		}
		if due, found := cols[webtable.Due]; !found || atoi(due) != j.due {
			return tx.Delete(j.dueKey, webtable.DuePage)
		}
		if l, found := cols[webtable.Lease]; found && c.leaseLive(l, now) {
			return nil
		}
		// Every load writes crawl:interval: without it the page was never
		// fetched and has no status to read.
		var status []byte
		if _, found := cols[webtable.Interval]; found {
			if status, err = tx.Get(ctx, j.row, webtable.Status); err != nil {
				return err
			}
		}
		j.lease = c.leaseValue(now)
		if err := tx.Set(j.row, webtable.Lease, j.lease); err != nil {
			return err
		}
		j.fromRow(cols, status)
		ok = true
		return nil
	})
	return ok, err
}

// fromRow fills j with what its page row holds: its crawl: columns and
// fetch:status (nil if never fetched).
func (j *job) fromRow(cols map[string][]byte, status []byte) {
	j.depth = int(atoi(cols[webtable.Depth]))
	j.hops = int(atoi(cols[webtable.Hops]))
	j.fails = int(atoi(cols[webtable.Fails]))
	j.interval = time.Duration(atoi(cols[webtable.Interval])) * time.Millisecond
	j.etag = string(cols[webtable.ETag])
	j.lastMod = string(cols[webtable.LastMod])
	j.bodySum = string(cols[webtable.BodySum])
	j.textSum = string(cols[webtable.TextSum])
	j.prevCode = int(atoi(status))
	j.fetched = status != nil
}

// release gives a claimed page back without fetching it: it stays due.
func (c *Crawler) release(ctx context.Context, j *job) error {
	return c.db.Update(ctx, func(tx *percolator.Tx) error {
		v, err := tx.Get(ctx, j.row, webtable.Lease)
		if err != nil || string(v) != string(j.lease) {
			return err
		}
		return tx.Delete(j.row, webtable.Lease)
	})
}

// wholeEvery bounds how long the dispatcher goes without reading the due
// index from its start (frontierPass), unless the last whole pass read for
// more than a wholeIdle-th of that: then the next waits wholeIdle times
// that pass's reading, at most wholeMaxEvery. Whole passes read every row
// deleted from the index since GC last ran; a crawl of a million pages
// with GC off (bulkbench's crawl) spent 39% of its CPU on them by 900,000
// pages, and fetched 75 pages a second instead of 600.
const (
	wholeEvery    = 10 * time.Second
	wholeIdle     = 9
	wholeMaxEvery = 5 * time.Minute
)

// frontierPass decides where the dispatcher's next pass over the due
// index begins. The index's start holds the rows deleted since GC last ran
// (every fetched page leaves its old index row behind as a deletion), so
// a pass that always began there would read them all again, and a bulk
// crawl would be quadratic in its pages. A pass begins instead at the
// first row the previous one left for later (its host was busy) or, if it
// left none, a second before the due time its last scan reached: rows
// before that were dispatched, are in flight or out of scope. Rows written
// later with an earlier due time (another crawler's, a clock behind ours)
// are found by a whole pass, at least every wholeEvery (longer if whole
// passes take long to read: see there) and whenever a pass
// found nothing due and nothing is in flight, so Once ends only on a whole
// pass that found nothing. An idle crawler that is not Once makes that
// whole pass once when it goes idle, then resumes like a busy one until
// wholeEvery: it looks at the index every second, and a whole pass reads
// every page fetched since GC last ran (the engine's crawler sat idle
// while the chain indexed a bulk crawl: 7% of the CPU on 10,000 pages).
type frontierPass struct {
	once      bool          // Options.Once: every idle pass is followed by a whole one
	partial   bool          // the current pass did not begin at the index's start
	resume    string        // the first row the current pass left for later
	scannedAt time.Time     // the now of the current pass's last scan
	lastWhole time.Time     // when the last whole pass began
	wholeRead time.Duration // the last whole pass's reading time
	// quiet: a whole pass found nothing due and nothing in flight, and
	// no pass has found anything since.
	quiet bool
	// The current pass's reading time and the rows it dispatched as it
	// read them (not held ones), and when the next pass may begin.
	read      time.Duration
	sent      int
	notBefore time.Time
}

// A pass that left rows for later (maxHeld rows were held) and dispatched
// none of the rows it read only learnt that every host it met is busy: the
// next pass begins skipIdle times that pass's reading time later (at least
// skipMinWait, at most skipMaxWait), or once fewer than half of maxHeld
// rows are held. One big host's backlog of a million due rows made the
// dispatcher read the whole index again and again, a tenth of the CPU of
// a bulk crawl; now that reading takes a tenth of a core at most, and
// other hosts' rows behind the backlog wait skipMaxWait at most.
const (
	skipIdle    = 9
	skipMinWait = time.Second
	skipMaxWait = time.Minute
)

// readFor records that the current pass spent d reading the index.
func (p *frontierPass) readFor(d time.Duration) { p.read += d }

// sentRow records that the current pass dispatched a row it read.
func (p *frontierPass) sentRow() { p.sent++ }

// wait returns how long the next pass must wait before its first read,
// given the number of rows held and the most that may be; zero if it may
// read now. The caller asks only between passes.
func (p *frontierPass) wait(now time.Time, held, max int) time.Duration {
	if held < max/2 || !now.Before(p.notBefore) {
		return 0
	}
	return p.notBefore.Sub(now)
}

// scanned records a scan of the current pass at now.
func (p *frontierPass) scanned(now time.Time) { p.scannedAt = now }

// skipped records that the current pass left the row at key for later.
func (p *frontierPass) skipped(key string) {
	if p.resume == "" {
		p.resume = key
	}
}

// whole reports whether the current pass began at the index's start.
func (p *frontierPass) whole() bool { return !p.partial }

// next ends the current pass at now and returns where the next begins;
// idle means the pass found nothing due and nothing is in flight.
func (p *frontierPass) next(now time.Time, idle bool) string {
	p.quiet = idle && (p.quiet || !p.partial)
	if !p.partial {
		p.wholeRead = p.read
	}
	p.notBefore = time.Time{}
	if p.resume != "" && p.sent == 0 {
		p.notBefore = now.Add(min(max(skipIdle*p.read, skipMinWait), skipMaxWait))
	}
	p.read, p.sent = 0, 0
	start := webtable.DuePrefix
	switch {
	case now.Sub(p.lastWhole) >= min(max(wholeEvery, wholeIdle*p.wholeRead), wholeMaxEvery):
	case idle && (p.once || !p.quiet):
	case p.resume != "":
		start = p.resume
	case !p.scannedAt.IsZero():
		start = webtable.DueFrom(p.scannedAt.Add(-time.Second).UnixMilli())
	}
	p.partial = start != webtable.DuePrefix
	if !p.partial {
		p.lastWhole = now
	}
	p.resume = ""
	return start
}
