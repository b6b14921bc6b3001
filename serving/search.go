package serving

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/caffeine-go/caffeine/webtable"
)

// Field boosts of unqualified query terms: anchors are how the web
// describes a page, titles how the page describes itself.
var boosts = []struct {
	field string
	boost float64
}{{fTitle, 3}, {fAnchors, 2}, {fText, 1}}

// Score combines BM25 with PageRank:
//
//	score = bm25 × (1 + rankWeight × ln(1 + pagerank))
//
// PageRank here is the unnormalized kind (the average page has 1, the
// least 0.15), so a page with average rank gets 1.35× its text score, one
// with rank 20 about 2.5×: rank orders pages that match about equally
// well, and cannot lift a page that barely matches above one that matches
// well.
func Score(bm25, pagerank float64) float64 {
	return bm25 * rankFactor(pagerank)
}

// rankFactor is what Score multiplies BM25 by.
func rankFactor(pagerank float64) float64 {
	return 1 + rankWeight*math.Log1p(max(pagerank, 0))
}

const rankWeight = 0.45

// HubFactor scales the score of a page by its link density (the share of
// its visible text in links, webtable.Doc.LinkDensity): 1 up to hubFrom,
// then down linearly to 1−hubCut at hubFrom+hubSpan and beyond. An index
// or a table of contents (density 0.55–0.95 in the PostgreSQL manual,
// against 0.00–0.20 for its other pages) matches many queries through the
// titles it lists, but is not the page a query is about.
func HubFactor(linkDensity float64) float64 {
	x := min(max(linkDensity-hubFrom, 0)/hubSpan, 1)
	return 1 - hubCut*x
}

// MismatchFactor scales the score of a page that declares a language its
// text is not (webtable.Doc.LangMismatch; mismatch 1): the English pages
// copied untranslated under a site's cs-CZ/ or ko-KR/ tree, which
// otherwise rank beside, or above, the en-US/ page they copy when their
// texts differ too much to be folded as near-copies (the navigation words
// are translated).
func MismatchFactor(mismatch float64) float64 {
	if mismatch > 0 {
		return mismatchCut
	}
	return 1
}

const mismatchCut = 0.8

const (
	hubFrom = 0.35
	hubSpan = 0.4
	hubCut  = 0.8
)

// Search runs q. Syntax errors, out-of-range parameters and queries the
// index refuses return an error wrapping ErrBadQuery; a search that could
// not start or finish before ctx is done returns ctx's error.
//
// A query with nothing to score (match all, possibly with exclusions) is
// ordered by PageRank without scoring, which is cheap; other queries are
// scored (see Score). Searches wait for a slot of the index's limiter
// (see limiter) for as long as ctx allows.
//
// A query with fewHits or fewer hits gets a spelling suggestion when one
// of its words is rare and a close term is common (see suggest); the
// suggestion's results replace the query's when they are clearly more
// (see correct), unless q is Verbatim. When fewer than relaxBelow pages
// have all the plain words of the query (or of its correction), it is run
// again with them optional (see relax) and the results say Relaxed: the
// extra search is only paid by queries that find few pages.
func (ix *Index) Search(ctx context.Context, q Query) (*Results, error) {
	started := time.Now()
	p, err := parseIn(ix.bi.Mapping(), ix.langs.list(), q)
	if err != nil {
		return nil, err
	}
	release, err := ix.limit.acquire(ctx, p.costly)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := ix.compounds(ctx, p, q.Q); err != nil {
		return nil, err
	}
	res, st, err := ix.run(ctx, q, p.q, p.ranked, p.heads)
	if err != nil {
		return nil, err
	}
	out := &Results{}
	if res.Total <= fewHits && !st.partial && !q.Newest {
		if out.Suggestion, err = ix.suggest(ctx, q.Q, p.words); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if out.Suggestion != "" && !q.Verbatim {
			cp, cres, cst, err := ix.correct(ctx, q, out.Suggestion, res.Total)
			if err != nil {
				return nil, err
			}
			if cres != nil {
				p, res, st, out.Corrected = cp, cres, cst, true
				q.Q = out.Suggestion
			}
		}
	}
	out.AllWords = res.Total
	if res.Total < relaxBelow && p.relaxed != nil && !st.partial && !q.Newest {
		rres, rst, err := ix.run(ctx, q, p.relaxed, true, p.heads)
		if err != nil {
			return nil, err
		}
		if rres.Total > res.Total {
			res, st, out.Relaxed = rres, rst, true
		}
	}
	out.Total, out.Partial, out.Results = res.Total, st.partial, make([]Result, 0, len(res.Hits))
	out.TotalEstimated = st.estimated
	marks := ix.newMarks(p.terms)
	for _, h := range res.Hits {
		r := Result{
			URL:         str(h.Fields[fURL]),
			Title:       shownTitle(h.Fields),
			Score:       h.Score,
			Duplicates:  strs(h.Fields[fDuplicates]),
			Similar:     strs(h.Fields[fSimilar]),
			Anchors:     strs(h.Fields[fTopAnchors]),
			FetchedAt:   date(h.Fields[fFetchedAt]),
			IndexedAt:   date(h.Fields[fIndexedAt]),
			ClusterSize: int(num(h.Fields[fClusterSize])),
			FileType:    str(h.Fields[fFileType]),
			Lang:        str(h.Fields[fLang]),
			PageRank:    num(h.Fields[fPageRank]),
		}
		an, terms, english := marks.of(r.Lang)
		// analyzeNear looks for a term's letters in the text, which other
		// stemmers change (German "oberflach" of "Oberflächen").
		analyze := analyzeNear
		if !english {
			analyze = analyzeAll
		}
		text := str(h.Fields[fText])
		spans, hits := snippetAtBy(an, text, terms, analyze)
		if sec, snip := resultSection(an, analyze, r.Title, text, webtable.DecodeSections(str(h.Fields[fSections])), terms, spans, hits); sec != nil {
			r.Section, r.SectionHeading, spans = sec.ID, sec.Heading, snip
		}
		r.Snippet = spans
		out.Results = append(out.Results, r)
	}
	out.Took = time.Since(started)
	return out, nil
}

