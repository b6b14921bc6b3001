package serving

import (
	"context"
	"math/bits"

	"github.com/blevesearch/bleve/v2/analysis"
	index "github.com/blevesearch/bleve_index_api"
)

// A page one of whose section headings holds the query's words is about
// them, more than a page that only mentions them: its score is multiplied
// by 1 + headBonus × k/n, where n is the distinct terms of the query's
// plain words and k the most of them one heading holds (at least two, or
// the one word of a one-word query). The headings field keeps each
// heading as its own value (headings in index.go), so a term's positions
// say which heading holds it.
//
// The headings are not a field of the words' BM25 disjunction: Bleve
// scales a disjunction by the share of its clauses that match, so a new
// field there lifts every page with many headings (tutorials, long
// reference pages) for any word one of them holds, which ranked git's
// tutorials above the command pages that answer its questions.
//
// rankSearcher applies the factor with the rank factors, so the fast
// paths (topk.go) bound it as they bound those: 1 + headBonus for the
// documents whose headings hold enough of the terms, 1 for the others.

// headBonus is what a heading holding every term of the query adds to the
// score's factor.
const headBonus = 0.5

// headTerms returns the distinct terms of words as an analyzes them: the
// terms a heading should hold.
func headTerms(an analysis.Analyzer, words []string) []string {
	if an == nil {
		return nil
	}
	var out []string
	seen := make(map[string]bool)
	for _, w := range words {
		for _, t := range an.Analyze([]byte(w)) {
			if s := string(t.Term); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// headMatch tells, document after document in increasing order, how
// many of a query's terms one heading of the document holds at most. It
// is not safe for concurrent use, as a searcher is not.
type headMatch struct {
	// may holds the documents with enough of the terms in their headings
	// for a factor: the others are passed over, and the fast paths bound
	// them without it.
	may   map[uint64]bool
	rs    []index.TermFieldReader
	cur   []*index.TermFieldDoc // each reader's current posting, nil before the first and after the last
	begun []bool
	held  map[uint64]uint64 // scratch: by heading, the terms it holds (bit i: term i)
}

// maxHeadTerms bounds the terms a heading is matched against.
const maxHeadTerms = 64

// openHeads returns the heading matcher of terms over r, or nil when no
// heading holds enough of them for a bonus anywhere.
func openHeads(ctx context.Context, r index.IndexReader, terms []string) (*headMatch, error) {
	if len(terms) == 0 || len(terms) > maxHeadTerms {
		return nil, nil
	}
	h := &headMatch{held: make(map[uint64]uint64)}
	for _, t := range terms {
		tr, err := r.TermFieldReader(ctx, []byte(t), fHeadings, false, false, true)
		if err != nil {
			h.Close()
			return nil, err
		}
		if tr.Count() == 0 {
			_ = tr.Close()
			continue
		}
		h.rs = append(h.rs, tr)
	}
	if len(h.rs) == 0 || (len(terms) > 1 && len(h.rs) < 2) {
		h.Close()
		return nil, nil
	}
	h.cur = make([]*index.TermFieldDoc, len(h.rs))
	h.begun = make([]bool, len(h.rs))
	// The documents with the terms in their headings, from postings read
	// without positions: headings are short and few pages hold a term
	// there, so this is small beside the words' text postings.
	need := min(2, len(terms))
	count := make(map[uint64]int)
	h.may = make(map[uint64]bool)
	for _, t := range terms {
		tr, err := r.TermFieldReader(ctx, []byte(t), fHeadings, false, false, false)
		if err != nil {
			h.Close()
			return nil, err
		}
		var tfd index.TermFieldDoc
		for {
			d, err := tr.Next(tfd.Reset())
			if err != nil {
				_ = tr.Close()
				h.Close()
				return nil, err
			}
			if d == nil {
				break
			}
			n := d.ID.Value()
			if count[n]++; count[n] >= need {
				h.may[n] = true
			}
		}
		_ = tr.Close()
	}
	if len(h.may) == 0 {
		h.Close()
		return nil, nil
	}
	return h, nil
}

// bound is the most document d's factor may be.
func (h *headMatch) bound(d uint64) float64 {
	if h.may[d] {
		return 1 + headBonus
	}
	return 1
}

// factor returns what document d's score is multiplied by for its
// headings, of a query of terms terms; calls come with d increasing.
func (h *headMatch) factor(d uint64, terms int) (float64, error) {
	if !h.may[d] {
		return 1, nil
	}
	clear(h.held)
	best := 0
	for i, r := range h.rs {
		c := h.cur[i]
		if h.begun[i] && (c == nil || c.ID.Value() > d) {
			continue
		}
		if !h.begun[i] || c.ID.Value() < d {
			h.begun[i] = true
			var err error
			if c, err = r.Advance(index.NewIndexInternalID(nil, d), nil); err != nil {
				return 1, err
			}
			h.cur[i] = c
		}
		if c == nil || c.ID.Value() != d {
			continue
		}
		for _, v := range c.Vectors {
			if len(v.ArrayPositions) == 0 {
				continue
			}
			a := v.ArrayPositions[0]
			if h.held[a]&(1<<i) != 0 {
				continue // the term twice in one heading counts once
			}
			h.held[a] |= 1 << i
			best = max(best, bits.OnesCount64(h.held[a]))
		}
	}
	if best == 0 || (terms > 1 && best < 2) {
		return 1, nil
	}
	return 1 + headBonus*float64(best)/float64(terms), nil
}

// Close releases the readers.
func (h *headMatch) Close() {
	for _, r := range h.rs {
		_ = r.Close()
	}
}
