package serving

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// Spelling suggestions come from the index's own terms: a query word that
// few pages have is replaced by the term of the text field, within one or
// two edits of it, that most pages have. The cost is a dictionary lookup
// per word (a Levenshtein automaton over the term dictionary) and, per
// corrected word, one search for a page with it, to show the word as pages
// write it rather than as its stem. BENCHMARKS.md has the figures.
const (
	// fewHits: a query with at most this many hits gets a suggestion, and
	// a word at most this many pages have may be corrected.
	fewHits = 3
	// farther is how much more common a term two edits away must be than
	// one a single edit away to win.
	farther = 20
	// rarer is how many times more pages than a word that occurs a
	// neighbour must have to replace it.
	rarer = 10
	// surfaceScan is how much of a page's text is read to find how it
	// writes a term.
	surfaceScan = 32 << 10
	// surfacePages is how many pages with a term are read to find the
	// form of it closest to the word typed.
	surfacePages = 5
	// maxCandidates is how many corrections of a word are tried, the
	// most common ones: of those written close enough to it, the one
	// most pages have with the query's other words wins.
	maxCandidates = 3
)

// suggest returns the query with its misspelled words corrected, or ""
// when no word needs it. words are the query's plain words (see plan); q
// is the query as written.
func (ix *Index) suggest(ctx context.Context, q string, words []string) (string, error) {
	if len(words) == 0 {
		return "", nil
	}
	adv, err := ix.bi.Advanced()
	if err != nil {
		return "", err
	}
	r, err := adv.Reader()
	if err != nil {
		return "", err
	}
	defer r.Close()
	fz, ok := r.(index.IndexReaderFuzzy)
	if !ok {
		return "", nil
	}
	an := ix.bi.Mapping().AnalyzerNamed(analyzer)
	if an == nil {
		return "", nil
	}
	out, changed := q, false
	parts := wordParts(an, words)
	for _, w := range parts {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		toks := an.Analyze([]byte(w))
		if len(toks) != 1 || !isWord(w) {
			continue
		}
		term := string(toks[0].Term)
		df, err := docFreq(ctx, r, term)
		if err != nil {
			return "", err
		}
		if df > fewHits {
			continue
		}
		cands, err := neighbours(ctx, r, fz, an, w, term, df)
		if err != nil {
			return "", err
		}
		// The best candidate whose form as pages write it is as close to
		// w as the edits allow: stems hide distance ("recus" is one edit
		// from "refus" as from "recurs", but "recusive" is three from
		// "refuse", one from "recursive").
		// Of those, the one that most pages have next to the query's
		// other words (as a phrase), else with them: "termination
		// handlr" is "termination handler", though more pages say
		// "handle" and "terminate".
		surface, best := "", [2]uint64{}
		before, after := otherTerms(an, parts, w)
		for _, c := range cands[:min(len(cands), maxCandidates)] {
			form := c.surface
			if form == "" {
				if form, err = ix.surface(ctx, an, c.term, w); err != nil {
					return "", err
				}
			}
			if form == "" || strings.EqualFold(form, w) || editDistance(strings.ToLower(form), strings.ToLower(w)) > maxEdits(w) {
				continue
			}
			if len(before)+len(after) == 0 {
				surface = form
				break
			}
			n, err := together(ctx, r, ix.bi.Mapping(), before, c.term, after)
			if err != nil {
				return "", err
			}
			if surface == "" || n[0] > best[0] || n[0] == best[0] && n[1] > best[1] {
				surface, best = form, n
			}
		}
		if surface == "" {
			continue
		}
		if s, ok := replaceWord(out, w, surface); ok {
			out, changed = s, true
		}
	}
	if !changed {
		return "", nil
	}
	return out, nil
}

// wordParts returns words with each word the analyzer splits
// (std::unordred_map, a C++ scope) replaced by its parts as written
// (std, unordred_map), which are corrected one by one.
func wordParts(an analysis.Analyzer, words []string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		toks := an.Analyze([]byte(w))
		if len(toks) <= 1 {
			out = append(out, w)
			continue
		}
		for _, t := range toks {
			if 0 <= t.Start && t.Start < t.End && t.End <= len(w) {
				out = append(out, w[t.Start:t.End])
			}
		}
	}
	return out
}

