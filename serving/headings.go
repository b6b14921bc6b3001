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

// headMatch tells how many of a query's terms one heading of a document
// holds at most. It reads the terms' heading postings, with their array
// positions (which heading), once when it opens: headings are short and
// few pages hold a term there, so this is small beside the words' text
// postings, and a document's factor is then a lookup that does not
// depend on the order the searchers ask in (the fast paths bound and
// score documents in passes of their own). It is safe for concurrent
// reads once open.
type headMatch struct {
	// best holds, for the documents with enough of the terms in one
	// heading for a factor, the most terms one heading holds; the
	// others are passed over, and the fast paths bound them without it.
	best map[uint64]int
}

// maxHeadTerms bounds the terms a heading is matched against.
const maxHeadTerms = 64

// openHeads returns the heading matcher of terms over r, or nil when no
// heading holds enough of them for a bonus anywhere.
func openHeads(ctx context.Context, r index.IndexReader, terms []string) (*headMatch, error) {
	if len(terms) == 0 || len(terms) > maxHeadTerms {
		return nil, nil
	}
	// held: by document, by heading, the terms it holds (bit i: term i).
	held := make(map[uint64]map[uint64]uint64)
	for i, t := range terms {
		tr, err := r.TermFieldReader(ctx, []byte(t), fHeadings, false, false, true)
		if err != nil {
			return nil, err
		}
		var tfd index.TermFieldDoc
		for {
			d, err := tr.Next(tfd.Reset())
			if err != nil {
				_ = tr.Close()
				return nil, err
			}
			if d == nil {
				break
			}
			n := d.ID.Value()
			for _, v := range d.Vectors {
				if len(v.ArrayPositions) == 0 {
					continue
				}
				if held[n] == nil {
					held[n] = make(map[uint64]uint64)
				}
				held[n][v.ArrayPositions[0]] |= 1 << i
			}
		}
		_ = tr.Close()
	}
	need := min(2, len(terms))
	h := &headMatch{best: make(map[uint64]int)}
	for n, hs := range held {
		best := 0
		for _, b := range hs {
			best = max(best, bits.OnesCount64(b))
		}
		if best >= need {
			h.best[n] = best
		}
	}
	if len(h.best) == 0 {
		return nil, nil
	}
	return h, nil
}

// bound is the most document d's factor may be.
func (h *headMatch) bound(d uint64) float64 {
	if _, ok := h.best[d]; ok {
		return 1 + headBonus
	}
	return 1
}

// factor returns what document d's score is multiplied by for its
// headings, of a query of terms terms.
func (h *headMatch) factor(d uint64, terms int) (float64, error) {
	best, ok := h.best[d]
	if !ok || terms == 0 {
		return 1, nil
	}
	return 1 + headBonus*float64(best)/float64(terms), nil
}

// Close releases what the matcher holds.
func (h *headMatch) Close() {}
