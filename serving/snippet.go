package serving

import (
	"bytes"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
)

// Snippet sizes, in bytes of page text.
const (
	snippetLen     = 240       // the window shown
	snippetLead    = 60        // text kept before the first mark
	snippetScanMax = 256 << 10 // where in a long page the search for marks stops
)

// analyzeTerms returns the index terms of the query's words: what a token
// of the text must analyze to for it to be marked.
func analyzeTerms(an analysis.Analyzer, words []string) map[string]bool {
	terms := make(map[string]bool)
	if an == nil {
		return terms
	}
	for _, w := range words {
		for _, t := range an.Analyze([]byte(w)) {
			terms[string(t.Term)] = true
		}
	}
	return terms
}

// snippet picks the window of text with the most distinct marked terms
// (then the most marks), and splits it into spans. Marks are found by
// analyzing the text like the index does, so "indexes" is marked for the
// query "index". Spans hold raw text; the renderer escapes them.
func snippet(an analysis.Analyzer, text string, terms map[string]bool) []Span {
	return snippetBy(an, text, terms, analyzeNear)
}

// snippetBy is snippet with the analysis of text near terms done by
// analyze.
func snippetBy(an analysis.Analyzer, text string, terms map[string]bool,
	analyze func(analysis.Analyzer, string, map[string]bool) analysis.TokenStream) []Span {
	spans, _ := snippetAtBy(an, text, terms, analyze)
	return spans
}

// snippetAtBy is snippetBy, and every marked token of text (up to
// snippetScanMax) in text order.
func snippetAtBy(an analysis.Analyzer, text string, terms map[string]bool,
	analyze func(analysis.Analyzer, string, map[string]bool) analysis.TokenStream) ([]Span, []*analysis.Token) {
	if text == "" {
		return nil, nil
	}
	scan := text
	if len(scan) > snippetScanMax {
		scan = scan[:snippetScanMax]
	}
	var toks analysis.TokenStream
	if an != nil && len(terms) > 0 {
		toks = analyze(an, scan, terms)
	}
	var hits []*analysis.Token
	for _, t := range toks {
		if terms[string(t.Term)] {
			hits = append(hits, t)
		}
	}
	if len(hits) == 0 {
		return cut(an, text, 0, nil), nil
	}
	best, bestDistinct, bestCount := 0, 0, 0
	for i, h := range hits {
		seen := make(map[string]bool)
		n := 0
		for _, g := range hits[i:] {
			if g.End-h.Start > snippetLen-snippetLead {
				break
			}
			seen[string(g.Term)] = true
			n++
		}
		if len(seen) > bestDistinct || len(seen) == bestDistinct && n > bestCount {
			best, bestDistinct, bestCount = i, len(seen), n
		}
	}
	return cut(an, text, max(hits[best].Start-snippetLead, 0), hits[best:]), hits
}

// analyzeNear returns the tokens of text that may analyze to terms, as
// analyzing all of text gives them: analyzing a page's text (up to
// snippetScanMax) for each of ten hits was four fifths of a query's time.
// A token analyzes to a term only if the token, lower-cased, contains the
// term without its last letter (stemming changes at most that: "replies"
// → "repli", "happy" → "happi"), and no token spans a space, so only the
// space-delimited chunks holding such places are analyzed. Terms with
// letters beyond ASCII, whose lower case may differ in length, make it
// analyze everything.
func analyzeNear(an analysis.Analyzer, text string, terms map[string]bool) analysis.TokenStream {
	var needles [][]byte
	for t := range terms {
		for i := 0; i < len(t); i++ {
			if t[i] >= utf8RuneSelf {
				return an.Analyze([]byte(text))
			}
		}
		if len(t) > 3 {
			t = t[:len(t)-1]
		}
		needles = append(needles, []byte(t))
	}
	lower := asciiLower(text)
	var chunks []int // starts of the chunks to analyze
	for _, n := range needles {
		for at := 0; ; {
			i := bytes.Index(lower[at:], n)
			if i < 0 {
				break
			}
			chunks = append(chunks, bytes.LastIndexByte(lower[:at+i], ' ')+1)
			at += i + len(n)
		}
	}
	slices.Sort(chunks)
	chunks = slices.Compact(chunks)
	var out analysis.TokenStream
	for _, from := range chunks {
		to := len(text)
		if i := strings.IndexByte(text[from:], ' '); i >= 0 {
			to = from + i
		}
		for _, tok := range an.Analyze([]byte(text[from:to])) {
			tok.Start += from
			tok.End += from
			out = append(out, tok)
		}
	}
	return out
}

const utf8RuneSelf = 0x80

// asciiLower returns s with A–Z in lower case, as bytes at the same
// offsets.
func asciiLower(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// cut returns the spans of about snippetLen bytes of text from start,
// moved to a token boundary, with the given hits marked and "…" where text
// was cut.
func cut(an analysis.Analyzer, text string, start int, hits []*analysis.Token) []Span {
	start = wordStart(an, text, start)
	end := min(start+snippetLen, len(text))
	if end < len(text) {
		end = wordEnd(text, end)
	}
	var out []Span
	if start > 0 {
		out = append(out, Span{Text: "…"})
	}
	pos := start
	for _, h := range hits {
		if h.Start < pos || h.End > end {
			continue
		}
		if h.Start > pos {
			out = append(out, Span{Text: text[pos:h.Start]})
		}
		out = append(out, Span{Text: text[h.Start:h.End], Mark: true})
		pos = h.End
	}
	if pos < end {
		out = append(out, Span{Text: text[pos:end]})
	}
	if end < len(text) {
		out = append(out, Span{Text: "…"})
	}
	return out
}

// wordStart moves start to the first token starting at or after it, or to
// the next space, so a snippet never begins inside a word (or a UTF-8
// sequence).
func wordStart(an analysis.Analyzer, text string, start int) int {
	if start <= 0 {
		return 0
	}
	// Tokens never span a space: analyze the words from the one holding
	// start on, one space-delimited chunk at a time.
	for from := strings.LastIndexByte(text[:start], ' ') + 1; an != nil && from < len(text); {
		to := len(text)
		if i := strings.IndexByte(text[from:], ' '); i >= 0 {
			to = from + i
		}
		for _, t := range an.Analyze([]byte(text[from:to])) {
			if from+t.Start >= start {
				return from + t.Start
			}
		}
		from = to + 1
	}
	if i := strings.IndexByte(text[start:], ' '); i >= 0 {
		return start + i + 1
	}
	return len(text)
}

// wordEnd moves end back to a space (or forward to a UTF-8 boundary).
func wordEnd(text string, end int) int {
	if i := strings.LastIndexByte(text[:end], ' '); i > end-40 && i > 0 {
		return i
	}
	for end < len(text) && text[end]&0xC0 == 0x80 {
		end++
	}
	return end
}