// otherTerms returns the terms of words before and after w, as an
// analyses them.
func otherTerms(an analysis.Analyzer, words []string, w string) (before, after []string) {
	i := slices.Index(words, w)
	for j, o := range words {
		if j == i {
			continue
		}
		for _, t := range an.Analyze([]byte(o)) {
			if j < i {
				before = append(before, string(t.Term))
			} else {
				after = append(after, string(t.Term))
			}
		}
	}
	return before, after
}

// together counts the pages whose text has term with the terms before
// and after it as a phrase, and those that have them all anywhere: how
// often a correction comes with the query's other words, next to them
// first. Each count stops at togetherMax: past it a candidate is common
// enough with the other words, and counting every page costs as much as
// scoring them (a third of the CPU of the judged queries over a million
// documents).
func together(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, before []string, term string, after []string) ([2]uint64, error) {
	var out [2]uint64
	terms := slices.Concat(before, []string{term}, after)
	qs := make([]query.Query, len(terms))
	for i, t := range terms {
		tq := query.NewTermQuery(t)
		tq.SetField(fText)
		qs[i] = tq
	}
	for i, q := range []query.Query{query.NewPhraseQuery(terms, fText), query.NewConjunctionQuery(qs)} {
		n, err := countUpTo(ctx, r, m, q, togetherMax)
		if err != nil {
			return out, fmt.Errorf("serving: suggest: %w", err)
		}
		out[i] = n
	}
	return out, nil
}

// togetherMax is where together stops counting.
const togetherMax = 1000

// countUpTo returns how many documents q matches in r, counting up to max.
func countUpTo(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, q query.Query, max uint64) (uint64, error) {
	s, err := q.Searcher(ctx, r, m, search.SearcherOptions{Score: "none"})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0)}
	var n uint64
	for n < max {
		if n%256 == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
		d, err := s.Next(sctx)
		if err != nil || d == nil {
			return n, err
		}
		n++
		sctx.DocumentMatchPool.Put(d)
	}
	return n, nil
}

// isWord tells a word worth correcting: letters, and underscores between
// them (generate_seires), at least four. Shorter words have too many
// neighbours one edit away ("hot": "host", "hit", "hat") to guess which
// was meant.
func isWord(w string) bool {
	return utf8.RuneCountInString(w) >= 4 && !strings.HasPrefix(w, "_") && !strings.HasSuffix(w, "_") &&
		strings.IndexFunc(w, func(c rune) bool { return !unicode.IsLetter(c) && c != '_' }) < 0
}

// docFreq is how many documents have term in their text.
func docFreq(ctx context.Context, r index.IndexReader, term string) (uint64, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), fText, false, false, false)
	if err != nil {
		return 0, err
	}
	defer tfr.Close()
	return tfr.Count(), nil
}

// neighbour is a candidate correction: an index term, and the word as
// pages write it when known.
type neighbour struct {
	term, surface string
}

