package web

import (
	"regexp"
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

// numbered are anchors that only name a place in a book: "Chapter 12",
// "Part IV", "Section 3.2", "Appendix C".
var numbered = regexp.MustCompile(`^(chapter|part|section|appendix|page|step|figure|table|example) [0-9ivxlc.]+$|^[a-z]$`)

// sectionNumber is the numbering in front of a section title: "29.2. ".
var sectionNumber = regexp.MustCompile(`^[0-9ivxlc]+(\.[0-9]+)*\.?\s+`)

// anchorKey is an anchor or title reduced for comparison: lower case,
// no surrounding punctuation, no section number.
func anchorKey(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = sectionNumber.ReplaceAllString(s, "")
	return strings.TrimFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// shownAnchors picks the anchor texts worth showing: no navigation words,
// numbers, references or book places ("[19]", "2", "»", "Chapter 12"), no
// repeats of the title or of each other (ignoring case and section
// numbers), at most maxAnchorsShown and maxAnchorsLen runes in all.
func shownAnchors(anchors []string, title string) []string {
	var out []string
	seen := map[string]bool{anchorKey(title): true}
	room := maxAnchorsLen
	for _, a := range anchors {
		a = withoutNav(strings.Join(strings.Fields(a), " "))
		key := anchorKey(a)
		if key == "" || navAnchors[key] || seen[key] || !hasLetter(key) || numbered.MatchString(key) {
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

// withoutNav drops the navigation parts of an anchor whose parts are
// separated by "|", as a navigation bar's links run together: "Prev | Up"
// becomes "", "Next | I.1. Getting the Source" "I.1. Getting the Source".
func withoutNav(a string) string {
	if !strings.Contains(a, "|") {
		return a
	}
	var keep []string
	for _, part := range strings.Split(a, "|") {
		part = strings.TrimSpace(part)
		if k := anchorKey(part); k != "" && !navAnchors[k] {
			keep = append(keep, part)
		}
	}
	return strings.Join(keep, " | ")
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }
