package serving

import (
	"context"
	"math"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// The fast path of queries of two words or more (wordsSearcher), as
// parse makes them: a conjunction of the words, each over the text
// fields, and their phrase over the text fields as an optional clause
// (withProximity). Pages with all the words are the matches; wordsSearcher
// walks the postings of every word's terms to find them, counting them,
// and bounds each one's score from above from its term frequencies and
// norms: each word's BM25 in each field (with its disjunction's
// coordination), plus, for the fields that have all the words, what the
// phrase clause would add if the words stood together there; and from
// below: the words alone. The walk keeps the pages whose bound from above
// reaches the floor, the lowest of the best k bounds from below; then a
// page goes to Bleve's searcher for its exact score only when its bound
// still reaches the floor and the lowest of the best k scores found so
// far. Once the floor shuts out every page with its words in its text
// alone, the walk leaves the text postings behind and the total is
// estimated (lazyWords), when it may reach estimateFrom.
//
// Bleve's phrase searcher, advanced to a page, reads on to its next
// match: advanced from candidate to candidate, it would check the word
// positions of every page that has the words. The searcher scoring the
// candidates has gated phrases in its place (phraseGate), which look at the
// positions of the candidates alone; the boolean, disjunction and term
// searchers around them, and so every score, are Bleve's own.

// wordsShape is a query of plain words recognised by wordsShapeOf.
type wordsShape struct {
	// terms[i][f] is word i's term in the field of boosts[f].
	terms [][]string
	b     *query.BooleanQuery
	// relaxed: the query is the relaxed form (relax) of the words, and
	// phrase is where its phrase is.
	relaxed bool
	phrase  *query.DisjunctionQuery
}

// wordsShapeOf recognises the queries parse makes of two or more plain
// words: a boolean query whose must is a conjunction of the words, each a
// disjunction over the fields of boosts (one term per field after
// analysis, no word twice), and whose should is the phrase of the words
// over the same fields, with no exclusions nor filters; or the relaxed
// form of that query (relax): any of the words as the must, the phrase
// and the conjunction of the words as the should. It returns nil for any
// other query.
func wordsShapeOf(q query.Query, m mapping.IndexMapping) *wordsShape {
	b, ok := q.(*query.BooleanQuery)
	if !ok || b.Should == nil || b.MustNot != nil || b.Filter != nil {
		return nil
	}
	s := &wordsShape{b: b}
	var words []query.Query
	switch must := b.Must.(type) {
	case *query.ConjunctionQuery:
		words = must.Conjuncts
		s.phrase, _ = b.Should.(*query.DisjunctionQuery)
	case *query.DisjunctionQuery:
		if must.Min != 1 {
			return nil
		}
		words, s.relaxed = must.Disjuncts, true
		d, ok := b.Should.(*query.DisjunctionQuery)
		if !ok || d.Min != 0 || len(d.Disjuncts) != 2 {
			return nil
		}
		c, ok := d.Disjuncts[1].(*query.ConjunctionQuery)
		if !ok || len(c.Conjuncts) != len(words) {
			return nil
		}
		for i, w := range c.Conjuncts {
			if w != words[i] {
				return nil
			}
		}
		s.phrase, _ = d.Disjuncts[0].(*query.DisjunctionQuery)
	default:
		return nil
	}
	if len(words) < 2 || s.phrase == nil {
		return nil
	}
	for _, w := range words {
		t := wordTerms(w, m)
		if t == nil {
			return nil
		}
		s.terms = append(s.terms, t)
	}
	for f := range boosts {
		seen := map[string]bool{}
		for _, t := range s.terms {
			if seen[t[f]] {
				return nil
			}
			seen[t[f]] = true
		}
	}
	d := s.phrase
	if d.Min != 0 || len(d.Disjuncts) != len(boosts) {
		return nil
	}
	for f, dq := range d.Disjuncts {
		p, ok := dq.(*query.MatchPhraseQuery)
		if !ok || p.FieldVal != boosts[f].field || p.Boost() != boosts[f].boost || p.Fuzziness != 0 {
			return nil
		}
		an := p.Analyzer
		if an == "" {
			an = m.AnalyzerNameForPath(p.FieldVal)
		}
		a := m.AnalyzerNamed(an)
		if a == nil {
			return nil
		}
		toks := a.Analyze([]byte(p.MatchPhrase))
		if len(toks) != len(s.terms) {
			return nil
		}
		for i, tok := range toks {
			if string(tok.Term) != s.terms[i][f] || tok.Position != toks[0].Position+i {
				return nil
			}
		}
	}
	return s
}

// wordTerms returns the terms of q when it is one plain word over the
// fields of boosts (a disjunction of match queries, one term each), in
// the order of boosts, else nil.
func wordTerms(q query.Query, m mapping.IndexMapping) []string {
	d, ok := q.(*query.DisjunctionQuery)
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
	return terms
}

// gated returns the query of s with its phrases gated: the searcher that
// scores the candidates of a wordsSearcher.
func (s *wordsShape) gated(want *uint64) query.Query {
	gates := make([]query.Query, len(boosts))
	for f := range boosts {
		terms := make([]string, len(s.terms))
		for i, t := range s.terms {
			terms[i] = t[f]
		}
		gates[f] = &phraseGate{terms: terms, field: boosts[f].field, boost: s.phrase.Disjuncts[f].(*query.MatchPhraseQuery).Boost(), want: want}
	}
	g := *s.phrase
	g.Disjuncts = gates
	out := *s.b
	out.Must = &stepQuery{q: s.b.Must}
	if !s.relaxed {
		out.Should = &g
		return &out
	}
	should := *s.b.Should.(*query.DisjunctionQuery)
	should.Disjuncts = []query.Query{&g, should.Disjuncts[1]}
	out.Should = &should
	return &out
}

// stepQuery is q, whose searcher only moves when advanced: after its
// first match, Next stands just past the last document it returned (as a
// gateSearcher does) instead of reading on to the next match. The boolean
// searcher over it reads on after every match it returns; a
// wordsSearcher advances it to its next candidate anyway.
type stepQuery struct{ q query.Query }

func (q *stepQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opt search.SearcherOptions) (search.Searcher, error) {
	s, err := q.q.Searcher(ctx, r, m, opt)
	if err != nil {
		return nil, err
	}
	return &stepSearcher{Searcher: s}, nil
}

type stepSearcher struct {
	search.Searcher
	begun bool
	last  uint64 // the last document returned
}

func (s *stepSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if s.begun {
		return placeholder(ctx, s.last), nil
	}
	s.begun = true
	return s.step(s.Searcher.Next(ctx))
}

func (s *stepSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	s.begun = true
	return s.step(s.Searcher.Advance(ctx, id))
}

func (s *stepSearcher) step(dm *search.DocumentMatch, err error) (*search.DocumentMatch, error) {
	if dm != nil {
		s.last = dm.IndexInternalID.Value()
	}
	return dm, err
}

func (s *stepSearcher) DocumentMatchPoolSize() int { return s.Searcher.DocumentMatchPoolSize() + 1 }

// phraseGate is the phrase of terms over field as Bleve's phrase searcher
// runs it (a conjunction of term searchers with positions, the same
// weights and scores), except that it only looks at the document its
// wordsSearcher asks for (*want): a gateSearcher advanced to a document
// says whether the phrase is there, and if it is not, stands just past it
// (see gateSearcher), without reading on to the phrase's next match.
type phraseGate struct {
	terms []string
	field string
	boost float64
	want  *uint64
}

func (q *phraseGate) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opt search.SearcherOptions) (search.Searcher, error) {
	// As searcher.NewMultiPhraseSearcher builds it for single terms.
	opt.IncludeTermVectors = true
	ts := make([]search.Searcher, 0, len(q.terms))
	for _, t := range q.terms {
		s, err := searcher.NewTermSearcher(ctx, r, t, q.field, q.boost, opt)
		if err != nil {
			for _, s := range ts {
				_ = s.Close()
			}
			return nil, err
		}
		ts = append(ts, s)
	}
	c, err := searcher.NewConjunctionSearcher(ctx, r, ts, opt)
	if err != nil {
		for _, s := range ts {
			_ = s.Close()
		}
		return nil, err
	}
	return &gateSearcher{must: c, terms: q.terms, want: q.want}, nil
}

