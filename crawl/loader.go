package crawl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// keptHeaders are the response headers recorded in fetch:headers.
var keptHeaders = []string{
	"Cache-Control", "Content-Language", "Content-Length", "Content-Type", "Date", "ETag",
	"Expires", "Last-Modified", "Link", "Location", "Retry-After", "Server", "X-Robots-Tag",
}

// outcome summarizes a load for the stats and the log.
type outcome struct {
	failed      bool // counts as an error
	notModified bool
	changed     bool
	wroteBody   bool
	addedTarget bool // a redirect target joined the frontier
}

// load is the loader transaction (section 2.4 of the paper): one
// transaction writes j's fetch result into its page row, deletes the lease,
// moves its frontier index row to the next due time and, for a redirect,
// adds the target to the frontier. Every outcome that changes what the
// index should show notifies the parse observer, by writing or deleting
// fetch:body; an unchanged page (304, identical bytes, the same error or
// redirect again) leaves it alone. It fails with errLeaseLost if another
// crawler took the page over.
func (c *Crawler) load(ctx context.Context, j *job) (outcome, error) {
	var out outcome
	err := c.db.Update(ctx, func(tx *percolator.Tx) error {
		out = outcome{}
		lease, err := tx.Get(ctx, j.row, webtable.Lease)
		if err != nil {
			return err
		}
		if string(lease) != string(j.lease) {
			return errLeaseLost
		}
		at := j.res.at // the response's time, as the WARC writer records it
		if at.IsZero() {
			at = time.Now()
		}
		var err2 error
		out, err2 = c.write(ctx, tx, j, at)
		return err2
	})
	return out, err
}

func (c *Crawler) write(ctx context.Context, tx *percolator.Tx, j *job, now time.Time) (outcome, error) {
	var out outcome
	r := &j.res
	row := j.row
	set := func(col string, v []byte) { tx.Set(row, col, v) }
	// A page fetched for the first time has no fetch columns to delete.
	del := func(col string) {
		if j.fetched {
			tx.Delete(row, col)
		}
	}

	var (
		deleteBody bool
		fetchErr   error
		retryWait  time.Duration
	)
	switch {
	case r.err != nil:
		fetchErr = r.err
		out.failed = !r.permanent
		deleteBody = r.permanent && j.bodySum != ""
	case r.status == http.StatusNotModified:
		out.notModified = true
	case r.status/100 == 2:
		sum := fetchSum(r)
		text := r.textSum
		if !r.html {
			text = sum
		}
		out.changed = !j.fetched || j.prevCode/100 != 2 || text != j.textSum
		if sum != j.bodySum {
			out.wroteBody = true
			set(webtable.Body, r.body)
			set(webtable.BodySum, []byte(sum))
			if r.truncated {
				set(webtable.Truncated, []byte("1"))
			} else {
				del(webtable.Truncated)
			}
		}
		set(webtable.TextSum, []byte(text))
	case retryable(r.status):
		// Still failing after the retries: a non-2xx response like any
		// other for the index (webtable.Body's contract), retried sooner.
		out.failed = true
		deleteBody = j.bodySum != ""
		fetchErr = fmt.Errorf("status %d after %d attempts", r.status, c.opt.Retries+1)
		retryWait, _ = retryAfter(r.header, now)
	default: // 3xx, 4xx: the page is gone from the index
		deleteBody = j.bodySum != ""
		out.changed = j.prevCode != r.status
	}
	if deleteBody {
		del(webtable.Body)
		del(webtable.BodySum)
		del(webtable.TextSum)
		del(webtable.Truncated)
	}

	// Without a body, the parse observer is told of the outcome by a
	// deletion of fetch:body (a tombstone where there was none): on a first
	// fetch, and whenever the status or the redirect target changed. With
	// a body, writing or deleting it tells it; a body kept across a failed
	// fetch keeps the page as it was.
	if !out.wroteBody && !deleteBody && j.bodySum == "" {
		tell := !j.fetched || r.status != j.prevCode
		if !tell && r.status/100 == 3 {
			old, err := tx.Get(ctx, row, webtable.Redirect)
			if err != nil {
				return out, err
			}
			tell = string(old) != r.redirect
		}
		if tell {
			tx.Delete(row, webtable.Body)
		}
	}

	// Redirects: recorded on the source, the target fetched as its own URL.
	del(webtable.Redirect)
	if r.status/100 == 3 && r.redirect != "" {
		set(webtable.Redirect, []byte(r.redirect))
		cause, added, err := c.follow(ctx, tx, j, now)
		if err != nil {
			return out, err
		}
		if cause != nil {
			fetchErr = cause
		}
		out.addedTarget = added
	}

	set(webtable.URLCol, []byte(j.url))
	set(webtable.FetchedAt, itoa(now.UnixMilli()))
	if r.status != http.StatusNotModified {
		set(webtable.Status, itoa(int64(r.status)))
	}
	if r.header != nil && r.status != http.StatusNotModified {
		if ct := r.header.Get("Content-Type"); ct != "" {
			set(webtable.Type, []byte(ct))
		} else {
			del(webtable.Type)
		}
		set(webtable.Headers, headersJSON(r.header))
	} else if r.header == nil && (deleteBody || j.bodySum == "") {
		// A body kept across a failed fetch keeps the headers it came with.
		del(webtable.Type)
		del(webtable.Headers)
	}
	switch {
	case r.status/100 == 2 || r.status == http.StatusNotModified:
		for col, h := range map[string]string{webtable.ETag: "ETag", webtable.LastMod: "Last-Modified"} {
			if v := r.header.Get(h); v != "" {
				set(col, []byte(v))
			} else if r.status != http.StatusNotModified {
				del(col)
			}
		}
	case !out.failed:
		del(webtable.ETag)
		del(webtable.LastMod)
	}
	if fetchErr != nil {
		set(webtable.Error, []byte(fetchErr.Error()))
	} else {
		del(webtable.Error)
	}

	// Schedule the next fetch and move the frontier index row.
	interval := j.interval
	var next time.Time
	if out.failed {
		fails := j.fails + 1
		set(webtable.Fails, itoa(int64(fails)))
		wait := c.opt.MinInterval << min(fails-1, 20)
		if limit := max(interval, c.opt.MinInterval); wait > limit || wait <= 0 {
			wait = limit
		}
		next = now.Add(max(wait, retryWait))
	} else {
		if j.fails > 0 {
			tx.Delete(row, webtable.Fails)
		}
		if interval <= 0 {
			var lastMod string
			if r.header != nil && r.status/100 == 2 {
				lastMod = r.header.Get("Last-Modified")
			}
			interval = FirstInterval(lastMod, now, c.opt.InitialInterval, c.opt.MinInterval, c.opt.MaxInterval)
		} else {
			interval = NextInterval(interval, out.changed, c.opt.MinInterval, c.opt.MaxInterval)
		}
		next = now.Add(interval)
	}
	if interval <= 0 {
		interval = c.opt.InitialInterval // failed first fetch: where adaptation will start
	}
	set(webtable.Interval, itoa(interval.Milliseconds()))
	if err := c.logFetch(ctx, tx, row, webtable.FetchEvent{
		Time: now.UnixMilli(), Status: r.status, Changed: out.changed, Failed: fetchErr != nil,
	}); err != nil {
		return out, err
	}
	due := next.UnixMilli()
	set(webtable.Due, itoa(due))
	tx.Delete(row, webtable.Lease)
	if j.dueKey != "" { // "": an imported page new to the table
		tx.Delete(j.dueKey, webtable.DuePage)
	}
	return out, tx.Set(webtable.SpreadDueRow(c.spread, due, row), webtable.DuePage, []byte(row))
}

