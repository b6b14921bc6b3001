package serving

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// rankQuery scores the hits of q as ranked searches do (see Score and
// HubFactor), reading each hit's PageRank and link density from columns
// kept in memory per segment (see ranks) instead of the doc values of
// every hit: the score is the same to the bit, for a fraction of the cost.
// On an index reader other than a scorch snapshot it scores through
// Bleve's custom score query and the doc values (fullRank).
type rankQuery struct {
	q       query.Query
	ranks   *ranks
	lengths *fieldLengths // nil: Bleve's estimate of the mean field lengths
	// heads are the terms of the query's plain words: a page with a
	// heading holding them scores more (see headings.go).
	heads []string
	// langs are the searcher's languages (Query.Langs): pages in them
	// score langBoost times as much. fullRank, the reference, has none.
	langs []string
	// cutoff is when its searcher stops scoring (zero: never; see
	// budget.go); partial is set when it did.
	cutoff  time.Time
	partial atomic.Bool
	// topK, when above 0, is the hits the search keeps (start + n): a
	// query of plain words then runs a fast path (topk.go, fastShapeOf;
	// topk_words.go, wordsShapeOf), which sets fast and the query's
	// total.
	topK  int
	fast  atomic.Bool
	lazy  atomic.Bool // the fast path stopped walking the text postings
	total atomic.Uint64
	// estimated is set when total is an estimate (topk_words.go,
	// estimate); estimateFrom, when above 0, replaces the least total
	// that may be estimated (estimateFrom, for tests).
	estimated    atomic.Bool
	estimateFrom int
}

// fullRank is rankQuery reading the doc values of every hit: the
// reference rankQuery must agree with.
func fullRank(q query.Query) query.Query {
	return query.NewCustomScoreQueryWithScorer(q, func(_ context.Context, d *search.DocumentMatch) (float64, error) {
		pr, _ := d.Fields[fPageRank].(float64)
		ld, _ := d.Fields[fLinkDensity].(float64)
		mm, _ := d.Fields[fMismatch].(float64)
		return Score(d.Score, pr) * (HubFactor(ld) * MismatchFactor(mm)), nil
	}, []string{fPageRank, fLinkDensity, fMismatch}, nil)
}

func (q *rankQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opt search.SearcherOptions) (search.Searcher, error) {
	if q.lengths != nil {
		if st := q.lengths.bm25Stats(r); st != nil {
			ctx = context.WithValue(ctx, search.BM25StatsKey, st)
		}
	}
	is, ok := r.(*scorch.IndexSnapshot)
	if !ok || q.ranks == nil {
		return fullRank(q.q).Searcher(ctx, r, m, opt)
	}
	cols, err := q.ranks.of(is)
	if err != nil {
		return nil, err
	}
	pref, err := q.ranks.preferred(is, cols, q.langs)
	if err != nil {
		return nil, err
	}
	var fast []string
	var words *wordsShape
	cq := q.q
	want := new(uint64)
	if q.topK > 0 && !opt.Explain {
		if fast = fastShapeOf(q.q, m); fast == nil {
			if words = wordsShapeOf(q.q, m); words != nil {
				cq = words.gated(want)
			}
		}
	}
	child, err := cq.Searcher(ctx, r, m, opt)
	if err != nil {
		return nil, err
	}
	heads, err := openHeads(ctx, r, q.heads)
	if err != nil {
		_ = child.Close()
		return nil, err
	}
	rs := &rankSearcher{child: child, cols: cols, pref: pref, explain: opt.Explain,
		stop: stopper{at: q.cutoff, stopped: &q.partial}, heads: heads, headTerms: len(q.heads)}
	if words != nil {
		ws, err := newWords(ctx, q, words, want, is, rs)
		if err != nil {
			_ = rs.Close()
			return nil, err
		}
		if ws != nil {
			return ws, nil
		}
		// Gated phrases need a wordsSearcher to say which document
		// they look at: run the query as it is.
		_ = rs.child.Close()
		if rs.child, err = q.q.Searcher(ctx, r, m, opt); err != nil {
			if rs.heads != nil {
				rs.heads.Close()
			}
			return nil, err
		}
	}
	if fast != nil {
		fs, err := newTopK(ctx, q, fast, is, rs)
		if err != nil {
			_ = rs.Close()
			return nil, err
		}
		if fs != nil {
			return fs, nil
		}
	}
	return rs, nil
}

