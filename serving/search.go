package serving

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
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
	return bm25 * (1 + rankWeight*math.Log1p(max(pagerank, 0)))
}

const rankWeight = 0.45

// Search runs q. Syntax errors and out-of-range parameters return an
// error wrapping ErrBadQuery.
func (ix *Index) Search(ctx context.Context, q Query) (*Results, error) {
	started := time.Now()
	parsed, terms, err := parse(q)
	if err != nil {
		return nil, err
	}
	scored := query.NewCustomScoreQueryWithScorer(parsed, func(_ context.Context, d *search.DocumentMatch) (float64, error) {
		pr, _ := d.Fields[fPageRank].(float64)
		return Score(d.Score, pr), nil
	}, []string{fPageRank}, nil)
	req := bleve.NewSearchRequestOptions(scored, q.N, q.Start, false)
	req.Fields = []string{fURL, fTitle, fText, fPageRank, fFetchedAt, fIndexedAt, fDuplicates, fTopAnchors, fClusterSize}
	res, err := ix.bi.SearchInContext(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("serving: search %q: %w", q.Q, err)
	}
	out := &Results{Total: res.Total, Results: make([]Result, 0, len(res.Hits))}
	an := ix.bi.Mapping().AnalyzerNamed(analyzer)
	marks := analyzeTerms(an, terms)
	for _, h := range res.Hits {
		r := Result{
			URL:         str(h.Fields[fURL]),
			Title:       str(h.Fields[fTitle]),
			Score:       h.Score,
			Duplicates:  strs(h.Fields[fDuplicates]),
			Anchors:     strs(h.Fields[fTopAnchors]),
			FetchedAt:   date(h.Fields[fFetchedAt]),
			IndexedAt:   date(h.Fields[fIndexedAt]),
			ClusterSize: int(num(h.Fields[fClusterSize])),
			PageRank:    num(h.Fields[fPageRank]),
		}
		r.Snippet = snippet(an, str(h.Fields[fText]), marks)
		out.Results = append(out.Results, r)
	}
	out.Took = time.Since(started)
	return out, nil
}

func badQuery(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
}

// parse checks q's limits and parses its query string, expanding
// unqualified terms over the text fields. It returns the terms to mark in
// snippets.
func parse(q Query) (query.Query, []string, error) {
	s := strings.TrimSpace(q.Q)
	switch {
	case s == "":
		return nil, nil, badQuery("empty query")
	case len(s) > MaxQueryLen:
		return nil, nil, badQuery("query longer than %d bytes", MaxQueryLen)
	case !utf8.ValidString(s):
		return nil, nil, badQuery("query is not valid UTF-8")
	case q.N < 1 || q.N > MaxResults:
		return nil, nil, badQuery("n must be between 1 and %d", MaxResults)
	case q.Start < 0 || q.Start > MaxStart:
		return nil, nil, badQuery("start must be between 0 and %d", MaxStart)
	}
	p, err := query.NewQueryStringQuery(s).Parse()
	if err != nil {
		return nil, nil, badQuery("%s", strings.TrimPrefix(err.Error(), "parse error: "))
	}
	p = allRequired(p)
	var terms []string
	p, err = expand(p, false, &terms)
	if err != nil {
		return nil, nil, err
	}
	if v, ok := p.(query.ValidatableQuery); ok {
		if err := v.Validate(); err != nil {
			return nil, nil, badQuery("%v", err)
		}
	}
	return p, terms, nil
}

// allRequired makes plain words all required, as users of web search
// engines expect: "a b" finds pages with both. Bleve's query strings make
// them optional unless some word has a +; with one, the rest stay
// optional (they rank, not filter).
func allRequired(q query.Query) query.Query {
	b, ok := q.(*query.BooleanQuery)
	if !ok || b.Must != nil || b.Should == nil {
		return q
	}
	d, ok := b.Should.(*query.DisjunctionQuery)
	if !ok {
		return q
	}
	b.Must, b.Should = query.NewConjunctionQuery(d.Disjuncts), nil
	return b
}

// expand rewrites the leaves of a parsed query string that name no field
// into a disjunction over the text fields with their boosts, and collects
// the words of the positive leaves for snippets.
func expand(q query.Query, negated bool, terms *[]string) (query.Query, error) {
	collect := func(field, s string) {
		if !negated && (field == "" || field == fTitle || field == fText || field == fAnchors) {
			*terms = append(*terms, s)
		}
	}
	var err error
	switch q := q.(type) {
	case *query.BooleanQuery:
		for _, sub := range []struct {
			q   *query.Query
			neg bool
		}{{&q.Must, negated}, {&q.Should, negated}, {&q.MustNot, !negated}, {&q.Filter, negated}} {
			if *sub.q != nil {
				if *sub.q, err = expand(*sub.q, sub.neg, terms); err != nil {
					return nil, err
				}
			}
		}
	case *query.ConjunctionQuery:
		for i := range q.Conjuncts {
			if q.Conjuncts[i], err = expand(q.Conjuncts[i], negated, terms); err != nil {
				return nil, err
			}
		}
	case *query.DisjunctionQuery:
		for i := range q.Disjuncts {
			if q.Disjuncts[i], err = expand(q.Disjuncts[i], negated, terms); err != nil {
				return nil, err
			}
		}
	case *query.MatchQuery:
		collect(q.FieldVal, q.Match)
		if q.FieldVal == "" {
			return overFields(q), nil
		}
	case *query.MatchPhraseQuery:
		collect(q.FieldVal, q.MatchPhrase)
		if q.FieldVal == "" {
			return overFields(q), nil
		}
	case *query.FuzzyQuery:
		collect(q.FieldVal, q.Term)
		if q.FieldVal == "" {
			return overFields(q), nil
		}
	case *query.PrefixQuery:
		if q.FieldVal == "" {
			return overFields(q), nil
		}
	case *query.WildcardQuery:
		if q.FieldVal == "" {
			return overFields(q), nil
		}
	case *query.RegexpQuery:
		if _, err := regexp.Compile(q.Regexp); err != nil {
			return nil, badQuery("bad regular expression /%s/: %v", q.Regexp, err)
		}
		if q.FieldVal == "" {
			return overFields(q), nil
		}
	}
	return q, nil
}

// overFields returns q as a disjunction of copies, one per text field
// with its boost.
func overFields[T any, P interface {
	*T
	query.FieldableQuery
	query.BoostableQuery
}](q P) query.Query {
	d := make([]query.Query, 0, len(boosts))
	for _, b := range boosts {
		c := *q
		P(&c).SetField(b.field)
		P(&c).SetBoost(b.boost * q.Boost())
		d = append(d, P(&c))
	}
	return query.NewDisjunctionQuery(d)
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
	req.Fields = []string{fURL, fTitle, fPageRank, fInbound}
	req.AddFacet("hosts", bleve.NewFacetRequest(fHost, MaxResults))
	res, err := ix.bi.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("serving: top: %w", err)
	}
	top := &Top{Host: host, Pages: []TopPage{}, Hosts: []HostCount{}}
	for _, h := range res.Hits {
		top.Pages = append(top.Pages, TopPage{URL: str(h.Fields[fURL]), Title: str(h.Fields[fTitle]),
			PageRank: num(h.Fields[fPageRank]), Inbound: int(num(h.Fields[fInbound]))})
	}
	if f := res.Facets["hosts"]; f != nil && f.Terms != nil {
		for _, t := range f.Terms.Terms() {
			top.Hosts = append(top.Hosts, HostCount{Host: t.Term, Pages: t.Count})
		}
	}
	return top, nil
}
