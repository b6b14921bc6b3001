package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caffeine-go/caffeine/webtable"
)

// Sitemap limits. The protocol (sitemaps.org) allows 50,000 URLs and 50 MB
// (52,428,800 bytes) uncompressed a file, and 50,000 sitemaps an index;
// each file is read as a stream within those bounds. An index may list
// further indexes, though the protocol has none: they are followed down
// to maxSitemapDepth files. A host's sitemaps are read for at most
// maxSitemapFiles files and a quarter of Options.LeaseTTL a robots.txt
// refresh (the reading holds the page that fetched robots.txt).
const (
	maxSitemapBytes   = 50 << 20
	maxSitemapEntries = 50000
	maxSitemapFiles   = 500
	maxSitemapDepth   = 3
	// maxSitemapRun bounds the bytes between two '<' of an XML sitemap
	// (a <loc> is at most 2,048 characters): what the XML decoder buffers
	// for one token.
	maxSitemapRun = 1 << 20
	// maxSitemapLine bounds a text sitemap's line; longer lines are
	// skipped unread.
	maxSitemapLine = 8 << 10
	// sitemapBatch is how many URLs go to the frontier at once.
	sitemapBatch = 1000
)

// errSitemapTooLarge is returned for a sitemap past maxSitemapBytes,
// compressed or not; the entries before the limit are kept.
var errSitemapTooLarge = fmt.Errorf("sitemap larger than %d bytes", maxSitemapBytes)

// sitemapKind is what a sitemap file turned out to be.
type sitemapKind int

const (
	sitemapURLs  sitemapKind = iota + 1 // <urlset>
	sitemapIndex                        // <sitemapindex>
	sitemapText                         // a URL a line
)

// sitemapEntry is a <url> or <sitemap> element, or a text sitemap's line.
type sitemapEntry struct {
	loc     string
	lastmod int64 // Unix ms, 0 if absent or unparseable
}

// sitemapFile is a sitemap to read and its depth below the host's
// robots.txt listing or /sitemap.xml.
type sitemapFile struct {
	loc   string
	depth int
}

// readSitemaps feeds a host's sitemaps (its robots.txt Sitemap: lines and
// /sitemap.xml) into the frontier, with each <lastmod> as crawl:hint.
// Pages from sitemaps get depth 1 and must be in the crawl's scope; at
// most Options.MaxSitemapURLs pages new to the table are added (known
// pages get their hints and do not count, so a later refresh goes on
// where this one stopped). Errors are logged and skipped: sitemaps are
// hints.
func (c *Crawler) readSitemaps(ctx context.Context, h *host, listed []string) {
	if c.opt.MaxDepth != 0 && c.opt.MaxDepth < 1 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.opt.LeaseTTL/4)
	defer cancel()
	seen := map[string]bool{}
	var queue []sitemapFile
	push := func(loc string, depth int) {
		if !seen[loc] && len(seen) < maxSitemapFiles {
			seen[loc] = true
			queue = append(queue, sitemapFile{loc, depth})
		}
	}
	for _, loc := range listed {
		push(loc, 0)
	}
	push(h.origin+"/sitemap.xml", 0)
	added := 0
	for len(queue) > 0 && added < c.opt.MaxSitemapURLs {
		f := queue[0]
		queue = queue[1:]
		kind, entries, err := c.fetchSitemap(ctx, f.loc)
		if err != nil {
			msg := "sitemap skipped"
			if len(entries) > 0 {
				msg = "sitemap read in part"
			}
			c.log.Info(msg, "url", f.loc, "entries", len(entries), "err", err)
		}
		var links []link
		for _, e := range entries {
			u, err := webtable.Normalize(e.loc)
			if err != nil {
				continue
			}
			if kind == sitemapIndex {
				if f.depth < maxSitemapDepth-1 {
					push(u, f.depth+1)
				}
				continue
			}
			if !c.scope.contains(u) {
				continue
			}
			if row, err := webtable.Row(u); err == nil {
				links = append(links, link{url: u, row: row, depth: 1, hint: e.lastmod})
			}
		}
		for len(links) > 0 && added < c.opt.MaxSitemapURLs {
			batch := links[:min(len(links), sitemapBatch, c.opt.MaxSitemapURLs-added)]
			links = links[len(batch):]
			n, err := c.enqueue(ctx, batch)
			added += n
			c.stats.discovered.Add(int64(n))
			if err != nil {
				c.log.Info("sitemap links not added", "url", f.loc, "err", err)
				return
			}
		}
		if c.opt.Delay > 0 && len(queue) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(c.opt.Delay):
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// fetchSitemap reads one sitemap or sitemap index (see readSitemap) in
// Options.Timeout. On an error, entries holds what was read before it.
// The entries are kept in memory (at most maxSitemapEntries, from at most
// maxSitemapBytes), so that the time they take to reach the frontier does
// not count against the request's timeout.
func (c *Crawler) fetchSitemap(ctx context.Context, loc string) (kind sitemapKind, entries []sitemapEntry, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("User-Agent", c.opt.UserAgent)
	resp, err := c.plain.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	_, err = readSitemap(resp.Body, maxSitemapEntries, func(k sitemapKind, e sitemapEntry) error {
		kind = k
		entries = append(entries, e)
		return nil
	})
	return kind, entries, err
}

// readSitemap parses a sitemap from r: an XML <urlset> or <sitemapindex>,
// or a text file of a URL a line; gzipped or not, whatever its name or
// Content-Type says (gzip is known by its magic bytes). It calls fn with
// each entry as it is parsed, at most max of them, and stops at the first
// error fn returns. It returns the number of entries
// passed to fn; an error (malformed XML, a file past maxSitemapBytes
// compressed or uncompressed) comes after the entries before it.
func readSitemap(r io.Reader, max int, fn func(sitemapKind, sitemapEntry) error) (int, error) {
	br := bufio.NewReaderSize(&capReader{r: io.LimitReader(r, maxSitemapBytes+1), max: maxSitemapBytes}, maxSitemapLine+2)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(&capReader{r: io.LimitReader(zr, maxSitemapBytes+1), max: maxSitemapBytes}, maxSitemapLine+2)
	}
	// XML starts with '<' after an optional BOM and white space.
	for {
		b, err := br.Peek(1)
		if err != nil {
			if err == io.EOF {
				return 0, errors.New("empty sitemap")
			}
			return 0, err
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			br.ReadByte()
			continue
		}
		if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
			br.Discard(3)
			continue
		}
		if b[0] == '<' {
			return parseSitemap(&runReader{r: br}, max, fn)
		}
		return parseTextSitemap(br, max, fn)
	}
}