// marks are the terms of a query's words as each analyzer of the index
// makes them: what snippets mark in a page of that analyzer's languages.
type marks struct {
	m     mapping.IndexMapping
	langs []string
	words []string
	by    map[string]map[string]bool // by analyzer
}

func (ix *Index) newMarks(words []string) *marks {
	return &marks{m: ix.bi.Mapping(), langs: ix.langs.list(), words: words, by: map[string]map[string]bool{}}
}

// of returns the analyzer of a page in lang, the terms to mark in it, and
// whether the analyzer is the English one.
func (m *marks) of(lang string) (_ analysis.Analyzer, _ map[string]bool, english bool) {
	name := langAnalyzer(lang)
	if name == "" || !slices.Contains(m.langs, name) {
		name = analyzer
	}
	an := m.m.AnalyzerNamed(name)
	t, ok := m.by[name]
	if !ok {
		t = analyzeTerms(an, m.words)
		m.by[name] = t
	}
	return an, t, name == analyzer
}

func analyzeAll(an analysis.Analyzer, text string, _ map[string]bool) analysis.TokenStream {
	return an.Analyze([]byte(text))
}

// relaxBelow: a query with fewer hits than this is run again with its
// words optional (see relax). Pages with all the words keep their full
// score there, so they stay first unless a page with fewer of them
// matches clearly better.
const relaxBelow = 10

// correct runs suggestion, the corrected form of q. It returns the
// suggestion's plan and results when they are clearly more than the
// strict hits of q (twice as many, and at least one), else nil
// results.
func (ix *Index) correct(ctx context.Context, q Query, suggestion string, strict uint64) (*plan, *bleve.SearchResult, status, error) {
	cq := q
	cq.Q = suggestion
	cp, err := parseIn(ix.bi.Mapping(), ix.langs.list(), cq)
	if err != nil {
		return nil, nil, status{}, nil // a suggestion that does not parse is not applied
	}
	if err := ix.compounds(ctx, cp, suggestion); err != nil {
		return nil, nil, status{}, err
	}
	res, st, err := ix.run(ctx, cq, cp.q, cp.ranked, cp.heads)
	if err != nil {
		return nil, nil, status{}, err
	}
	if res.Total == 0 || res.Total <= 2*strict {
		return nil, nil, status{}, nil
	}
	return cp, res, st, nil
}

// status says how a search's total was found.
type status struct {
	partial   bool // the search stopped at its time budget: the total is a lower bound
	estimated bool // the fast path estimated the total (topk_words.go)
}

