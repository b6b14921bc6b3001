package extract

import (
	"net/url"
	"strings"

	"github.com/caffeine-go/caffeine/webtable"
)

const anchorSep = " | "

// Link is one outlink of a page.
type Link struct {
	// URL is absolute and normalized by webtable: the crawler's key for it.
	URL string
	// Anchor is the link's text (whitespace collapsed; else the alt of an
	// image in it; else its title attribute), at most MaxAnchorRunes runes
	// (cut ones end in Ellipsis). When the page links to URL several times,
	// the distinct non-empty texts are joined with " | ", at most
	// MaxAnchorsPerLink of them, in document order.
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
	if len(href) > maxHrefBytes {
		return ""
	}
	// Resolve cleans the href as browsers do (spaces and controls around
	// it, tabs and newlines in it) and returns a URL that is its own
	// normal form.
	u, err := webtable.Resolve(r.base, href)
	if err != nil || len(u) > MaxURLBytes {
		u = ""
	}
	r.memo[href] = u
	return u
}

// links resolves raw in order, drops the unusable, self-links and repeats,
// and joins the anchors of repeats. It keeps the first MaxLinks targets.
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
			if len(out) == MaxLinks {
				continue
			}
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
