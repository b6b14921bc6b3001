package serving

import (
	"context"
	"math"
	"sort"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// The fast path of ranked searches (topkSearcher). Bleve scores every hit
// of a query, and a common word over a million pages has hundreds of
// thousands: the cost grows with the hits, not with the ten results shown.
// For the common shape of a query, plain words each over the text fields
// with their boosts, all required, and the optional phrase of them
// (withProximity), topkSearcher walks the postings of the query's terms
// itself, bounds each matching document's score from above from its term
// frequencies and norms (BM25 as Bleve computes it, times the document's
// rank factors), and hands a document to Bleve's searcher for its exact
// score only when the bound reaches the lowest of the best k scores found
// so far. A document it passes over cannot enter the top k, so the top k
// are those of the exhaustive search, with the very scores Bleve gives
// them: topkSearcher computes bounds, never scores.
//
// For a one-word query it also stops reading the word's postings in the
// body text (by far the longest) once a page that has the word only in its
// text cannot reach the top k whatever its rank (MaxScore): the pages with
// the word in their title or anchors are the candidates, and the text
// postings are only advanced to them. The total stays exact: the text
// postings' count plus the candidates without the word in their text.
//
// Any other shape (phrases, fields, exclusions, fuzzy terms, a relaxed
// query, words the analyzer splits) runs the whole searcher as before.

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

// fastWord is a plain word of the query: one leaf per text field, in the
// order of boosts.
type fastWord []*fastLeaf

// fastShape is a query topkSearcher handles: its words, each a term per
// text field, and whether it has the phrase of them.
type fastShape struct {
	words  [][]string // by word, the term of each field of boosts
	phrase bool
}

// fastShapeOf recognises the queries parse makes of plain words: a
// boolean query whose must is a conjunction of words over the text
// fields (overFields, one term per field after analysis), with no
// exclusions nor filters, and as its should nothing or the phrase of the
// words over the text fields (withProximity). It returns nil for any
// other query.
func fastShapeOf(q query.Query, m mapping.IndexMapping) *fastShape {
	b, ok := q.(*query.BooleanQuery)
	if !ok || b.MustNot != nil || b.Filter != nil {
		return nil
	}
	c, ok := b.Must.(*query.ConjunctionQuery)
	if !ok || len(c.Conjuncts) == 0 {
		return nil
	}
	sh := &fastShape{}
	for _, cq := range c.Conjuncts {
		d, ok := cq.(*query.DisjunctionQuery)
		if !ok || d.Min != 0 || len(d.Disjuncts) != len(boosts) {
			return nil
		}
		terms := make([]string, len(boosts))
		for i, dq := range d.Disjuncts {
			mq, ok := dq.(*query.MatchQuery)
			if !ok || mq.FieldVal != boosts[i].field || mq.Boost() != boosts[i].boost || mq.Fuzziness != 0 {
				return nil
			}
			toks := analyze(m, mq.FieldVal, mq.Analyzer, mq.Match)
			if len(toks) != 1 {
				return nil
			}
			terms[i] = toks[0]
		}
		sh.words = append(sh.words, terms)
	}
	if b.Should == nil {
		return sh
	}
	d, ok := b.Should.(*query.DisjunctionQuery)
	if !ok || d.Min != 0 || len(d.Disjuncts) != len(boosts) {
		return nil
	}
	for i, dq := range d.Disjuncts {
		pq, ok := dq.(*query.MatchPhraseQuery)
		if !ok || pq.FieldVal != boosts[i].field || pq.Boost() != boosts[i].boost || pq.Fuzziness != 0 {
			return nil
		}
		// The phrase's terms must be the words' terms, one a position:
		// its score is then the sum of theirs (Bleve's phrase searcher
		// scores as the conjunction of its terms).
		toks := analyze(m, pq.FieldVal, pq.Analyzer, pq.MatchPhrase)
		if len(toks) != len(sh.words) {
			return nil
		}
		for w, t := range toks {
			if t != sh.words[w][i] {
				return nil
			}
		}
	}
	sh.phrase = true
	return sh
}

// searcher returns the searcher of q, a query of shape sh (nil: any
// query). Bleve's boolean searcher advanced to a document can lose the
// phrase's match of it: it advances its should searcher even when that
// stands on the document already, past it. The fast path advances it
// from document to document, so the boolean searcher of a query with the
// phrase is built here as Bleve builds it, its should searcher wrapped in
// a stableAdvance. Searched with Next alone, as the exhaustive search
// does, it is Bleve's.
func (sh *fastShape) searcher(ctx context.Context, q query.Query, r index.IndexReader, m mapping.IndexMapping, opt search.SearcherOptions) (search.Searcher, error) {
	if sh == nil || !sh.phrase {
		return q.Searcher(ctx, r, m, opt)
	}
	b := q.(*query.BooleanQuery)
	must, err := b.Must.Searcher(ctx, r, m, opt)
	if err != nil {
		return nil, err
	}
	should, err := b.Should.Searcher(ctx, r, m, opt)
	if err != nil {
		_ = must.Close()
		return nil, err
	}
	if _, none := must.(*searcher.MatchNoneSearcher); none {
		_ = must.Close()
		_ = should.Close()
		return q.Searcher(ctx, r, m, opt)
	}
	if _, none := should.(*searcher.MatchNoneSearcher); none {
		_ = must.Close()
		_ = should.Close()
		return q.Searcher(ctx, r, m, opt)
	}
	return searcher.NewBooleanSearcher(ctx, r, must, &stableAdvance{Searcher: should}, nil, opt)
}

// stableAdvance is a searcher whose Advance to a document at or before
// the one it returned last returns that one again (a copy: its caller
// recycles what it got), where Bleve's composite searchers return the
// next match after it.
type stableAdvance struct {
	search.Searcher
	last  index.IndexInternalID // nil: none yet
	score float64
}

func (s *stableAdvance) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	return s.keep(s.Searcher.Next(ctx))
}

func (s *stableAdvance) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	if s.last != nil && s.last.Compare(id) >= 0 {
		dm := ctx.DocumentMatchPool.Get()
		dm.IndexInternalID = append(dm.IndexInternalID[:0], s.last...)
		dm.Score = s.score
		return dm, nil
	}
	return s.keep(s.Searcher.Advance(ctx, id))
}

func (s *stableAdvance) keep(dm *search.DocumentMatch, err error) (*search.DocumentMatch, error) {
	if dm != nil {
		s.last = append(s.last[:0], dm.IndexInternalID...)
		s.score = dm.Score
	}
	return dm, err
}

// analyze returns the terms of text in field, as match queries analyze
// it, or nil when a term's position does not follow the one before
// (a phrase with a gap).
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
		if t.Position != i+1 {
			return nil
		}
		out[i] = string(t.Term)
	}
	return out
}

// topkSearcher returns the documents of child, a rankSearcher, that may
// be among the best k; see the top of this file. It ends with all the
// documents child matches counted in q.total.
type topkSearcher struct {
	child  *rankSearcher
	q      *rankQuery
	k      int
	words  []fastWord
	phrase bool
	qnorm  float64 // at least the query norm Bleve's searchers apply
	maxF   float64 // at least the rank factors of any document

	best     []float64 // min-heap of the best k scores returned
	target   uint64    // the next document to look at
	childAt  uint64    // child's documents up to here are consumed (+1; 0: none)
	total    uint64    // documents matched so far (in lazy mode, those with the word in their title or anchors)
	textOnly bool      // one word, and only its title and anchor postings are walked (lazy)
	lazyFrom float64   // the threshold past which a text-only page cannot enter the top k; 0: never
	textAll  uint64    // the text postings' count (for the total of a one-word query)
	noText   uint64    // matches without the word in their text, of a one-word query
	seg      int
	id       index.IndexInternalID
	stop     stopper
	done     bool
}

// newTopK returns the fast searcher of q over is, or nil when q's shape
// is not one it handles (then rs runs alone).
func newTopK(ctx context.Context, q *rankQuery, sh *fastShape, is *scorch.IndexSnapshot, rs *rankSearcher) (*topkSearcher, error) {
	if cb, ok := ctx.Value(search.GetScoringModelCallbackKey).(search.GetScoringModelCallbackFn); !ok || cb() != index.BM25Scoring {
		return nil, nil
	}
	st, _ := ctx.Value(search.BM25StatsKey).(*search.BM25Stats)
	docCount, err := is.DocCount()
	if err != nil {
		return nil, err
	}
	s := &topkSearcher{child: rs, q: q, k: q.topK, phrase: sh.phrase, stop: rs.stop}
	closeAll := func() {
		for _, w := range s.words {
			for _, l := range w {
				_ = l.r.Close()
			}
		}
	}
	var weights float64
	for _, terms := range sh.words {
		w := make(fastWord, len(terms))
		for i, t := range terms {
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
			w[i] = &fastLeaf{r: r, w: boosts[i].boost * idf, idf: idf, avg: math.Ceil(float64(card) / count)}
			weights += w[i].w * w[i].w
		}
		s.words = append(s.words, w)
	}
	// Bleve's query norm is 1/√(sum of the squared weights of all the
	// term searchers): those of the words, and of the phrase's terms if
	// any, which only make it smaller.
	s.qnorm = boundSlack / math.Sqrt(weights)
	for _, c := range rs.cols.segs {
		s.maxF = max(s.maxF, c.maxF)
	}
	if rs.pref != nil {
		s.maxF *= langBoost
	}
	if len(s.words) == 1 && !s.phrase && len(s.words[0]) == 3 {
		// A page with the word in its text only scores at most a third
		// (the disjunction's coordination) of the text term's most.
		s.lazyFrom = s.maxF * s.qnorm * s.words[0][2].max() / 3 * boundSlack
		s.textAll = s.words[0][2].r.Count()
	}
	return s, nil
}

// bound returns at least the score child gives document d, on which all
// the words' leaves that have it stand, and false when d is outside the
// snapshot's rank columns.
func (s *topkSearcher) bound(d uint64) (float64, bool) {
	var sum float64
	for _, w := range s.words {
		var part float64
		n := 0
		for _, l := range w {
			if l.doc == d {
				part += l.bm25()
				n++
			}
		}
		sum += part * float64(n) / float64(len(w))
	}
	if s.phrase {
		// The phrase over a field scores the sum of its terms there,
		// if every word is in the field; the disjunction over the
		// fields scales that by at most 1.
		for i := range boosts {
			var part float64
			for _, w := range s.words {
				if w[i].doc != d {
					part = 0
					break
				}
				part += w[i].bm25()
			}
			sum += part
		}
	}
	f, ok := s.factor(d)
	return sum * s.qnorm * f * boundSlack, ok
}

// factor returns the rank factors of document d, as rankSearcher applies
// them, and false if d is outside the snapshot.
func (s *topkSearcher) factor(d uint64) (float64, bool) {
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
	return v, true
}

// threshold returns the lowest of the best k scores, or -1 while there
// are fewer.
func (s *topkSearcher) threshold() float64 {
	if len(s.best) < s.k {
		return -1
	}
	return s.best[0]
}

// keep adds a returned score to the best k.
func (s *topkSearcher) keep(v float64) {
	h := s.best
	if len(h) < s.k {
		h = append(h, v)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p] <= h[i] {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		s.best = h
		return
	}
	if v <= h[0] {
		return
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
}

// match returns the next document all the words have, from s.target on,
// with the leaves that have it standing on it, or math.MaxUint64.
func (s *topkSearcher) match() (uint64, error) {
	for {
		t := s.target
		hi := uint64(0)
		for _, w := range s.words {
			lo := uint64(math.MaxUint64)
			for i, l := range w {
				if s.textOnly && i == 2 {
					continue
				}
				if err := l.next(t); err != nil {
					return 0, err
				}
				lo = min(lo, l.doc)
			}
			if lo == math.MaxUint64 {
				return lo, nil
			}
			hi = max(hi, lo)
		}
		if hi == t {
			return t, nil
		}
		s.target = hi
	}
}

func (s *topkSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	for !s.done {
		if s.stop.stop() {
			s.done = true
			break
		}
		if !s.textOnly && s.lazyFrom > 0 && s.threshold() > s.lazyFrom {
			s.textOnly = true
			s.q.lazy.Store(true)
		}
		d, err := s.match()
		if err != nil {
			return nil, err
		}
		if d == math.MaxUint64 {
			s.done = true
			break
		}
		s.target = d + 1
		s.total++
		if s.lazyFrom > 0 {
			x := s.words[0][2]
			if err := x.next(d); err != nil { // in lazy mode, it was left behind
				return nil, err
			}
			if x.doc != d {
				s.noText++
			}
		}
		b, ok := s.bound(d)
		if ok && b < s.threshold() {
			continue
		}
		if d+1 <= s.childAt {
			continue // child already went past it: not a match
		}
		s.id = index.NewIndexInternalID(s.id[:0], d)
		dm, err := s.child.Advance(ctx, s.id)
		if err != nil {
			return nil, err
		}
		if dm == nil {
			s.done = true
			break
		}
		s.childAt = dm.IndexInternalID.Value() + 1
		s.keep(dm.Score)
		return dm, nil
	}
	s.finish()
	return nil, nil
}

// finish records the query's total.
func (s *topkSearcher) finish() {
	total := s.total
	if s.lazyFrom > 0 && !s.q.partial.Load() {
		// The text postings, and the matches without the word in their
		// text (all in the title or anchor postings): every match is
		// one or the other.
		total = s.textAll + s.noText
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
	for _, w := range s.words {
		for _, l := range w {
			_ = l.r.Close()
		}
	}
	return s.child.Close()
}

func (s *topkSearcher) Weight() float64            { return s.child.Weight() }
func (s *topkSearcher) SetQueryNorm(n float64)     { s.child.SetQueryNorm(n) }
func (s *topkSearcher) Count() uint64              { return s.child.Count() }
func (s *topkSearcher) Min() int                   { return s.child.Min() }
func (s *topkSearcher) Size() int                  { return s.child.Size() + 256 }
func (s *topkSearcher) DocumentMatchPoolSize() int { return s.child.DocumentMatchPoolSize() }