// neighbours returns the terms of the text field within one edit of w
// (two for words of seven letters or more; a transposition is one edit)
// that beat df, the one most documents have first. Candidates are the text field's terms near term
// (w's stem) and the words of titles near w itself, which are not stemmed:
// "configuraton" is far from the stem "configur" but one edit from
// "configuration" in a title. A fuzzy dictionary does not count
// documents, so each candidate costs a term lookup; there are few. Bleve's
// automaton counts a transposition as two edits, so it is asked for two
// and the candidates are filtered by editDistance. The
// first letter is kept: typos rarely change it, and fixing it makes the
// automaton's walk of the dictionary much shorter.
func neighbours(ctx context.Context, r index.IndexReader, fz index.IndexReaderFuzzy, an analysis.Analyzer, w, term string, df uint64) ([]neighbour, error) {
	var out []neighbour
	scores := map[string]float64{} // by term
	// A word some pages have is a word: another replaces it only if many
	// more pages have that ("pop" is not "pgp"). A word no page has is
	// replaced by any close one ("aparmor": "apparmor", on 2 pages).
	bestScore := float64(df * rarer)
	if df > 0 {
		bestScore = max(bestScore, fewHits)
	}
	consider := func(field, near string, stemmed bool) error {
		edits := maxEdits(near)
		first, _ := utf8.DecodeRuneInString(near)
		dict, err := fz.FieldDictFuzzy(field, near, 2, string(first))
		if err != nil {
			return fmt.Errorf("serving: suggest %q: %w", near, err)
		}
		defer dict.Close()
		for {
			e, err := dict.Next()
			if err != nil {
				return fmt.Errorf("serving: suggest %q: %w", near, err)
			}
			if e == nil {
				return nil
			}
			d := editDistance(near, e.Term)
			if d == 0 || d > edits {
				continue
			}
			c := neighbour{term: e.Term}
			if !stemmed {
				toks := an.Analyze([]byte(e.Term))
				if len(toks) != 1 || string(toks[0].Term) == term {
					continue
				}
				c = neighbour{term: string(toks[0].Term), surface: e.Term}
			}
			n, err := docFreq(ctx, r, c.term)
			if err != nil {
				return err
			}
			score := float64(n)
			if d > 1 {
				score /= farther
			}
			if _, seen := scores[c.term]; score > bestScore && !seen {
				scores[c.term] = score
				out = append(out, c)
			}
		}
	}
	// Title words first: they come with the word as written, which a
	// text term of the same stem (scored the same) does not replace.
	if err := consider(fTitleWords, strings.ToLower(w), false); err != nil {
		return nil, err
	}
	if err := consider(fText, term, true); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b neighbour) int { return cmp.Compare(scores[b.term], scores[a.term]) })
	return out, nil
}

// maxEdits is how many edits a correction of w may make: one, two for
// words of seven letters or more.
func maxEdits(w string) int {
	if utf8.RuneCountInString(w) >= 7 {
		return 2
	}
	return 1
}

// surface returns term as the text of the pages that have it (the first
// surfacePages of them) writes it, lower case, in the form closest to w
// ("thresholds" for the stem "threshold" and the word "tresholds"), or ""
// if none is found.
func (ix *Index) surface(ctx context.Context, an analysis.Analyzer, term, w string) (string, error) {
	tq := query.NewTermQuery(term)
	tq.SetField(fText)
	w = strings.ToLower(w)
	best, bestD := "", 0
	// The first page usually writes the word one edit from w; the others
	// are read only when it does not.
	for _, span := range [][2]int{{0, 1}, {1, surfacePages - 1}} {
		req := bleve.NewSearchRequestOptions(tq, span[1], span[0], false)
		req.Score = "none"
		req.Fields = []string{fText}
		res, err := ix.bi.SearchInContext(ctx, req)
		if err != nil {
			return "", fmt.Errorf("serving: suggest %q: %w", term, err)
		}
		for _, h := range res.Hits {
			text := str(h.Fields[fText])
			if len(text) > surfaceScan {
				text = text[:surfaceScan]
			}
			for _, t := range an.Analyze([]byte(text)) {
				if string(t.Term) == term && t.Start < t.End && t.End <= len(text) {
					form := strings.ToLower(text[t.Start:t.End])
					if d := editDistance(form, w); best == "" || d < bestD {
						best, bestD = form, d
					}
				}
			}
		}
		if best != "" && bestD <= 1 {
			break
		}
	}
	return best, nil
}

// replaceWord replaces the first whole-word occurrence of w in s.
func replaceWord(s, w, by string) (string, bool) {
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return s, false
		}
		i += from
		j := i + len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[j:])
		if (i == 0 || !wordRune(before)) && (j == len(s) || !wordRune(after)) {
			return s[:i] + by + s[j:], true
		}
		from = j
	}
	return s, false
}

func wordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsNumber(c) }

// editDistance is the optimal string alignment distance between a and b,
// in runes: insertions, deletions, substitutions and transpositions of
// neighbours ("checkpiont") count one edit each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