func (q *rankQuery) Validate() error {
	if v, ok := q.q.(query.ValidatableQuery); ok {
		return v.Validate()
	}
	return nil
}

// factors are what a document's score is multiplied by: rankFactor of its
// PageRank, then HubFactor of its link density.
type factors struct{ rank, hub float64 }

// segRanks are the factors of a segment's documents, by local document
// number, loaded once (load).
type segRanks struct {
	mu     sync.Mutex // serializes load
	loaded atomic.Bool
	f      []factors
	maxF   float64  // the largest rank × hub of f
	langs  segLangs // its documents by language, as searches ask
}

// ranks keeps the factors of the segments of an index's snapshots, keyed
// by segment. A scorch segment is immutable: its documents and their doc
// values never change (updates and deletions mark documents of old
// segments deleted and add new segments; merges write new segments), so
// what was read once for a segment holds for as long as the segment
// exists, in every snapshot that has it. Segments no snapshot has any
// more are dropped when a search's snapshot does not have them (see of).
type ranks struct {
	mu   sync.Mutex
	segs map[any]*segRanks // by scorch segment (segment.Segment)
}

func newRanks() *ranks { return &ranks{segs: make(map[any]*segRanks)} }

// snapRanks are the factors of a snapshot's documents: segment i holds
// its global document numbers from offsets[i] on.
type snapRanks struct {
	offsets []uint64
	segs    []*segRanks
}

// of returns the factors of is's documents, loading those of segments
// seen for the first time.
func (rs *ranks) of(is *scorch.IndexSnapshot) (*snapRanks, error) {
	ss := is.Segments()
	sr := &snapRanks{offsets: make([]uint64, len(ss)), segs: make([]*segRanks, len(ss))}
	keep := make(map[any]bool, len(ss))
	var off uint64
	rs.mu.Lock()
	for i, s := range ss {
		seg := s.Segment()
		c := rs.segs[seg]
		if c == nil {
			c = &segRanks{}
			rs.segs[seg] = c
		}
		sr.segs[i], sr.offsets[i] = c, off
		keep[seg] = true
		// As scorch numbers a snapshot's documents: each segment's,
		// deleted ones included, after those of the segments before it.
		off += seg.Count()
	}
	// Searches of older snapshots may still use segments this one does
	// not have: a few are kept, and reloaded if dropped.
	if len(rs.segs) > 2*len(ss)+16 {
		for seg := range rs.segs {
			if !keep[seg] {
				delete(rs.segs, seg)
			}
		}
	}
	rs.mu.Unlock()
	for i, c := range sr.segs {
		if err := c.load(is, ss[i].Segment().Count(), sr.offsets[i]); err != nil {
			return nil, err
		}
	}
	return sr, nil
}

// load reads the factors of the segment's n documents (numbered from off
// in is) from their doc values, unless they are loaded.
func (c *segRanks) load(is *scorch.IndexSnapshot, n, off uint64) error {
	if c.loaded.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded.Load() {
		return nil
	}
	dvr, err := is.DocValueReader([]string{fPageRank, fLinkDensity, fMismatch})
	if err != nil {
		return fmt.Errorf("serving: rank columns: %w", err)
	}
	f := make([]factors, n)
	var pr, ld, mm docValue
	id := make(index.IndexInternalID, 0, 8)
	for local := range n {
		pr, ld, mm = docValue{}, docValue{}, docValue{}
		id = index.NewIndexInternalID(id[:0], off+local)
		err := dvr.VisitDocValues(id, func(field string, term []byte) {
			switch field {
			case fPageRank:
				pr.add(term)
			case fLinkDensity:
				ld.add(term)
			case fMismatch:
				mm.add(term)
			}
		})
		if err != nil {
			return fmt.Errorf("serving: rank columns: %w", err)
		}
		f[local] = factors{rankFactor(pr.float()), HubFactor(ld.float()) * MismatchFactor(mm.float())}
		c.maxF = max(c.maxF, f[local].rank*f[local].hub)
	}
	c.f = f
	c.loaded.Store(true)
	return nil
}

