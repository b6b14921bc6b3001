package web

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Anchors a result shows under "Linked as": one line at most.
const (
	maxAnchorsShown = 3  // anchor texts shown; the API has all
	maxAnchorsLen   = 90 // runes of anchor text on the line
)

// navAnchors are anchor texts that say where a link goes in a site, not
// what the page is about.
var navAnchors = map[string]bool{
	"next": true, "previous": true, "prev": true, "up": true, "home": true, "top": true,
	"back": true, "forward": true, "index": true, "contents": true, "table of contents": true,
	"next page": true, "previous page": true, "back to top": true, "go to top": true,
	"more": true, "read more": true, "here": true, "click here": true, "link": true, "this": true,
	"permalink": true, "source": true, "edit": true, "skip to content": true, "skip to main content": true,
}

// shownAnchors picks the anchor texts worth showing: no navigation words,
// numbers or references ("[19]", "2", "»"), no repeats (ignoring case), at
// most maxAnchorsShown and maxAnchorsLen runes in all.
func shownAnchors(anchors []string) []string {
	var out []string
	seen := make(map[string]bool)
	room := maxAnchorsLen
	for _, a := range anchors {
		a = strings.Join(strings.Fields(a), " ")
		key := strings.ToLower(strings.TrimFunc(a, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }))
		if key == "" || navAnchors[key] || seen[key] || !hasLetter(key) {
			continue
		}
		n := utf8.RuneCountInString(a)
		if n > room && len(out) > 0 {
			break
		}
		seen[key] = true
		out = append(out, clip(a, room))
		room -= min(n, room)
		if len(out) == maxAnchorsShown || room <= 0 {
			break
		}
	}
	return out
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }
