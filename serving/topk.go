package serving

import (
	"context"
	"math"
	"sort"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// The fast path of ranked searches (topkSearcher). Bleve scores every hit
// of a query, and a common word over a million pages has hundreds of
// thousands: the cost grows with the hits, not with the ten results shown.
// For the commonest shape of a query, one plain word over the text fields
// with their boosts, topkSearcher walks the postings of the word's terms
// itself, bounds each matching document's score from above from its term
// frequencies and norms (BM25 as Bleve computes it, times the document's
// rank factors), and hands a document to Bleve's searcher for its exact
// score only when the bound reaches the lowest of the best k scores found
// so far. A document it passes over cannot enter the top k, so the top k
// are those of the exhaustive search, with the very scores Bleve gives
// them: topkSearcher computes bounds, never scores.
//
// It also stops walking the postings of the body text (by far the
// longest) once a page that has the word only in its text cannot reach
// the top k whatever its rank (MaxScore): the pages with the word in their
// title or anchors are then the candidates, and the text postings are only
// advanced to them. The total stays exact: the text postings' count plus
// the matches without the word in their text.
//
// Two words or more, and their relaxed form, take wordsSearcher
// (topk_words.go). Any other shape (phrases, fields, exclusions, fuzzy
// terms, a word the analyzer splits) runs the whole searcher.

// boundSlack widens every bound: the bound adds the terms of a score in
// another order than Bleve does, which may differ in the last bits.
const boundSlack = 1 + 1e-9

// fastLeaf is a term over one field of the query: its term searcher's
// boost, and what BM25 needs.
type fastLeaf struct {
	r     index.TermFieldReader
	tfd   index.TermFieldDoc
	doc   uint64 // the current posting's document; math.MaxUint64 when done
	begun bool

	w   float64 // boost × idf: the term searcher's query weight over the query norm
	idf float64
	avg float64 // the field's mean length
}

// next moves l to its first posting at or past d.
func (l *fastLeaf) next(d uint64) error {
	if l.begun && l.doc >= d {
		return nil
	}
	var tfd *index.TermFieldDoc
	var err error
	if !l.begun || l.doc+1 == d {
		l.begun = true
		tfd, err = l.r.Next(l.tfd.Reset())
		if err == nil && tfd != nil && tfd.ID.Value() < d {
			tfd, err = l.r.Advance(index.NewIndexInternalID(nil, d), l.tfd.Reset())
		}
	} else {
		tfd, err = l.r.Advance(index.NewIndexInternalID(nil, d), l.tfd.Reset())
	}
	if err != nil {
		return err
	}
	if tfd == nil {
		l.doc = math.MaxUint64
		return nil
	}
	l.doc = tfd.ID.Value()
	return nil
}

// bm25 is the score of the current posting, as Bleve's term scorer
// computes it, over the query norm.
func (l *fastLeaf) bm25() float64 {
	tf := math.Sqrt(float64(l.tfd.Freq))
	fieldLength := 1 / (l.tfd.Norm * l.tfd.Norm)
	return l.w * l.idf * (tf * search.BM25_k1) /
		(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/l.avg)))
}

// max is the most any posting of l scores over the query norm: BM25's
// term frequency part is below k1.
func (l *fastLeaf) max() float64 { return l.w * l.idf * search.BM25_k1 }

// fastShapeOf recognises the query parse makes of one plain word: a
// boolean query whose must is a conjunction of the word over the text
// fields (overFields, one term per field after analysis), with no should
// clause, exclusions nor filters. It returns the word's term in each
// field of boosts, or nil for any other query.
func fastShapeOf(q query.Query, m mapping.IndexMapping) []string {
	b, ok := q.(*query.BooleanQuery)
	if !ok || b.Should != nil || b.MustNot != nil || b.Filter != nil {
		return nil
	}
	c, ok := b.Must.(*query.ConjunctionQuery)
	if !ok || len(c.Conjuncts) != 1 {
		return nil
	}
	return wordTerms(c.Conjuncts[0], m)
}

// analyze returns the terms of text in field, as match queries analyze
// it.
func analyze(m mapping.IndexMapping, field, analyzer, text string) []string {
	if analyzer == "" {
		analyzer = m.AnalyzerNameForPath(field)
	}
	an := m.AnalyzerNamed(analyzer)
	if an == nil {
		return nil
	}
	toks := an.Analyze([]byte(text))
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(t.Term)
	}
	return out
}

// topk is what the fast searchers share: the searcher they hand
// candidates to, and the best k scores it returned.
type topk struct {
	child   *rankSearcher
	q       *rankQuery
	k       int
	best    []float64 // min-heap of the best k scores returned
	childAt uint64    // child's documents before this one are consumed
	seg     int       // the segment of the last document looked at
	id      index.IndexInternalID
	stop    stopper
}

// topkSearcher returns the documents of child, a rankSearcher, that may
// be among the best k; see the top of this file. It ends with all the
// documents child matches counted in q.total.
type topkSearcher struct {
	topk
	// leaves are the word's terms over the fields of boosts, the text
	// last.
	leaves []*fastLeaf
	qnorm  float64 // at least the query norm Bleve's searchers apply

	target   uint64  // the next document to look at
	total    uint64  // matches seen (in lazy mode, those with the word in their title or anchors)
	lazy     bool    // only the title and anchor postings are walked
	lazyFrom float64 // the threshold past which a page with the word in its text alone cannot enter the top k
	noText   uint64  // matches seen without the word in their text
	done     bool
}

// newTopK returns the fast searcher of q, a query of the word of terms
// (fastShapeOf), over is, or nil when Bleve would not score it with BM25
// (then rs runs alone).
func newTopK(ctx context.Context, q *rankQuery, terms []string, is *scorch.IndexSnapshot, rs *rankSearcher) (*topkSearcher, error) {
	s := &topkSearcher{topk: topk{child: rs, q: q, k: q.topK, stop: rs.stop}}
	leaves, err := openLeaves(ctx, is, terms)
	if leaves == nil || err != nil {
		return nil, err
	}
	s.leaves = leaves
	var weights float64
	for _, l := range leaves {
		weights += l.w * l.w
	}
	// Bleve's query norm is 1/√(sum of the term searchers' squared
	// weights).
	s.qnorm = boundSlack / math.Sqrt(weights)
	maxF := rs.maxFactor()
	// A page with the word in its text alone scores at most a third (the
	// disjunction's coordination) of the text term's most.
	s.lazyFrom = maxF * s.qnorm * s.text().max() / float64(len(s.leaves)) * boundSlack
	return s, nil
}

// openLeaves returns the leaves of a word's terms, one per field of
// boosts, or nil when Bleve would not score them with BM25 (tf-idf when a
// field is empty).
func openLeaves(ctx context.Context, is *scorch.IndexSnapshot, terms []string) ([]*fastLeaf, error) {
	if cb, ok := ctx.Value(search.GetScoringModelCallbackKey).(search.GetScoringModelCallbackFn); !ok || cb() != index.BM25Scoring {
		return nil, nil
	}
	st, _ := ctx.Value(search.BM25StatsKey).(*search.BM25Stats)
	docCount, err := is.DocCount()
	if err != nil {
		return nil, err
	}
	var leaves []*fastLeaf
	closeAll := func() {
		for _, l := range leaves {
			_ = l.r.Close()
		}
	}
	for i, t := range terms {
		// As Bleve's term searcher (bm25ScoreMetrics) and scorer do.
		field := boosts[i].field
		count, card := float64(docCount), 0
		if st != nil {
			var ok bool
			count = st.DocCount
			if card, ok = st.FieldCardinality[field]; !ok {
				closeAll()
				return nil, nil
			}
		} else if card, err = is.FieldCardinality(field); err != nil {
			closeAll()
			return nil, err
		}
		if count == 0 || card == 0 {
			closeAll()
			return nil, nil // Bleve scores with tf-idf then
		}
		r, err := is.TermFieldReader(ctx, []byte(t), field, true, true, false)
		if err != nil {
			closeAll()
			return nil, err
		}
		df := float64(r.Count())
		idf := math.Log(1 + (count-df+0.5)/(df+0.5))
		leaves = append(leaves, &fastLeaf{r: r, w: boosts[i].boost * idf, idf: idf, avg: math.Ceil(float64(card) / count)})
	}
	return leaves, nil
}

func (s *topkSearcher) text() *fastLeaf { return s.leaves[len(s.leaves)-1] }

func (s *topkSearcher) closeLeaves() {
	for _, l := range s.leaves {
		_ = l.r.Close()
	}
}

// bound returns at least the score child gives document d, on which the
// leaves that have it stand, and false when d is outside the snapshot's
// rank columns.
func (s *topkSearcher) bound(d uint64) (float64, bool) {
	var sum float64
	n := 0
	for _, l := range s.leaves {
		if l.doc == d {
			sum += l.bm25()
			n++
		}
	}
	sum *= float64(n) / float64(len(s.leaves))
	f, ok := s.factor(d)
	return sum * s.qnorm * f * boundSlack, ok
}