// gateSearcher is phraseGate's searcher. Its position after a document d
// it was asked about is d itself when the phrase is there, else a
// placeholder ID between d and d+1 (d's eight bytes and a zero byte):
// disjunction and boolean searchers see no match at d, and advance it
// again to any later document.
type gateSearcher struct {
	must  search.Searcher // the conjunction of the terms
	terms []string
	want  *uint64
	curr  *search.DocumentMatch // must's current match, nil before the first or when consumed
	last  uint64                // the last document asked about
	asked bool
	done  bool
}

// placeholder returns a match positioned just past document d: d's
// eight bytes and a zero byte, between d and d+1.
func placeholder(ctx *search.SearchContext, d uint64) *search.DocumentMatch {
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = append(index.NewIndexInternalID(dm.IndexInternalID[:0], d), 0)
	return dm
}

func (s *gateSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if !s.asked {
		return s.check(ctx, *s.want)
	}
	return placeholder(ctx, s.last), nil
}

func (s *gateSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	return s.check(ctx, id.Value())
}

// check returns the match at d when the phrase is at d, else a
// placeholder just past d, or nil when the terms have no document left.
func (s *gateSearcher) check(ctx *search.SearchContext, d uint64) (*search.DocumentMatch, error) {
	s.asked, s.last = true, d
	if s.done {
		return nil, nil
	}
	if s.curr == nil || s.curr.IndexInternalID.Value() < d {
		ctx.DocumentMatchPool.Put(s.curr)
		var err error
		if s.curr, err = s.must.Advance(ctx, index.NewIndexInternalID(nil, d)); err != nil {
			return nil, err
		}
		if s.curr == nil {
			s.done = true
			return nil, nil
		}
	}
	if s.curr.IndexInternalID.Value() != d {
		return placeholder(ctx, d), nil
	}
	dm := s.curr
	s.curr = nil
	if !hasPhrase(dm.FieldTermLocations, s.terms) {
		ctx.DocumentMatchPool.Put(dm)
		return placeholder(ctx, d), nil
	}
	dm.FieldTermLocations = dm.FieldTermLocations[:0]
	return dm, nil
}

// hasPhrase tells whether terms stand in a row among locs (the locations
// of one field), in the same element of an array field, as Bleve's phrase
// searcher requires with no slop.
func hasPhrase(locs []search.FieldTermLocation, terms []string) bool {
	var at func(i int, prev *search.Location) bool
	at = func(i int, prev *search.Location) bool {
		if i == len(terms) {
			return true
		}
		for j := range locs {
			l := &locs[j]
			if l.Term != terms[i] {
				continue
			}
			if prev != nil && (l.Location.Pos != prev.Pos+1 || !l.Location.ArrayPositions.Equals(prev.ArrayPositions)) {
				continue
			}
			if at(i+1, &l.Location) {
				return true
			}
		}
		return false
	}
	return at(0, nil)
}

func (s *gateSearcher) Close() error               { return s.must.Close() }
func (s *gateSearcher) Weight() float64            { return s.must.Weight() }
func (s *gateSearcher) SetQueryNorm(n float64)     { s.must.SetQueryNorm(n) }
func (s *gateSearcher) Count() uint64              { return s.must.Count() }
func (s *gateSearcher) Min() int                   { return 0 }
func (s *gateSearcher) Size() int                  { return s.must.Size() + 64 }
func (s *gateSearcher) DocumentMatchPoolSize() int { return s.must.DocumentMatchPoolSize() + 2 }

// wordsSearcher returns the documents of child, a rankSearcher over a
// wordsShape's gated query, that may be among the best k; see the top of
// this file. It ends with the documents that have all the words counted
// in q.total.
type wordsSearcher struct {
	topk
	// leaves[i][f] is word i's term over the field of boosts[f].
	leaves  [][]*fastLeaf
	qnorm   float64
	relaxed bool    // any of the words matches (wordsShape.relaxed)
	want    *uint64 // the document child's phrase gates look at
	target  uint64
	total   uint64 // matches seen (in lazy mode, the candidates among them)
	done    bool

	walked bool      // the first pass (walk) is done
	lows   []float64 // min-heap of the best k lower bounds
	cands  []cand    // the candidates walk kept
	at     int       // the next candidate to hand child
	from   uint64    // no document before this one is returned (Advance)

	// Lazy mode (see lazyWords): once the floor passes lazyFrom, a
	// page whose words are all in its text alone cannot enter the top k,
	// and the text postings are only advanced to the candidates. The
	// total is then estimated (see estimate).
	canLazy  bool // the total may reach estimateFrom: an estimate may replace it
	lazy     bool
	lazyFrom float64
	lazyAt   uint64 // the first document not walked in full
	before   uint64 // the matches before lazyAt, all counted
	end      uint64 // one past the snapshot's last document
	lower    uint64 // the total is at least this
	upper    uint64 // and at most this
}

// newWords returns the fast searcher of q, a query of the words of s,
// over is, or nil when Bleve would not score it with BM25 (then rs runs
// alone). want is the gates' document, shared with rs's query.
func newWords(ctx context.Context, q *rankQuery, s *wordsShape, want *uint64, is *scorch.IndexSnapshot, rs *rankSearcher) (*wordsSearcher, error) {
	ws := &wordsSearcher{topk: topk{child: rs, q: q, k: q.topK, stop: rs.stop}, want: want, relaxed: s.relaxed}
	var weights float64
	for _, terms := range s.terms {
		ls, err := openLeaves(ctx, is, terms)
		if ls == nil || err != nil {
			ws.closeLeaves()
			return nil, err
		}
		ws.leaves = append(ws.leaves, ls)
		for _, l := range ls {
			weights += l.w * l.w
		}
	}
	// Every term is weighed twice, in its word and in the phrase; in a
	// relaxed query, thrice: in the conjunction of the words too.
	if s.relaxed {
		weights *= 3
	} else {
		weights *= 2
	}
	ws.qnorm = boundSlack / math.Sqrt(weights)
	ws.lazyWords(q, rs)
	return ws, nil
}

// estimateFrom is the least total that may be estimated: a query whose
// words' postings allow fewer matches than this is always counted
// exactly, so a small site never shows an estimate.
const estimateFrom = 10_000

// lazyWords sets what the lazy mode needs: the threshold past which a
// page with its words in its text alone cannot enter the top k, and the
// bounds of the total.
//
// In the text alone, each word scores at most a third (its disjunction's
// coordination) of its text term's most. With all the words: those, and
// the phrase in the text alone, a third of its terms' most again; a
// relaxed query adds the conjunction of the words, as much as the words.
// A relaxed query's page without all the words scores its words times
// the share of words it has, at most (all-1)/all; pages with all the
// words in their text stay candidates (the text postings' intersection,
// short when fewer than relaxBelow pages have all the words).
func (s *wordsSearcher) lazyWords(q *rankQuery, rs *rankSearcher) {
	// The total: relaxed, at least the postings of any term and at most
	// those of all; else at most the postings of the rarest word.
	var text float64
	var sum uint64
	least := uint64(math.MaxUint64)
	for _, ls := range s.leaves {
		text += ls[len(ls)-1].max() / float64(len(boosts))
		var n uint64
		for _, l := range ls {
			c := l.r.Count()
			n += c
			if s.relaxed {
				s.lower = max(s.lower, c)
			}
		}
		sum += n
		least = min(least, n)
	}
	if s.relaxed {
		s.upper = sum
		all := float64(len(s.leaves))
		text *= (all - 1) / all
	} else {
		s.upper = least
		text *= 2
	}
	maxF := rs.maxFactor()
	s.lazyFrom = maxF * s.qnorm * text * boundSlack
	if o := rs.cols.offsets; len(o) > 0 {
		s.end = o[len(o)-1] + uint64(len(rs.cols.segs[len(o)-1].f))
	}
	from := uint64(estimateFrom)
	if q.estimateFrom > 0 {
		from = uint64(q.estimateFrom)
	}
	s.canLazy = s.upper >= from
}

