package crawl

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/robots"
	"github.com/caffeine-go/caffeine/webtable"
)

// job is one claimed page on its way through a worker: what the claim read
// from its row, then what the fetch found.
type job struct {
	url, row string
	dueKey   string // its frontier index row
	due      int64  // the due time in dueKey
	lease    []byte
	host     *host
	undo     func() // gives the host slot back if the page is not fetched
	claimed  bool   // the claim transaction leased the page to us

	slot      *hostSlot // the host reserved across processes; nil if not
	sent      time.Time // when the last request to the host went out; zero if none
	holdUntil time.Time // a Retry-After keeps the host off until then

	depth, hops, fails int
	interval           time.Duration // 0: never fetched
	etag, lastMod      string
	bodySum, textSum   string
	prevCode           int
	fetched            bool // fetched before (has fetch:status)

	res result
}

// result is what one fetch of a page found.
type result struct {
	status    int         // 0 when there was no response
	header    http.Header // nil when there was no response
	body      []byte      // raw bytes as received, at most MaxBodySize
	truncated bool
	keep      bool  // body is captured below colly (colly's copy may differ)
	err       error // why there is no usable response
	permanent bool  // err is not worth a retry soon (robots, refused address)

	// Of a 2xx response, read by extract (see result.extract):
	html    bool           // extract.IsHTML: the body was read as HTML
	links   []extract.Link // outlinks, absolute and normalized; none when nofollow
	textSum string         // hash of the visible text (HTML only)

	redirect string // normalized Location of a 3xx

	at   time.Time      // when the response headers arrived; the fetch time
	resp *http.Response // the response as the transport gave it (for the WARC writer); nil without one

	// release gives back the share of the memory budget a large body
	// holds from its fetch until its page is written (see largeBody);
	// nil when it holds none.
	release func()
}

// largeBody is the size past which a body being fetched holds its share
// of the memory budget (internal/budget.Hold) for itself, its extraction
// and the write of its page (the loader's transaction copies the body,
// and the table encodes it once more for its value log): as declared by
// Content-Length, else for the most a body may be once it has read this
// much. Smaller bodies hold theirs only while they are extracted, so
// pages of usual sizes never wait for one.
const largeBody = 1 << 20

// hold takes the budget's share for a body of n bytes and its extraction,
// unless r holds one already.
func (r *result) hold(n int64) {
	if r.release == nil {
		r.release, _ = budget.Hold(context.Background(), extract.MemoryCost*n)
	}
}