// docValue is a numeric field's value as Bleve's custom score query gives
// it to its callback (fullRank): the float64 of the one full-precision
// term of the field's doc values, or 0 if there is none or more than one.
type docValue struct {
	n int
	v float64
}

func (d *docValue) add(term []byte) {
	if len(term) == 0 {
		return
	}
	if ok, shift := numeric.ValidPrefixCodedTermBytes(term); ok {
		if shift != 0 {
			return
		}
		i, err := numeric.PrefixCoded(term).Int64()
		if err != nil {
			return
		}
		d.n++
		d.v = numeric.Int64ToFloat64(i)
		return
	}
	d.n++ // a string or boolean, not a number
	d.v = 0
}

func (d *docValue) float() float64 {
	if d.n != 1 {
		return 0
	}
	return d.v
}

// rankSearcher scores the hits of child with the factors of cols.
type rankSearcher struct {
	child   search.Searcher
	cols    *snapRanks
	pref    []*roaring.Bitmap // by segment: the documents in the searcher's languages; nil for none
	stop    stopper
	seg     int // the segment of the last hit
	explain bool
	// heads lifts pages with a heading holding the query's words; nil
	// when no heading holds them (see headings.go).
	heads     *headMatch
	headTerms int
}

// maxHead is the most the headings multiply a score by (see factor).
func (s *rankSearcher) maxHead() float64 {
	if s.heads == nil {
		return 1
	}
	return 1 + headBonus
}

// maxFactor is the most rank factors multiply any document's score by:
// the rank columns' most, the language preference and the headings.
func (s *rankSearcher) maxFactor() float64 {
	var f float64
	for _, c := range s.cols.segs {
		f = max(f, c.maxF)
	}
	if s.pref != nil {
		f *= langBoost
	}
	return f * s.maxHead()
}

// headBound is the most the headings multiply document d's score by.
func (s *rankSearcher) headBound(d uint64) float64 {
	if s.heads == nil {
		return 1
	}
	return s.heads.bound(d)
}

func (s *rankSearcher) score(d *search.DocumentMatch) error {
	n := d.IndexInternalID.Value()
	o := s.cols.offsets
	if s.seg >= len(o) || n < o[s.seg] || (s.seg+1 < len(o) && n >= o[s.seg+1]) {
		s.seg = sort.Search(len(o), func(i int) bool { return o[i] > n }) - 1
	}
	if s.seg < 0 || n-o[s.seg] >= uint64(len(s.cols.segs[s.seg].f)) {
		return fmt.Errorf("serving: rank: document %d outside the snapshot's segments", n)
	}
	local := n - o[s.seg]
	f := s.cols.segs[s.seg].f[local]
	d.Score = d.Score * f.rank * f.hub // = Score(bm25, pagerank) * (HubFactor(linkDensity) * MismatchFactor(mismatch))
	if s.pref != nil && s.pref[s.seg].Contains(uint32(local)) {
		d.Score *= langBoost
	}
	if s.heads != nil {
		h, err := s.heads.factor(n, s.headTerms)
		if err != nil {
			return err
		}
		d.Score *= h
	}
	if s.explain {
		d.Expl = &search.Explanation{Value: d.Score, Message: "custom_score function result"}
	}
	return nil
}

func (s *rankSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	if s.stop.stop() {
		return nil, nil
	}
	d, err := s.child.Next(ctx)
	if err != nil || d == nil {
		return d, err
	}
	return d, s.score(d)
}

func (s *rankSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	if s.stop.stop() {
		return nil, nil
	}
	d, err := s.child.Advance(ctx, id)
	if err != nil || d == nil {
		return d, err
	}
	return d, s.score(d)
}

func (s *rankSearcher) Close() error {
	if s.heads != nil {
		s.heads.Close()
	}
	return s.child.Close()
}
func (s *rankSearcher) Weight() float64            { return s.child.Weight() }
func (s *rankSearcher) SetQueryNorm(n float64)     { s.child.SetQueryNorm(n) }
func (s *rankSearcher) Count() uint64              { return s.child.Count() }
func (s *rankSearcher) Min() int                   { return s.child.Min() }
func (s *rankSearcher) Size() int                  { return s.child.Size() + 64 }
func (s *rankSearcher) DocumentMatchPoolSize() int { return s.child.DocumentMatchPoolSize() }