func (s *wordsSearcher) closeLeaves() {
	for _, ls := range s.leaves {
		for _, l := range ls {
			_ = l.r.Close()
		}
	}
}

// next returns the next document from s.target on that has all the
// words (in a relaxed query, any of them), with the leaves that have it
// standing on it, or math.MaxUint64.
func (s *wordsSearcher) next() (uint64, error) {
	if s.lazy {
		return s.nextLazy()
	}
	if s.relaxed {
		d := uint64(math.MaxUint64)
		for _, ls := range s.leaves {
			for _, l := range ls {
				if err := l.next(s.target); err != nil {
					return 0, err
				}
				d = min(d, l.doc)
			}
		}
		return d, nil
	}
	t := s.target
	for {
		agree := true
		for _, ls := range s.leaves {
			e := uint64(math.MaxUint64)
			for _, l := range ls {
				if err := l.next(t); err != nil {
					return 0, err
				}
				e = min(e, l.doc)
			}
			if e == math.MaxUint64 {
				return e, nil
			}
			if e != t {
				agree = false
				t = max(t, e)
			}
		}
		if agree {
			return t, nil
		}
	}
}

// nextLazy is next in lazy mode: the next document from s.target on
// that has a word in its title or anchors (or, relaxed, all the words in
// its text), with all the words (relaxed, any), or math.MaxUint64.
func (s *wordsSearcher) nextLazy() (uint64, error) {
	for {
		d := uint64(math.MaxUint64)
		for _, ls := range s.leaves {
			for _, l := range ls[:len(ls)-1] {
				if err := l.next(s.target); err != nil {
					return 0, err
				}
				d = min(d, l.doc)
			}
		}
		if s.relaxed {
			m, err := s.textMeet(s.target, d)
			if err != nil {
				return 0, err
			}
			d = m
		}
		if d == math.MaxUint64 {
			return d, nil
		}
		all := true
		for _, ls := range s.leaves {
			if err := ls[len(ls)-1].next(d); err != nil {
				return 0, err
			}
			has := false
			for _, l := range ls {
				has = has || l.doc == d
			}
			all = all && has
		}
		if all || s.relaxed {
			return d, nil
		}
		s.target = d + 1
		if s.stop.stop() {
			return math.MaxUint64, nil
		}
	}
}

// textMeet returns the first document from t on, below limit, in the
// text postings of every word, or limit.
func (s *wordsSearcher) textMeet(t, limit uint64) (uint64, error) {
	for {
		agree := true
		for _, ls := range s.leaves {
			x := ls[len(ls)-1]
			if err := x.next(t); err != nil {
				return 0, err
			}
			if x.doc >= limit {
				return limit, nil
			}
			if x.doc != t {
				agree, t = false, x.doc
			}
		}
		if agree {
			return t, nil
		}
	}
}

// estimate returns the total of a lazy search: the matches before lazyAt,
// counted, and past it those counted or, when more, as many as before
// in proportion to the documents; never below the matches counted nor
// lower, never above upper.
func (s *wordsSearcher) estimate() uint64 {
	after := s.total - s.before
	if s.lazyAt > 0 && s.end > s.lazyAt {
		after = max(after, uint64(float64(s.before)*float64(s.end-s.lazyAt)/float64(s.lazyAt)))
	}
	return min(max(s.before+after, s.lower), s.upper)
}