// done gives back what r holds of the memory budget.
func (r *result) done() {
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

// fetcher fetches pages with one colly collector in synchronous mode, so
// that the crawler's own worker pool (not colly's unbounded async
// goroutines) bounds concurrency. Each worker owns one; it is not safe for
// concurrent use.
type fetcher struct {
	c   *colly.Collector
	cur *result // the fetch in progress, filled by colly's callbacks
}

func (c *Crawler) newFetcher(ctx context.Context) *fetcher {
	f := &fetcher{}
	cc := colly.NewCollector(
		colly.UserAgent(c.opt.UserAgent),
		colly.AllowURLRevisit(), // the table is the visited set
		colly.IgnoreRobotsTxt(), // robots.txt is ours: cached with expiry, Crawl-delay
		colly.ParseHTTPErrorResponse(),
		colly.MaxBodySize(0), // the tap limits and marks truncation
		colly.StdlibContext(ctx),
	)
	cc.SetClient(&http.Client{
		Transport: &tap{base: c.transport, f: f, max: c.opt.MaxBodySize},
		Timeout:   c.opt.Timeout,
		// Each redirect target is fetched as its own URL.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	})
	// colly only fetches: with no OnHTML or OnXML callback it parses
	// nothing, and the body is read by package extract after the fetch.
	cc.OnResponse(func(r *colly.Response) {
		f.cur.status = r.StatusCode
		f.cur.header = *r.Headers
		if !f.cur.keep {
			f.cur.body = r.Body
		}
	})
	f.c = cc
	return f
}

// fetch makes one request for j, conditional when j has validators. A
// large body's result holds its share of the memory budget: the caller
// gives it back (done) once the page is written.
func (f *fetcher) fetch(j *job) result {
	f.cur = &result{}
	defer func() { f.cur = nil }()
	hdr := http.Header{}
	hdr.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	if j.bodySum != "" {
		if j.etag != "" {
			hdr.Set("If-None-Match", j.etag)
		}
		if j.lastMod != "" {
			hdr.Set("If-Modified-Since", j.lastMod)
		}
	}
	err := f.c.Request(http.MethodGet, j.url, nil, colly.NewContext(), hdr)
	r := *f.cur
	if err != nil && r.header == nil {
		r.done()
		r = result{err: err, permanent: errors.Is(err, ErrPrivateAddress)}
	}
	r.read(j.url)
	return r
}

// read reads what the loader needs of a response to pageURL: a 2xx
// body's links and text sum, a 3xx's target. Fetches and WARC records
// (see Importer) go through it alike.
func (r *result) read(pageURL string) {
	if r.status/100 == 2 {
		r.extract(pageURL)
	}
	if r.status/100 == 3 {
		if loc := r.header.Get("Location"); loc != "" {
			base, _ := url.Parse(pageURL)
			r.redirect, _ = webtable.Resolve(base, loc)
		}
	}
}

// tap limits a response body to max bytes, marks the result truncated when
// more was on offer, and keeps the raw bytes (colly may transcode its copy
// to UTF-8). Reading stops at the limit: a 50 MB body costs max+1 bytes.
type tap struct {
	base http.RoundTripper
	f    *fetcher
	max  int64
}

func (t *tap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	res := t.f.cur
	res.at, res.resp = time.Now(), resp
	// colly's copy of the body is the raw one unless it transcodes it
	// (a declared non-UTF-8 charset) or gunzips it: only then keep ours.
	res.keep = mayTranscode(resp)
	if n := resp.ContentLength; n > 0 && res.keep {
		res.body = make([]byte, 0, min(n, t.max))
	}
	if n := resp.ContentLength; n > largeBody {
		res.hold(min(n, t.max))
	}
	resp.Body = &capture{rc: resp.Body, res: res, left: t.max, max: t.max}
	return resp, nil
}

func mayTranscode(resp *http.Response) bool {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if strings.Contains(ct, "gzip") || strings.HasSuffix(strings.ToLower(resp.Request.URL.Path), ".xml.gz") {
		return true
	}
	_, cs, ok := strings.Cut(ct, "charset")
	return ok && !strings.Contains(cs, "utf-8") && !strings.Contains(cs, "utf8")
}

type capture struct {
	rc   io.ReadCloser
	res  *result
	left int64
	max  int64
}

func (b *capture) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := io.ReadFull(b.rc, one[:]); n > 0 {
			b.res.truncated = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.max-b.left > largeBody {
		b.res.hold(b.max) // blocks reading until the share is free
	}
	if b.res.keep {
		b.res.body = append(b.res.body, p[:n]...)
	}
	return n, err
}

func (b *capture) Close() error { return b.rc.Close() }

// retryable reports whether a response is worth an immediate retry.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status < 600
}

// retryAfter parses a Retry-After header (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// process fetches j: robots.txt first, then the page, retrying 5xx and 429
// with backoff. It returns false if ctx ended while it waited (the page
// was not fetched and stays due).
// robots.txt is read with fetchCtx, which outlives ctx: a fetch under way
// when the crawl is stopped completes.
func (c *Crawler) process(ctx, fetchCtx context.Context, f *fetcher, j *job) bool {
	u, _ := url.Parse(j.url)
	if !c.opt.AllowPrivate {
		if err := checkHost(u.Hostname()); err != nil {
			j.res = result{err: err, permanent: true}
			return true
		}
	}
	asked := time.Now()
	rules, fresh, err := c.robotsFor(fetchCtx, j.host)
	if fresh || err != nil {
		j.sent = asked // err may be a cached one: assume a request
	}
	if err != nil {
		j.res = result{err: err, permanent: errors.Is(err, ErrPrivateAddress)}
		return true
	}
	if fresh && !c.opt.NoSitemaps {
		defer c.readSitemaps(ctx, j.host, rules.Sitemaps)
	}
	if !rules.Allowed(robots.Path(u)) {
		j.res = result{err: ErrRobots, permanent: true}
		return true
	}
	for attempt := 0; ; attempt++ {
		sent, err := c.hosts.pace(ctx, j.host)
		if err != nil {
			return false
		}
		j.sent = sent
		j.res.done() // a retry's earlier response
		j.res = f.fetch(j)
		if c.archive != nil && j.res.resp != nil {
			c.archive.add(j.url, &j.res)
		}
		if !retryable(j.res.status) {
			return true
		}
		wait := c.opt.RetryBackoff << attempt
		if ra, ok := retryAfter(j.res.header, time.Now()); ok {
			wait = ra
			j.holdUntil = time.Now().Add(ra)
			c.hosts.backOff(j.host, j.holdUntil)
		}
		if attempt >= c.opt.Retries || wait > c.opt.MaxRetryWait {
			return true
		}
		c.log.Debug("retrying", "url", j.url, "status", j.res.status, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// parseLinks returns the links of j's page that are in scope and depth.
// They come from extract, resolved, normalized and without repeats.
func (c *Crawler) parseLinks(j *job) []link {
	r := &j.res
	if r.status/100 != 2 || len(r.links) == 0 || (c.opt.MaxDepth > 0 && j.depth+1 > c.opt.MaxDepth) {
		return nil
	}
	out := make([]link, 0, len(r.links))
	for _, l := range r.links {
		if !c.scope.contains(l.URL) {
			continue
		}
		row, err := webtable.Row(l.URL)
		if err != nil {
			continue
		}
		out = append(out, link{url: l.URL, row: row, depth: j.depth + 1})
	}
	return out
}
