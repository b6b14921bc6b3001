package crawl

import (
	"compress/gzip"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

// Sitemap limits: the protocol's 50,000 URLs per file, and a bound on the
// files read per host (an index of indexes is not followed further).
const (
	maxSitemapFiles = 64
	maxSitemapDepth = 2
)

// sitemapEntry is a <url> or <sitemap> element.
type sitemapEntry struct {
	loc     string
	lastmod int64 // Unix ms, 0 if absent or unparseable
}

// readSitemaps feeds a host's sitemaps (its robots.txt Sitemap: lines and
// /sitemap.xml) into the frontier, with each <lastmod> as crawl:hint. Pages
// from sitemaps get depth 1. Errors are logged and skipped: sitemaps are
// hints.
func (c *Crawler) readSitemaps(ctx context.Context, h *host, listed []string) {
	if c.opt.MaxDepth != 0 && c.opt.MaxDepth < 1 {
		return
	}
	queue := append([]string(nil), listed...)
	if !containsString(queue, h.origin+"/sitemap.xml") {
		queue = append(queue, h.origin+"/sitemap.xml")
	}
	depth := map[string]int{}
	seen := map[string]bool{}
	urls := 0
	for files := 0; len(queue) > 0 && files < maxSitemapFiles && urls < c.opt.MaxSitemapURLs; files++ {
		loc := queue[0]
		queue = queue[1:]
		if seen[loc] {
			continue
		}
		seen[loc] = true
		isIndex, entries, err := c.fetchSitemap(ctx, loc)
		if err != nil {
			c.log.Debug("sitemap skipped", "url", loc, "err", err)
			continue
		}
		if isIndex {
			if depth[loc] < maxSitemapDepth-1 {
				for _, e := range entries {
					if u, err := webtable.Normalize(e.loc); err == nil {
						depth[u] = depth[loc] + 1
						queue = append(queue, u)
					}
				}
			}
			continue
		}
		var links []link
		for _, e := range entries {
			if urls >= c.opt.MaxSitemapURLs {
				break
			}
			u, err := webtable.Normalize(e.loc)
			if err != nil || !c.scope.contains(u) {
				continue
			}
			row, err := webtable.Row(u)
			if err != nil {
				continue
			}
			urls++
			links = append(links, link{url: u, row: row, depth: 1, hint: e.lastmod})
		}
		n, err := c.enqueue(ctx, links)
		c.stats.discovered.Add(int64(n))
		if err != nil {
			c.log.Info("sitemap links not added", "url", loc, "err", err)
			return
		}
		if c.opt.Delay > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(c.opt.Delay):
			}
		}
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// fetchSitemap reads one sitemap or sitemap index (gzip'd or not),
// streaming, up to MaxBodySize bytes.
func (c *Crawler) fetchSitemap(ctx context.Context, loc string) (index bool, entries []sitemapEntry, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return false, nil, err
	}
	req.Header.Set("User-Agent", c.opt.UserAgent)
	resp, err := c.plain.Do(req)
	if err != nil {
		return false, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var r io.Reader = io.LimitReader(resp.Body, c.opt.MaxBodySize)
	if strings.HasSuffix(req.URL.Path, ".gz") || strings.Contains(resp.Header.Get("Content-Type"), "gzip") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return false, nil, err
		}
		defer zr.Close()
		r = io.LimitReader(zr, c.opt.MaxBodySize)
	}
	return parseSitemap(r, c.opt.MaxSitemapURLs)
}

// parseSitemap reads <urlset> or <sitemapindex> entries, at most max.
func parseSitemap(r io.Reader, max int) (index bool, entries []sitemapEntry, err error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	var cur *sitemapEntry
	var field string
	var text strings.Builder
	root := ""
	for len(entries) < max {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(entries) > 0 {
				break // keep what a truncated file gave
			}
			return false, nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if root == "" {
				root = name
				if name != "urlset" && name != "sitemapindex" {
					return false, nil, fmt.Errorf("not a sitemap: <%s>", name)
				}
				continue
			}
			switch {
			case name == "url" || name == "sitemap":
				cur = &sitemapEntry{}
			case cur != nil && (name == "loc" || name == "lastmod"):
				field = name
				text.Reset()
			}
		case xml.CharData:
			if field != "" {
				text.Write(t)
			}
		case xml.EndElement:
			switch name := t.Name.Local; {
			case name == field && cur != nil:
				v := strings.TrimSpace(text.String())
				if field == "loc" {
					cur.loc = v
				} else {
					cur.lastmod = parseLastmod(v)
				}
				field = ""
			case (name == "url" || name == "sitemap") && cur != nil:
				if cur.loc != "" {
					entries = append(entries, *cur)
				}
				cur = nil
			}
		}
	}
	return root == "sitemapindex", entries, nil
}

// parseLastmod reads a W3C datetime, the sitemap protocol's format.
func parseLastmod(s string) int64 {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli()
		}
	}
	return 0
}
