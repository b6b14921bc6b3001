package serving

import (
	"github.com/blevesearch/bleve/v2/search/query"
)

// relax returns q with its words made optional, for when no page has
// them all: the words and phrases of q's top-level conjunction that are in
// optional become a disjunction of which at least one must match; fields,
// hosts, ranges and exclusions stay as they are. Bleve scales a
// disjunction's score by the share of its clauses that matched, so pages
// with more of the words rank first; pages with all of them score twice.
//
// It returns nil when q has fewer than two optional words at its top
// level (nothing to relax). q is not modified; the result shares its
// leaves.
func relax(q query.Query, optional map[query.Query]bool) query.Query {
	b, ok := q.(*query.BooleanQuery)
	if !ok {
		return nil
	}
	c, ok := b.Must.(*query.ConjunctionQuery)
	if !ok {
		return nil
	}
	var words, rest []query.Query
	for _, sub := range c.Conjuncts {
		if optional[sub] {
			words = append(words, sub)
		} else {
			rest = append(rest, sub)
		}
	}
	if len(words) < 2 {
		return nil
	}
	some := query.NewDisjunctionQuery(words)
	some.SetMin(1)
	out := *b // keeps the query-string mode and the exclusions
	if len(rest) == 0 {
		out.Must = some
	} else {
		out.Must = query.NewConjunctionQuery(append(rest, some))
	}
	// The strict query again, optional: a page with all the words scores
	// about twice what it would otherwise, so it stays above pages with
	// fewer of them unless one of those matches clearly better.
	all := query.Query(c)
	if out.Should != nil {
		all = query.NewDisjunctionQuery([]query.Query{out.Should, c})
	}
	out.Should = all
	return &out
}