// bound returns at least the score child gives document d, on which the
// leaves that have it stand, and false when d is outside the snapshot's
// rank columns; and at most that score: the words without the phrase
// (relaxed, times the share of words the document has), which the
// score adds to.
func (s *wordsSearcher) bound(d uint64) (hi, lo float64, ok bool) {
	n := float64(len(boosts))
	// The words: each one's fields, with its disjunction's coordination.
	var words, present float64
	for _, ls := range s.leaves {
		var w, m float64
		for _, l := range ls {
			if l.doc == d {
				w += l.bm25()
				m++
			}
		}
		words += w * m / n
		if m > 0 {
			present++
		}
	}
	// The phrase: the fields with all the words, with the coordination
	// of the phrase's disjunction.
	var phrase, inAll float64
	for f := range boosts {
		var p float64
		all := true
		for _, ls := range s.leaves {
			if l := ls[f]; l.doc == d {
				p += l.bm25()
			} else {
				all = false
			}
		}
		if all {
			phrase += p
			inAll++
		}
	}
	phrase *= inAll / n
	sum, low := words+phrase, words
	if s.relaxed {
		// Any of the words, with its coordination; with all of them, the
		// should clause adds the conjunction of the words and the phrase
		// (at most: its coordination is 1/2 without the phrase).
		all := float64(len(s.leaves))
		sum = words * present / all
		low = sum
		if present == all {
			sum += words + phrase
		}
	}
	f, ok := s.factor(d)
	// The headings' factor is between 1 and its bound (headings.go): the
	// lower bound takes 1.
	fl := f / s.child.headBound(d)
	// qnorm is the query norm widened by boundSlack.
	return sum * s.qnorm * f * boundSlack, low * s.qnorm * fl / (boundSlack * boundSlack * boundSlack), ok
}

// walk is the first pass: it walks the matches (lazily once it can; see
// lazyWords), counting them, and keeps the candidates, the matches whose
// bound reaches floor, the lowest of the best k lower bounds so far; the
// first match is always one. No page left out can enter the top k: k
// pages score at least floor.
func (s *wordsSearcher) walk() error {
	for {
		if s.stop.stop() {
			return nil
		}
		d, err := s.next()
		if err != nil {
			return err
		}
		if d == math.MaxUint64 {
			return nil
		}
		s.target = d + 1
		s.total++
		b, lo, ok := s.bound(d)
		if !ok {
			b, lo = math.Inf(1), 0
		}
		s.lows = keepTop(s.lows, s.k, lo)
		if len(s.cands) == 0 || b >= s.floor() {
			s.cands = append(s.cands, cand{d, b})
		}
		if s.canLazy && !s.lazy && s.total > relaxBelow && s.floor() > s.lazyFrom {
			// From the next document on. The matches counted are over
			// relaxBelow, as the total will be: Search relaxes and
			// corrects the query as it would with the exact total.
			s.lazy, s.lazyAt, s.before = true, s.target, s.total
			s.q.lazy.Store(true)
		}
	}
}

// floor returns the lowest of the best k lower bounds, or -1 while there
// are fewer.
func (s *wordsSearcher) floor() float64 {
	if len(s.lows) < s.k {
		return -1
	}
	return s.lows[0]
}

// cand is a candidate of wordsSearcher: a document and its bound.
type cand struct {
	doc   uint64
	bound float64
}

// Next hands child the candidates whose bound reaches both the floor
// and the lowest of the best k scores so far, in the order of the
// documents. The first candidate, the first match, always goes to child:
// its searchers are initialised on their first document (advanced first
// to a later one, a relaxed query's should clause missed a match; not
// understood).
func (s *wordsSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if !s.walked {
		s.walked = true
		if err := s.walk(); err != nil {
			return nil, err
		}
	}
	for s.at < len(s.cands) && !s.done {
		if s.stop.stop() {
			break // at most checkEvery more candidates once walk stopped
		}
		c := s.cands[s.at]
		s.at++
		if s.at > 1 && (c.bound < s.floor() || c.bound < s.threshold()) {
			continue
		}
		if c.doc < s.childAt || c.doc < s.from {
			continue // child went past it (not a match), or Advance did
		}
		*s.want = c.doc
		dm, err := s.hand(ctx, c.doc)
		if err != nil {
			return nil, err
		}
		if dm == nil {
			s.done = true
			break
		}
		return dm, nil
	}
	total := s.total
	if s.lazy && !s.q.partial.Load() {
		total = s.estimate()
		s.q.estimated.Store(true)
	}
	s.q.total.Store(total)
	s.q.fast.Store(true)
	return nil, nil
}

func (s *wordsSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	v := id.Value()
	if !s.walked && v > s.target {
		s.target = v
	}
	s.from = max(s.from, v)
	return s.Next(ctx)
}

func (s *wordsSearcher) Close() error {
	s.closeLeaves()
	return s.child.Close()
}

func (s *wordsSearcher) Size() int { return s.child.Size() + 512 }