// follow adds a redirect's target to the frontier (same depth, one more
// hop) unless the chain loops back or is too long; then it returns the
// cause to record on the source. added reports a new frontier row.
func (c *Crawler) follow(ctx context.Context, tx *percolator.Tx, j *job, now time.Time) (cause error, added bool, err error) {
	target := j.res.redirect
	if target == j.url {
		return ErrRedirectLoop, false, nil
	}
	trow, err := webtable.Row(target)
	if err != nil {
		return err, false, nil
	}
	// Walk the chain the table already knows from the target.
	cur := trow
	for range c.opt.MaxRedirects {
		next, err := tx.Get(ctx, cur, webtable.Redirect)
		if err != nil {
			return nil, false, err
		}
		if next == nil {
			break
		}
		if string(next) == j.url {
			return ErrRedirectLoop, false, nil
		}
		if cur, err = webtable.Row(string(next)); err != nil {
			break
		}
	}
	if !c.scope.contains(target) {
		return nil, false, nil
	}
	depth, err := tx.Get(ctx, trow, webtable.Depth)
	if err != nil || depth != nil {
		return nil, false, err
	}
	if j.hops+1 > c.opt.MaxRedirects {
		return ErrTooManyRedirects, false, nil
	}
	ms := now.UnixMilli()
	tx.Set(trow, webtable.Depth, itoa(int64(j.depth)))
	tx.Set(trow, webtable.Hops, itoa(int64(j.hops+1)))
	tx.Set(trow, webtable.Due, itoa(ms))
	tx.Set(webtable.SpreadDueRow(c.spread, ms, trow), webtable.DuePage, []byte(trow))
	return nil, true, nil
}

// fetchSum is the hex SHA-256 of what the parse observer reads of a 2xx
// response: the Content-Type, the X-Robots-Tag and the body. An equal sum
// leaves fetch:body, and so the chain, alone.
func fetchSum(r *result) string {
	h := sha256.New()
	for _, k := range []string{"Content-Type", "X-Robots-Tag"} {
		h.Write([]byte(r.header.Get(k)))
		h.Write([]byte{0})
	}
	h.Write(r.body)
	return hex.EncodeToString(h.Sum(nil))
}

func headersJSON(h http.Header) []byte {
	m := make(map[string]string, len(keptHeaders))
	for _, k := range keptHeaders {
		if v := h.Get(k); v != "" {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// historyLen bounds the fetches webtable.History keeps.
const historyLen = 20

// logFetch prepends e to the page's fetch history.
func (c *Crawler) logFetch(ctx context.Context, tx *percolator.Tx, row string, e webtable.FetchEvent) error {
	old, err := tx.Get(ctx, row, webtable.History)
	if err != nil {
		return err
	}
	var h []webtable.FetchEvent
	if len(old) > 0 {
		_ = json.Unmarshal(old, &h) // a damaged history starts over
	}
	h = append([]webtable.FetchEvent{e}, h[:min(len(h), historyLen-1)]...)
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return tx.Set(row, webtable.History, b)
}