// factor returns the rank factors of document d, as rankSearcher applies
// them, and false if d is outside the snapshot.
func (s *topk) factor(d uint64) (float64, bool) {
	o := s.child.cols.offsets
	if s.seg >= len(o) || d < o[s.seg] || (s.seg+1 < len(o) && d >= o[s.seg+1]) {
		s.seg = sort.Search(len(o), func(i int) bool { return o[i] > d }) - 1
	}
	if s.seg < 0 || d-o[s.seg] >= uint64(len(s.child.cols.segs[s.seg].f)) {
		return 0, false
	}
	local := d - o[s.seg]
	f := s.child.cols.segs[s.seg].f[local]
	v := f.rank * f.hub
	if s.child.pref != nil && s.child.pref[s.seg].Contains(uint32(local)) {
		v *= langBoost
	}
	v *= s.child.headBound(d)
	return v, true
}

// threshold returns the lowest of the best k scores, or -1 while there
// are fewer.
func (s *topk) threshold() float64 {
	if len(s.best) < s.k {
		return -1
	}
	return s.best[0]
}

// keep adds a returned score to the best k.
func (s *topk) keep(v float64) { s.best = keepTop(s.best, s.k, v) }

// keepTop adds v to h, a min-heap of the k largest values, and returns
// it.
func keepTop(h []float64, k int, v float64) []float64 {
	if len(h) < k {
		h = append(h, v)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p] <= h[i] {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return h
	}
	if v <= h[0] {
		return h
	}
	h[0] = v
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l] < h[m] {
			m = l
		}
		if r < len(h) && h[r] < h[m] {
			m = r
		}
		if m == i {
			break
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
	return h
}

// next returns the next document, from s.target on, that has the word
// in a field walked, with the leaves that have it standing on it, or
// math.MaxUint64.
func (s *topkSearcher) next() (uint64, error) {
	d := uint64(math.MaxUint64)
	for i, l := range s.leaves {
		if s.lazy && i == len(s.leaves)-1 {
			continue
		}
		if err := l.next(s.target); err != nil {
			return 0, err
		}
		d = min(d, l.doc)
	}
	return d, nil
}

func (s *topkSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	for !s.done {
		if s.stop.stop() {
			s.done = true
			break
		}
		if !s.lazy && s.threshold() > s.lazyFrom {
			s.lazy = true
			s.q.lazy.Store(true)
		}
		d, err := s.next()
		if err != nil {
			return nil, err
		}
		if d == math.MaxUint64 {
			s.done = true
			break
		}
		s.target = d + 1
		s.total++
		x := s.text()
		if err := x.next(d); err != nil { // in lazy mode, it was left behind
			return nil, err
		}
		if x.doc != d {
			s.noText++
		}
		if b, ok := s.bound(d); ok && b < s.threshold() {
			continue
		}
		if d < s.childAt {
			continue // child went past it: not a match
		}
		dm, err := s.hand(ctx, d)
		if err != nil {
			return nil, err
		}
		if dm == nil {
			s.done = true
			break
		}
		return dm, nil
	}
	s.finish()
	return nil, nil
}

// finish records the query's total.
func (s *topkSearcher) finish() {
	total := s.total
	if s.lazy && !s.q.partial.Load() {
		// The text postings, and the matches without the word in their
		// text (all in the title or anchor postings): every match is
		// one or the other.
		total = s.text().r.Count() + s.noText
	}
	s.q.total.Store(total)
	s.q.fast.Store(true)
}

func (s *topkSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	if v := id.Value(); v > s.target {
		s.target = v
	}
	return s.Next(ctx)
}

func (s *topkSearcher) Close() error {
	s.closeLeaves()
	return s.child.Close()
}

// hand advances child to document d and keeps the score it gives the
// match there (the one at d, or the next: child's own matches decide); nil
// once child has none left.
func (s *topk) hand(ctx *search.SearchContext, d uint64) (*search.DocumentMatch, error) {
	s.id = index.NewIndexInternalID(s.id[:0], d)
	dm, err := s.child.Advance(ctx, s.id)
	if err != nil || dm == nil {
		return nil, err
	}
	s.childAt = dm.IndexInternalID.Value() + 1
	s.keep(dm.Score)
	return dm, nil
}

func (s *topkSearcher) Size() int { return s.child.Size() + 256 }

// The rest of the search.Searcher interface is the child's, for both fast
// searchers (topkSearcher, wordsSearcher).

func (s *topk) Weight() float64            { return s.child.Weight() }
func (s *topk) SetQueryNorm(n float64)     { s.child.SetQueryNorm(n) }
func (s *topk) Count() uint64              { return s.child.Count() }
func (s *topk) Min() int                   { return s.child.Min() }
func (s *topk) DocumentMatchPoolSize() int { return s.child.DocumentMatchPoolSize() }
