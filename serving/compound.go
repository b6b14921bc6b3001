package serving

import (
	"context"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// joiners are what pages put between the two words of a compound: none
// ("backup"), or an identifier's underscore or dot ("shared_buffers",
// "user.name"), which Unicode word segmentation keeps inside one word.
// (A hyphen splits a word in two: "f-string" is "f" and "string" already.)
var joiners = []string{"", "_", "."}

// maxJoined is the most words of a query joined into one.
const maxJoined = 3

// compounds rewrites p, a query of plain words, so that two or three
// words in a row of the query as written that pages also write as one
// ("back up": "backup", "auto increment": "autoincrement", "shared
// buffers": "shared_buffers", "user name": "user.name", "effective cache
// size": "effective_cache_size", the longest first) match either way: the
// words' clauses become a disjunction of them and the joined words, over
// the text fields. Only pairs of letters whose joined word is one term
// that some page's text has are rewritten, and only a query of letters
// (a question mark at its end allowed): the pairs are those of the query
// as written, stop words included ("up" of "back up"), which parse
// drops.
// Such a query loses the fast paths (topk.go): the clause is not a
// word's.
func (ix *Index) compounds(ctx context.Context, p *plan, s string) error {
	if p.termOf == nil {
		return nil
	}
	b, ok := p.q.(*query.BooleanQuery)
	if !ok {
		return nil
	}
	c, ok := b.Must.(*query.ConjunctionQuery)
	if !ok {
		return nil
	}
	raw := strings.Fields(strings.TrimSuffix(strings.TrimSpace(s), "?"))
	for _, w := range raw {
		if strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			return nil
		}
	}
	an := ix.bi.Mapping().AnalyzerNamed(analyzer)
	if an == nil || len(raw) < 2 {
		return nil
	}
	termOf := func(w string) string {
		toks := an.Analyze([]byte(w))
		if len(toks) != 1 {
			return ""
		}
		return string(toks[0].Term)
	}
	clauseOf := func(t string, taken map[int]bool) int {
		if t == "" {
			return -1
		}
		for i, sub := range c.Conjuncts {
			if !taken[i] && p.termOf[sub] == t {
				return i
			}
		}
		return -1
	}
	var r index.IndexReader
	conj := append([]query.Query(nil), c.Conjuncts...)
	taken := map[int]bool{}
	changed := false
	for i := 0; i+1 < len(raw); i++ {
		// The longest run of words from i that pages write as one: three
		// words (an identifier: "effective cache size"), then two.
		for n := min(maxJoined, len(raw)-i); n >= 2; n-- {
			words := raw[i : i+n]
			terms := make([]string, n)
			var ks []int // the words' clauses
			claimed := maps.Clone(taken)
			for w, word := range words {
				terms[w] = termOf(word)
				if k := clauseOf(terms[w], claimed); k >= 0 {
					ks = append(ks, k)
					claimed[k] = true
				}
			}
			if len(ks) == 0 {
				continue
			}
			var alts []query.Query // the joined words some page has
			for _, j := range joiners {
				joined := strings.ToLower(strings.Join(words, j))
				jt := termOf(joined)
				if jt == "" || slices.Contains(terms, jt) {
					continue
				}
				if r == nil {
					adv, err := ix.bi.Advanced()
					if err != nil {
						return err
					}
					if r, err = adv.Reader(); err != nil {
						return err
					}
					defer r.Close()
				}
				df, err := docFreq(ctx, r, jt)
				if err != nil {
					return err
				}
				if df == 0 {
					continue
				}
				alt := fielded(query.NewMatchQuery(joined))
				for _, d := range alt.(*query.DisjunctionQuery).Disjuncts {
					setAnalyzer(d, analyzer, 1)
				}
				alts = append(alts, alt)
				p.terms = append(p.terms, joined) // marked in snippets too
			}
			if len(alts) == 0 {
				continue
			}
			parts := make([]query.Query, len(ks))
			for x, k := range ks {
				parts[x] = conj[k]
				taken[k] = true
			}
			var all query.Query = parts[0]
			if len(parts) > 1 {
				all = query.NewConjunctionQuery(parts)
			}
			either := query.NewDisjunctionQuery(append([]query.Query{all}, alts...))
			conj[ks[0]] = either
			for _, k := range ks[1:] {
				conj[k] = nil
			}
			p.optional[either] = true
			changed = true
			i += n - 1
			break
		}
	}
	if !changed {
		return nil
	}
	var out []query.Query
	for _, q := range conj {
		if q != nil {
			out = append(out, q)
		}
	}
	nb := *b
	nb.Must = query.NewConjunctionQuery(out)
	p.q = &nb
	p.relaxed = relax(p.q, p.optional)
	return nil
}