// parseSitemap reads <urlset> or <sitemapindex> entries, at most max.
func parseSitemap(r io.Reader, max int, fn func(sitemapKind, sitemapEntry) error) (int, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	var (
		cur   *sitemapEntry
		field string
		text  strings.Builder
		kind  sitemapKind
		n     int
	)
	for n < max {
		tok, err := d.Token()
		if err == io.EOF {
			if kind == 0 {
				return n, errors.New("not a sitemap: no root element")
			}
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("malformed sitemap after %d entries: %w", n, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if kind == 0 {
				switch name {
				case "urlset":
					kind = sitemapURLs
				case "sitemapindex":
					kind = sitemapIndex
				default:
					return 0, fmt.Errorf("not a sitemap: <%s>", name)
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
			if field != "" && text.Len() < maxSitemapLine {
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
					n++
					if err := fn(kind, *cur); err != nil {
						return n, err
					}
				}
				cur = nil
			}
		}
	}
	return n, nil
}

// parseTextSitemap reads a text sitemap: a URL a line, UTF-8. Lines that
// are not an absolute http(s) URL are skipped, and so are lines longer
// than maxSitemapLine.
func parseTextSitemap(br *bufio.Reader, max int, fn func(sitemapKind, sitemapEntry) error) (int, error) {
	n := 0
	long := false
	for n < max {
		line, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			long = true
			continue
		case long:
			long = false // the end of a long line
		default:
			if s := string(bytes.TrimSpace(line)); textSitemapURL(s) {
				n++
				if err := fn(sitemapText, sitemapEntry{loc: s}); err != nil {
					return n, err
				}
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("text sitemap after %d entries: %w", n, err)
		}
	}
	return n, nil
}

// textSitemapURL reports whether a text sitemap's line is a URL to take.
func textSitemapURL(s string) bool {
	if s == "" || len(s) > maxSitemapLine || !utf8.ValidString(s) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// capReader reads from r (an io.LimitReader of max+1 bytes) and fails with
// errSitemapTooLarge past max bytes.
type capReader struct {
	r   io.Reader
	max int64
	n   int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, errSitemapTooLarge
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n - int(c.n-c.max), errSitemapTooLarge
	}
	return n, err
}

// runReader fails when more than maxSitemapRun bytes pass without a '<',
// so that the XML decoder never buffers a token larger than that.
type runReader struct {
	r   io.Reader
	run int
}

func (r *runReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '<'); i >= 0 {
		r.run = n - i - 1
	} else {
		r.run += n
	}
	if r.run > maxSitemapRun {
		return n, fmt.Errorf("more than %d bytes without markup", maxSitemapRun)
	}
	return n, err
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
