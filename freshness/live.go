package freshness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/robots"
)

// errDisallowed is why a document is skipped when robots.txt forbids the
// refetch.
var errDisallowed = errors.New("disallowed by robots.txt")

// maxCrawlDelay caps a robots.txt Crawl-delay, as the crawler does.
const maxCrawlDelay = time.Minute

// liveFetcher refetches pages politely: one request at a time, robots.txt
// read once per host and obeyed, requests to one host spaced by the larger
// of ProbeOptions.Delay and the host's Crawl-delay. Not safe for concurrent
// use.
type liveFetcher struct {
	opt   *ProbeOptions
	agent string               // robots.txt product token
	hosts map[string]*liveHost // origin → state
}

type liveHost struct {
	robots *robots.Rules
	delay  time.Duration
	last   time.Time // start of the last request
}

// live is one refetch: when it completed, its status, and the content
// hash of an indexable HTML page.
type live struct {
	at        time.Time
	status    int
	hash      string
	indexable bool // a 2xx HTML page without noindex: something the index should hold
}

func newLiveFetcher(opt *ProbeOptions) *liveFetcher {
	return &liveFetcher{opt: opt, agent: robots.Token(opt.UserAgent), hosts: make(map[string]*liveHost)}
}

func (lf *liveFetcher) fetch(ctx context.Context, raw string) (live, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return live{}, fmt.Errorf("bad url %q", raw)
	}
	h, err := lf.host(ctx, u.Scheme+"://"+u.Host)
	if err != nil {
		return live{}, err
	}
	if !h.robots.Allowed(robots.Path(u)) {
		return live{}, errDisallowed
	}
	resp, body, err := lf.get(ctx, h, raw)
	if err != nil {
		return live{}, err
	}
	l := live{at: time.Now(), status: resp.StatusCode}
	if resp.StatusCode/100 != 2 {
		return l, nil
	}
	p, err := extract.HTML(raw, body, resp.Header.Get("Content-Type"), extract.Options{XRobotsTag: strings.Join(resp.Header.Values("X-Robots-Tag"), ", ")})
	if err != nil {
		return l, nil // not HTML: nothing the index would hold
	}
	l.hash, l.indexable = p.Hash, !p.NoIndex
	return l, nil
}

// host returns origin's state, reading its robots.txt the first time.
// robots.txt answers as the crawler reads them (robots.FromStatus): 4xx
// allows everything, 5xx, 429 or no answer forbids everything.
func (lf *liveFetcher) host(ctx context.Context, origin string) (*liveHost, error) {
	if h := lf.hosts[origin]; h != nil {
		return h, nil
	}
	h := &liveHost{delay: lf.opt.Delay}
	resp, body, err := lf.get(ctx, h, origin+"/robots.txt")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		h.robots = robots.DisallowAll()
	} else {
		r, err := robots.FromStatus(resp.StatusCode, body, lf.agent)
		if err != nil {
			r = robots.DisallowAll()
		}
		h.robots = r
		h.delay = max(h.delay, min(r.CrawlDelay, maxCrawlDelay))
	}
	lf.hosts[origin] = h
	return h, nil
}

// get waits out h's delay and GETs u, reading at most MaxBody bytes. The
// delay runs from when the last response's headers arrived (or the request
// failed), so two requests to a host are always at least the delay apart
// however late a goroutine runs.
func (lf *liveFetcher) get(ctx context.Context, h *liveHost, u string) (*http.Response, []byte, error) {
	if wait := time.Until(h.last.Add(h.delay)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("User-Agent", lf.opt.UserAgent)
	resp, err := lf.opt.Client.Do(req)
	h.last = time.Now()
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, lf.opt.MaxBody))
	if err != nil {
		return nil, nil, err
	}
	return resp, body, nil
}
