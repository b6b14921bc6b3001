package crawl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/internal/robots"
)

// host is the politeness state of one origin (scheme, host, port): the
// requests in flight, when the next may start, and its robots.txt.
type host struct {
	key    string // webtable.HostOfRow of its pages
	origin string // scheme://host[:port]

	// Guarded by hosts.mu.
	inflight   int
	nextAt     time.Time
	lastSent   time.Time // when the last request to the host went out
	crawlDelay time.Duration
	robotsSeen bool // robots.txt was read once: parallelism may exceed 1
	slot       int  // the request slot to try first across processes (see polite.go)

	robotsMu  sync.Mutex // guards the fields below; held while robots.txt is fetched
	robots    *robots.Rules
	robotsErr error
	robotsExp time.Time
}

// hosts tracks politeness per origin. Its memory is bounded: past max
// entries, idle hosts are dropped (and re-read robots.txt when they come
// back).
type hosts struct {
	mu  sync.Mutex // guards m and every host's politeness fields
	m   map[string]*host
	max int
	opt *Options
}

func newHosts(opt *Options) *hosts {
	return &hosts{m: make(map[string]*host), max: opt.MaxHosts, opt: opt}
}

func (hs *hosts) get(key, origin string) *host {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.m[key]
	if h == nil {
		if len(hs.m) >= hs.max {
			now := time.Now()
			for k, o := range hs.m {
				if o.inflight == 0 && now.After(o.nextAt) {
					delete(hs.m, k)
				}
			}
		}
		h = &host{key: key, origin: origin}
		hs.m[key] = h
	}
	return h
}

// delay is the least gap between request starts on h. Call with mu held.
func (hs *hosts) delay(h *host) time.Duration {
	return max(hs.opt.Delay, min(h.crawlDelay, hs.opt.MaxCrawlDelay))
}

// par is the most requests in flight to h. Call with mu held.
func (hs *hosts) par(h *host) int {
	if !h.robotsSeen || h.crawlDelay > 0 {
		return 1 // until robots.txt says otherwise, and always with a Crawl-delay
	}
	return hs.opt.Parallel
}

// delayOf is delay for callers without mu.
func (hs *hosts) delayOf(h *host) time.Duration {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.delay(h)
}

// sharedSlot tells how to reserve h across processes: with what delay,
// among how many slots, trying which first; need is false when there is
// nothing to reserve (no delay, and robots.txt read).
func (hs *hosts) sharedSlot(h *host) (delay time.Duration, par, hint int, need bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delay, par = hs.delay(h), hs.par(h)
	if delay <= 0 && h.robotsSeen {
		return 0, 0, 0, false
	}
	hint = h.slot % par
	h.slot++
	return delay, par, hint, true
}

// acquire takes a request slot on h if it has one now; otherwise it
// returns when to try again (zero when a slot frees only as a fetch ends).
// undo gives an unused slot back.
func (hs *hosts) acquire(h *host, now time.Time) (ok bool, retry time.Time, undo func()) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h.inflight >= hs.par(h) {
		return false, time.Time{}, nil
	}
	if now.Before(h.nextAt) {
		return false, h.nextAt, nil
	}
	prev := h.nextAt
	h.inflight++
	h.nextAt = now.Add(hs.delay(h))
	set := h.nextAt
	return true, time.Time{}, func() {
		hs.mu.Lock()
		h.inflight--
		if h.nextAt.Equal(set) { // nothing started after us
			h.nextAt = prev
		}
		hs.mu.Unlock()
	}
}

// pace waits until h's delay has passed since the last request to it
// went out and returns the time this one goes out. A slot is taken
// (acquire) before the page's claim, and claims take their time: without
// pace a slow claim followed by a quick one brought two requests closer
// than the delay.
func (hs *hosts) pace(ctx context.Context, h *host) (time.Time, error) {
	for {
		hs.mu.Lock()
		now := time.Now()
		d := hs.delay(h)
		wait := h.lastSent.Add(d).Sub(now)
		if wait <= 0 || d <= 0 {
			h.lastSent = now
			if next := now.Add(d); next.After(h.nextAt) {
				h.nextAt = next
			}
			hs.mu.Unlock()
			return now, nil
		}
		hs.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, ctx.Err()
		case <-t.C:
		}
	}
}

// finish gives the slot back.
func (hs *hosts) finish(h *host) {
	hs.mu.Lock()
	h.inflight--
	hs.mu.Unlock()
}

// backOff keeps requests to h away until t (429, 503 with Retry-After).
func (hs *hosts) backOff(h *host, t time.Time) {
	hs.mu.Lock()
	if t.After(h.nextAt) {
		h.nextAt = t
	}
	hs.mu.Unlock()
}

// robotsFor returns h's robots.txt rules for the crawler, fetching them
// when they are missing or expired; fresh reports a fetch (so the caller
// reads the sitemaps). An unreachable robots.txt (no answer, 5xx, 429) is
// an error, which disallows every page and is retried after a minute.
func (c *Crawler) robotsFor(ctx context.Context, h *host) (r *robots.Rules, fresh bool, err error) {
	h.robotsMu.Lock()
	defer h.robotsMu.Unlock()
	if time.Now().Before(h.robotsExp) {
		return h.robots, false, h.robotsErr
	}
	r, err = c.fetchRobots(ctx, h.origin)
	if err != nil {
		h.robots, h.robotsErr, h.robotsExp = nil, err, time.Now().Add(time.Minute)
		return nil, false, err
	}
	h.robots, h.robotsErr, h.robotsExp = r, nil, time.Now().Add(c.opt.RobotsTTL)
	c.hosts.mu.Lock()
	h.crawlDelay, h.robotsSeen = r.CrawlDelay, true
	// The fetch that follows started under the old delay.
	if next := time.Now().Add(c.hosts.delay(h)); next.After(h.nextAt) {
		h.nextAt = next
	}
	c.hosts.mu.Unlock()
	return r, true, nil
}

// fetchRobots reads origin's robots.txt as RFC 9309 says: a 2xx body is
// parsed (up to robots.MaxSize), a 4xx or a redirect past the fifth
// allows every page, a 5xx or 429 is an error (see robots.FromStatus).
func (c *Crawler) fetchRobots(ctx context.Context, origin string) (*robots.Rules, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/robots.txt", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.opt.UserAgent)
	resp, err := c.plain.Do(req)
	if err != nil {
		return nil, fmt.Errorf("robots.txt: %w", err)
	}
	defer resp.Body.Close()
	at := time.Now()
	// One byte past the limit tells Parse whether the limit cut a line.
	body, err := io.ReadAll(io.LimitReader(resp.Body, robots.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("robots.txt: %w", err)
	}
	if c.archive != nil {
		// Archived as wget and Heritrix do; an import skips it.
		kept := body[:min(len(body), robots.MaxSize)]
		c.archive.add(resp.Request.URL.String(), &result{status: resp.StatusCode, header: resp.Header, body: kept, truncated: len(body) > len(kept), at: at, resp: resp})
	}
	return robots.FromStatus(resp.StatusCode, body, c.token)
}
