package serving

import (
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/caffeine-go/caffeine/webtable"
)

// A result links to the section of its page that answers the query, when
// the page has sections (webtable.Doc.Sections: headings with a
// fragment), and shows a snippet of that section's text.

// topSection is how far into the text a page's first section may begin
// and still be the page's top: linking to it says nothing.
const topSection = 200

// resultSection returns the section of a hit's page that answers the
// query and the snippet to show. The section is the first whose heading
// holds every term; else the one whose text holds the most distinct terms
// among hits (the marked tokens of the page's text), then the most in its
// heading, then the most marks. Its snippet is of its own text when that
// has marks, else spans. sec is nil, and spans stays, when the page as a
// whole answers: its title holds every term, the text before its sections
// or its first section at its top holds the most, or it has no sections.
func resultSection(an analysis.Analyzer, analyze func(analysis.Analyzer, string, map[string]bool) analysis.TokenStream, title, text string, secs []webtable.Section, terms map[string]bool, spans []Span, hits []*analysis.Token) (sec *webtable.Section, snip []Span) {
	if len(secs) == 0 || len(terms) == 0 || an == nil || holds(an, title, terms) == len(terms) {
		return nil, spans
	}
	headN := headingTerms(an, analyze, secs, terms)
	for i := range secs {
		if headN[i] < len(terms) {
			continue
		}
		if pageTop(secs, i) {
			return nil, spans
		}
		return sectionSnippet(an, analyze, text, secs, i, terms, spans)
	}
	// The text before the first section (index -1) competes too: the
	// page's own introduction.
	best, bestDistinct, bestHead, bestCount := -1, 0, 0, 0
	h := 0
	for i := -1; i < len(secs); i++ {
		start, end := 0, len(text)
		if i >= 0 {
			start = secs[i].At
		}
		if i+1 < len(secs) {
			end = secs[i+1].At
		}
		for h < len(hits) && hits[h].Start < start {
			h++
		}
		seen, n := make(map[string]bool), 0
		for ; h < len(hits) && hits[h].Start < end; h++ {
			seen[string(hits[h].Term)] = true
			n++
		}
		head := 0
		if i >= 0 {
			head = headN[i]
		}
		switch {
		case i < 0, len(seen) > bestDistinct,
			len(seen) == bestDistinct && head > bestHead,
			len(seen) == bestDistinct && head == bestHead && n > bestCount:
			best, bestDistinct, bestHead, bestCount = i, len(seen), head, n
		}
	}
	if best < 0 || pageTop(secs, best) {
		return nil, spans
	}
	return sectionSnippet(an, analyze, text, secs, best, terms, spans)
}

// sectionSnippet returns secs[i] and a snippet of its own text (its
// heading left out), else spans; nil and spans when its place in text is
// not where a section can be.
func sectionSnippet(an analysis.Analyzer, analyze func(analysis.Analyzer, string, map[string]bool) analysis.TokenStream,
	text string, secs []webtable.Section, i int, terms map[string]bool, spans []Span) (*webtable.Section, []Span) {
	s := secs[i]
	end := len(text)
	if i+1 < len(secs) {
		end = secs[i+1].At
	}
	if s.At < 0 || s.At > end || end > len(text) {
		return nil, spans
	}
	body := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text[s.At:end]), s.Heading))
	if own, hits := snippetAtBy(an, body, terms, analyze); len(hits) > 0 {
		spans = own
	}
	return &secs[i], spans
}

// headingTerms returns how many distinct terms each section's heading
// holds. The headings are analysed as one text, by analyze (analyzeNear
// passes over the words that cannot hold a term): a page has up to
// extract.MaxSections of them, and every result of a page is one.
func headingTerms(an analysis.Analyzer, analyze func(analysis.Analyzer, string, map[string]bool) analysis.TokenStream,
	secs []webtable.Section, terms map[string]bool) []int {
	var b strings.Builder
	starts := make([]int, len(secs)) // where each heading begins in b
	for i, s := range secs {
		starts[i] = b.Len()
		b.WriteString(s.Heading)
		b.WriteString("\n")
	}
	n := make([]int, len(secs))
	seen := make([]map[string]bool, len(secs))
	for _, t := range analyze(an, b.String(), terms) {
		if !terms[string(t.Term)] {
			continue
		}
		i := sort.SearchInts(starts, t.Start+1) - 1
		if seen[i] == nil {
			seen[i] = make(map[string]bool)
		}
		if !seen[i][string(t.Term)] {
			seen[i][string(t.Term)] = true
			n[i]++
		}
	}
	return n
}

// holds returns how many distinct terms s holds.
func holds(an analysis.Analyzer, s string, terms map[string]bool) int {
	seen := make(map[string]bool)
	for _, t := range an.Analyze([]byte(s)) {
		if terms[string(t.Term)] {
			seen[string(t.Term)] = true
		}
	}
	return len(seen)
}

// pageTop reports whether secs[i] is the page's first section, at its top.
func pageTop(secs []webtable.Section, i int) bool {
	return i == 0 && secs[0].At < topSection
}