// run searches the index for pq, a parsed form of q whose plain words
// analyse to heads. Ranked searches read PageRank and link density from
// per-segment columns and lift pages with a heading holding heads
// (rankQuery);
// q.Newest orders by fetch time instead, unscored.
func (ix *Index) run(ctx context.Context, q Query, pq query.Query, ranked bool, heads []string) (*bleve.SearchResult, status, error) {
	var req *bleve.SearchRequest
	var rq *rankQuery
	if ranked && !q.Newest {
		rq = &rankQuery{q: pq, ranks: ix.ranks, lengths: ix.lengths, heads: heads, langs: searchLangs(q), cutoff: cutoff(ctx)}
		if !ix.exhaustive {
			rq.topK = q.Start + q.N
		}
		req = bleve.NewSearchRequestOptions(rq, q.N, q.Start, false)
	} else {
		req = bleve.NewSearchRequestOptions(pq, q.N, q.Start, false)
		req.Score = "none"
		if q.Newest {
			// fetched_at has no doc values: Bleve uninverts it once
			// per segment to sort.
			req.SortBy([]string{"-" + fFetchedAt, "_id"})
		} else {
			req.SortBy([]string{"-" + fPageRank, "_id"})
		}
	}
	req.Fields = []string{fURL, fTitle, fTitleShown, fText, fPageRank, fFetchedAt, fIndexedAt, fDuplicates, fTopAnchors, fClusterSize, fFileType, fLang, fSimilar, fSections}
	res, err := ix.bi.SearchInContext(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, status{}, ctx.Err()
		}
		return nil, status{}, searchError(q.Q, err)
	}
	var st status
	if rq != nil {
		if rq.fast.Load() {
			res.Total = rq.total.Load() // the fast path passes over most hits (topk.go)
		}
		st = status{partial: rq.partial.Load(), estimated: rq.estimated.Load()}
	}
	return res, st, nil
}

// queryErrors are the messages of Bleve errors that the query causes.
// parse refuses these queries first; this is the safety net.
var queryErrors = []string{
	"fuzziness exceeds max", "invalid fuzziness", "dfa contains more than",
	"zero width assertions", "word boundaries are not allowed", "error parsing regexp",
	"unable to parse datetime", "date range", "numeric range",
}

// searchError maps an error of a search that parse accepted: one the query
// caused is a bad query, anything else a failure of the index.
func searchError(q string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "TooManyClauses") {
		return badQuery("a wildcard, regular expression or fuzzy term matches more than %d terms; make it more specific", maxExpansion)
	}
	for _, m := range queryErrors {
		if strings.Contains(msg, m) {
			return badQuery("the index cannot run this query: %s", clip(msg, 200))
		}
	}
	return fmt.Errorf("serving: search %q: %w", q, err)
}

// shownTitle is a hit's whole title: title_shown when the indexed title
// is without its site's affix, else title.
func shownTitle(f map[string]any) string {
	if t := str(f[fTitleShown]); t != "" {
		return t
	}
	return str(f[fTitle])
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			return str(v[0])
		}
	}
	return ""
}

func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return []string{}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func date(v any) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, str(v))
	return t
}

// Top returns the n indexed pages with the highest PageRank, of one host
// if host is not empty, and the hosts with the most indexed pages.
func (ix *Index) Top(ctx context.Context, host string, n int) (*Top, error) {
	if n < 1 || n > MaxResults {
		return nil, badQuery("n must be between 1 and %d", MaxResults)
	}
	var q query.Query = query.NewMatchAllQuery()
	if host != "" {
		tq := query.NewTermQuery(host)
		tq.SetField(fHost)
		q = tq
	}
	req := bleve.NewSearchRequestOptions(q, n, 0, false)
	req.SortBy([]string{"-" + fPageRank, fURL})
	req.Fields = []string{fURL, fTitle, fTitleShown, fPageRank, fInbound, fInboundHost}
	req.AddFacet("hosts", bleve.NewFacetRequest(fHost, MaxResults))
	res, err := ix.bi.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("serving: top: %w", err)
	}
	top := &Top{Host: host, Pages: []TopPage{}, Hosts: []HostCount{}}
	for _, h := range res.Hits {
		top.Pages = append(top.Pages, TopPage{URL: str(h.Fields[fURL]), Title: shownTitle(h.Fields),
			PageRank: num(h.Fields[fPageRank]), Inbound: int(num(h.Fields[fInbound])), InboundHost: int(num(h.Fields[fInboundHost]))})
	}
	if f := res.Facets["hosts"]; f != nil && f.Terms != nil {
		for _, t := range f.Terms.Terms() {
			top.Hosts = append(top.Hosts, HostCount{Host: t.Term, Pages: t.Count})
		}
	}
	return top, nil
}
