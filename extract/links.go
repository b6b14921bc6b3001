package extract

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/caffeine-go/caffeine/webtable"
)

const (
	maxAnchorRunes = 200 // per anchor text
	maxAnchors     = 10  // distinct anchor texts kept per target
	anchorSep      = " | "
)

// Link is one outlink of a page.
type Link struct {
	// URL is absolute and normalized by webtable: the crawler's key for it.
	URL string
	// Anchor is the link's text (whitespace collapsed; else the alt of an
	// image in it; else its title attribute), at most 200 runes. When the
	// page links to URL several times, the distinct non-empty texts are
	// joined with " | ", at most 10 of them, in document order.
	Anchor string
}

// rawLink is an <a href> or <area href> as found, before resolution.
type rawLink struct {
	href   string
	anchor string
}

// relNoFollow reports whether a rel attribute asks not to follow the link.
func relNoFollow(rel []byte) bool {
	for _, tok := range strings.Fields(string(rel)) {
		switch strings.ToLower(tok) {
		case "nofollow", "ugc", "sponsored":
			return true
		}
	}
	return false
}

// relHas reports whether the space-separated rel contains tok
// (case-insensitively).
func relHas(rel []byte, tok string) bool {
	for _, t := range strings.Fields(string(rel)) {
		if strings.EqualFold(t, tok) {
			return true
		}
	}
	return false
}

// cleanHref does what the WHATWG URL parser does before parsing and Go's
// does not: strip leading and trailing C0 controls and spaces, and remove
// tabs and newlines anywhere.
func cleanHref(h []byte) string {
	i, j := 0, len(h)
	for i < j && h[i] <= ' ' {
		i++
	}
	for j > i && h[j-1] <= ' ' {
		j--
	}
	h = h[i:j]
	for _, c := range h {
		if c == '\t' || c == '\n' || c == '\r' {
			return strings.Map(func(r rune) rune {
				if r == '\t' || r == '\n' || r == '\r' {
					return -1
				}
				return r
			}, string(h))
		}
	}
	return string(h)
}

// resolver turns hrefs into normalized absolute URLs, remembering answers
// since pages repeat hrefs.
type resolver struct {
	base *url.URL
	memo map[string]string // href → URL, "" if unusable
}

func (r *resolver) resolve(href string) string {
	if u, ok := r.memo[href]; ok {
		return u
	}
	u, err := webtable.Resolve(r.base, href)
	if err != nil {
		u = ""
	} else {
		u = fixedPoint(u)
	}
	r.memo[href] = u
	return u
}

// fixedPoint returns u if webtable.Normalize leaves it as it is, else
// normalizes it again until it does (a few rounds at most), or "" if it
// does not settle. One round is not always enough: "%2E%2E" path segments
// are decoded to ".." after dot-segment removal, and a host like "%25"
// comes out unparsable. Callers need a URL that is its own key.
func fixedPoint(u string) string {
	if !suspect(u) {
		return u
	}
	for range 3 {
		n, err := webtable.Normalize(u)
		if err != nil || !utf8.ValidString(n) {
			return ""
		}
		if n == u {
			return u
		}
		u = n
	}
	return ""
}

// suspect reports whether u holds anything that a second normalization
// could change: percent-escapes, non-ASCII, spaces or controls, dot
// segments (left behind by decoding "%2E"), and IPv6 hosts (a host of ":"
// comes out as the unparsable "[:]"). Plain URLs skip the extra parse.
func suspect(u string) bool {
	for i := 0; i < len(u); i++ {
		if c := u[i]; c == '%' || c == '[' || c <= ' ' || c >= 0x7f || c == '.' && i > 0 && u[i-1] == '/' {
			return true
		}
	}
	return false
}

// links resolves raw in order, drops the unusable, self-links and repeats,
// and joins the anchors of repeats.
func (r *resolver) links(raw []rawLink, self string) []Link {
	if len(raw) == 0 {
		return nil
	}
	type target struct {
		url     string
		anchors []string
	}
	var out []target
	index := make(map[string]int, len(raw))
	for _, rl := range raw {
		u := r.resolve(rl.href)
		if u == "" || u == self {
			continue
		}
		i, ok := index[u]
		if !ok {
			i = len(out)
			index[u] = i
			out = append(out, target{url: u})
		}
		t := &out[i]
		if rl.anchor == "" || len(t.anchors) >= maxAnchors {
			continue
		}
		dup := false
		for _, a := range t.anchors {
			if a == rl.anchor {
				dup = true
				break
			}
		}
		if !dup {
			t.anchors = append(t.anchors, rl.anchor)
		}
	}
	if len(out) == 0 {
		return nil
	}
	links := make([]Link, len(out))
	for i, t := range out {
		links[i] = Link{URL: t.url, Anchor: strings.Join(t.anchors, anchorSep)}
	}
	return links
}
