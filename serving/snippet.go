package serving

import (
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
	if text == "" {
		return nil
	}
	scan := text
	if len(scan) > snippetScanMax {
		scan = scan[:snippetScanMax]
	}
	var toks analysis.TokenStream
	if an != nil && len(terms) > 0 {
		toks = an.Analyze([]byte(scan))
	}
	var hits []*analysis.Token
	for _, t := range toks {
		if terms[string(t.Term)] {
			hits = append(hits, t)
		}
	}
	if len(hits) == 0 {
		return cut(text, toks, 0, nil)
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
	return cut(text, toks, max(hits[best].Start-snippetLead, 0), hits[best:])
}

// cut returns the spans of about snippetLen bytes of text from start,
// moved to a token boundary, with the given hits marked and "…" where text
// was cut.
func cut(text string, toks analysis.TokenStream, start int, hits []*analysis.Token) []Span {
	start = wordStart(text, toks, start)
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
func wordStart(text string, toks analysis.TokenStream, start int) int {
	if start <= 0 {
		return 0
	}
	for _, t := range toks {
		if t.Start >= start {
			return t.Start
		}
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
