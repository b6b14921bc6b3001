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

// bookPlace is the word in front of a chapter's number: "Chapter 64. ".
var bookPlace = regexp.MustCompile(`^(chapter|part|appendix|section) (?:[0-9ivxlc]+|[a-z])\b`)

// anchorKey is an anchor or title reduced for comparison: lower case,
// no surrounding punctuation, no section number.
func anchorKey(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = sectionNumber.ReplaceAllString(strings.TrimPrefix(bookPlace.ReplaceAllString(s, ""), " "), "")
	return strings.TrimFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// shownAnchors picks the anchor texts worth showing: no navigation words,
// numbers, references or book places ("[19]", "2", "»", "Chapter 12"), no
// repeats of the title or of each other (ignoring case and section
// numbers), none of the page's own sections, at most maxAnchorsShown and
// maxAnchorsLen runes in all.
//
// An anchor with " | " joins the texts of several links from one page to
// this one (extract.Link): a table of contents links to the page, then to
// its sections (page#fragment), which name what is in the page, not the
// page. Only the first text, after navigation words, is kept:
// "9.27. System Administration Functions | 9.27.1. Configuration Settings
// Functions | …" is the title, and shows nothing. A text numbered under
// the title's number ("9.27.1. …" under "9.27. …") is a section too.
func shownAnchors(anchors []string, title string) []string {
	var out []string
	seen := map[string]bool{anchorKey(title): true}
	own := ownSections(title)
	room := maxAnchorsLen
	for _, a := range anchors {
		a = firstPart(withoutNav(strings.Join(strings.Fields(a), " ")))
		key := anchorKey(a)
		if key == "" || navAnchors[key] || seen[key] || !hasLetter(key) || numbered.MatchString(key) || own(a) {
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

// firstPart returns the first of the texts an anchor joins with "|".
func firstPart(a string) string {
	first, _, _ := strings.Cut(a, "|")
	return strings.TrimSpace(first)
}

// sectionNum is a section number in front of a title: "9.27." of "9.27.
// System Administration Functions", "I.1." of "I.1. Getting the Source".
var sectionNum = regexp.MustCompile(`^([0-9IVXLCivxlcA-Z]+(?:\.[0-9]+)*)\.?\s`)

// ownSections returns a test for anchors numbered under title's section
// number: "9.27.1. Configuration Settings Functions" under "9.27. System
// Administration Functions". Without a number in the title, none is.
func ownSections(title string) func(string) bool {
	m := sectionNum.FindStringSubmatch(strings.TrimSpace(title))
	if m == nil || !strings.ContainsAny(m[1], "0123456789") {
		return func(string) bool { return false }
	}
	prefix := m[1] + "."
	return func(a string) bool {
		return strings.HasPrefix(a, prefix) && len(a) > len(prefix) && a[len(prefix)] >= '0' && a[len(prefix)] <= '9'
	}
}
