package extract

import (
	"strings"
	"unicode/utf8"
)

// Limits on what a page may make the table store. A value past its limit
// is cut at a rune boundary and ends in Ellipsis (within the limit), so a
// reader sees it was cut; links past MaxLinks, and URLs longer than
// MaxURLBytes, are left out.
const (
	// MaxTitleBytes caps Page.Title (and so TitleCore).
	MaxTitleBytes = 1024
	// MaxDescriptionBytes caps Page.Description.
	MaxDescriptionBytes = 4096
	// MaxAnchorRunes caps each anchor text of a Link (at most 800 bytes);
	// a Link joins at most MaxAnchorsPerLink of them.
	MaxAnchorRunes    = 200
	MaxAnchorsPerLink = 10
	// MaxLinks caps Page.Links: the first MaxLinks distinct targets in
	// document order are kept.
	MaxLinks = 10000
	// MaxURLBytes is the longest link or canonical URL kept (normalized):
	// the sitemap protocol's bound, well under the 4 KiB of a Bigtable
	// row key.
	MaxURLBytes = 2048
	// Ellipsis ends a value cut at its limit.
	Ellipsis = "…"
)

const (
	maxAnchorRunes = MaxAnchorRunes
	maxAnchors     = MaxAnchorsPerLink
	// maxRawLinks bounds the <a href> and <area href> elements read from
	// a page, repeats included: a page repeating one link a million
	// times costs no more than this.
	maxRawLinks = 4 * MaxLinks
	// maxHrefBytes bounds a raw href worth resolving: normalizing can
	// shorten one ("./", spaces), though not by this much in practice.
	maxHrefBytes = 4 * MaxURLBytes
)

// collapseCut returns s with whitespace collapsed, and cut to fit within
// limit bytes with Ellipsis at its end when it is longer.
func collapseCut(s []byte, limit int) string {
	c := collapser{limit: limit}
	c.write(s)
	if !c.full {
		return c.String()
	}
	return markCut(c.String(), limit)
}

// markCut cuts s, which was cut at limit bytes already, to leave room for
// Ellipsis within limit, at a rune boundary, and appends it. A limit too
// small to hold Ellipsis leaves s as it is.
func markCut(s string, limit int) string {
	n := limit - len(Ellipsis)
	if n <= 0 {
		return s
	}
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.TrimRight(s, " ") + Ellipsis
}

// collapseAnchor collapses an anchor text (an alt or title attribute) and
// cuts it as anchorText does.
func collapseAnchor(s []byte) string {
	c := collapser{limit: 4 * maxAnchorRunes}
	c.write(s)
	return anchorText(c.String(), c.full)
}

// anchorText returns s within maxAnchorRunes runes, ending in Ellipsis if
// it is longer or cut is set (s was cut already).
func anchorText(s string, cut bool) string {
	if !cut && utf8.RuneCountInString(s) <= maxAnchorRunes {
		return s
	}
	return truncateRunes(s, maxAnchorRunes-1) + Ellipsis
}
