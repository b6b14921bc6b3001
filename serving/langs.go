package serving

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/analysis"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/ar" // the analyzers langAnalyzers names
	_ "github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/ckb"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/da"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/de"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/es"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/fa"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/fi"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/fr"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/hi"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/hr"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/hu"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/it"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/nl"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/no"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/pl"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/pt"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/ro"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/ru"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/sv"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/tr"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Per-language analysis. A page's title, text and anchors are analysed
// by its language's analyzer (its stop words and stemmer: German
// "Pakete" is indexed as "paket"), an English or unknown page's by the
// English one (analyzer). The language picks the document's type mapping
// (document.BleveType): one per analyzer, identical to the default
// mapping but for the analyzer of the text fields, so every page keeps
// the same fields.
//
// A query word is then analysed by every analyzer of the languages the
// index holds (Index.langs), and matches any of the analyses, another
// language's only in the pages of that language (see ofLangs): the word
// of each field becomes a disjunction of one match query per distinct
// analysis, each naming its analyzer (Bleve would otherwise pick the
// analyzer of the first type mapping its map order gives). Each of them
// is boosted by their count, which cancels the coordination factor Bleve
// puts on a disjunction: a page has one analysis, matches one of them,
// and scores what it would with that analysis alone. A word that a
// language drops as a stop word ("und", "les") is matched by every page
// of that language with a negligible score, so that a query in that
// language, whose words are all required, still finds its pages.
//
// An index whose stored mapping has no type mappings (built before) keeps
// analysing every page as English, and its queries are analysed so:
// search -rebuild builds the new mapping.

// langAnalyzers maps a language's primary subtag to the name of its
// Bleve analyzer. English and the languages not listed use analyzer.
var langAnalyzers = map[string]string{
	"ar": "ar", "ckb": "ckb", "da": "da", "de": "de", "es": "es", "fa": "fa", "fi": "fi", "fr": "fr",
	"hi": "hi", "hr": "hr", "hu": "hu", "it": "it", "nl": "nl", "no": "no", "nb": "no", "nn": "no",
	"pl": "pl", "pt": "pt", "ro": "ro", "ru": "ru", "sv": "sv", "tr": "tr",
	"zh": "cjk", "ja": "cjk", "ko": "cjk",
}

// langAnalyzer returns the analyzer of lang (a primary subtag), or ""
// for the default (English) one.
func langAnalyzer(lang string) string { return langAnalyzers[lang] }

// langTypes lists the analyzers of langAnalyzers once each, sorted: the
// type mappings of a new index.
func langTypes() []string {
	var out []string
	for _, a := range langAnalyzers {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// langsOfAnalyzer returns the primary subtags analysed by a, sorted.
func langsOfAnalyzer(a string) []string {
	var out []string
	for l, x := range langAnalyzers {
		if x == a {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// BleveType is the document's type mapping: its language's analyzer, ""
// (the default mapping) for English and unknown languages.
func (d document) BleveType() string { return langAnalyzer(d.Lang) }

// indexLangs are the analyzers, other than the default, of the languages
// an index holds and whose type mapping it has: what query words are
// analysed by besides the English analyzer. Safe for concurrent use.
type indexLangs struct {
	m   *mapping.IndexMappingImpl // nil: the index has no type mappings
	mu  sync.Mutex                // serializes add
	cur atomic.Pointer[[]string]  // sorted; replaced, never modified
}

func newIndexLangs(m mapping.IndexMapping) *indexLangs {
	l := &indexLangs{}
	if im, ok := m.(*mapping.IndexMappingImpl); ok && len(im.TypeMapping) > 0 {
		l.m = im
	}
	l.cur.Store(new([]string))
	return l
}

// list returns the analyzers; the slice must not be modified.
func (l *indexLangs) list() []string { return *l.cur.Load() }

// add records pages in langs (primary subtags).
func (l *indexLangs) add(langs ...string) {
	if l.m == nil {
		return
	}
	cur := l.list()
	var more []string
	for _, lang := range langs {
		a := langAnalyzer(lang)
		if a == "" || slices.Contains(cur, a) || slices.Contains(more, a) || l.m.TypeMapping[a] == nil {
			continue
		}
		more = append(more, a)
	}
	if len(more) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	next := slices.Clone(l.list())
	for _, a := range more {
		if !slices.Contains(next, a) {
			next = append(next, a)
		}
	}
	slices.Sort(next)
	l.cur.Store(&next)
}

// langAnalysis is one way the analyzers of an index analyse a query text.
type langAnalysis struct {
	analyzer string
	key      string   // the terms with their positions
	english  bool     // the English analyzer's: English and unknown pages have these terms
	others   []string // the other analyzers of langs that give the same terms
}

// analyses returns the distinct analyses of text by the English analyzer
// and then by langs (the first analyzer of each), and the analyzers of
// langs that turn it into nothing (stop words) while the English one does
// not.
func analyses(m mapping.IndexMapping, langs []string, text string) (out []langAnalysis, stop []string) {
	en := false
	for i, name := range append([]string{analyzer}, langs...) {
		an := m.AnalyzerNamed(name)
		if an == nil {
			continue
		}
		toks := an.Analyze([]byte(text))
		if len(toks) == 0 {
			if i > 0 && en {
				stop = append(stop, name)
			}
			continue
		}
		en = en || i == 0
		k := tokensKey(toks)
		if j := slices.IndexFunc(out, func(a langAnalysis) bool { return a.key == k }); j >= 0 {
			out[j].others = append(out[j].others, name)
		} else {
			out = append(out, langAnalysis{analyzer: name, key: k, english: i == 0})
		}
	}
	return out, stop
}

func tokensKey(toks analysis.TokenStream) string {
	var b strings.Builder
	for _, t := range toks {
		fmt.Fprintf(&b, "%d:%s ", t.Position, t.Term)
	}
	return b.String()
}

// stopClauseBoost is the boost of the clause that lets the pages of a
// language match a word it drops: next to nothing, so that they rank by
// their other words.
const stopClauseBoost = 1e-4

// inLangs returns q, a match or phrase query over one text field, as a
// disjunction of its analyses (see the top of this file), or q itself
// naming the English analyzer when there is one analysis. stopWords adds
// the clauses of the languages that drop the text.
func inLangs(m mapping.IndexMapping, langs []string, q query.Query, stopWords bool) query.Query {
	var text string
	switch q := q.(type) {
	case *query.MatchQuery:
		text = q.Match
	case *query.MatchPhraseQuery:
		text = q.MatchPhrase
	default:
		return q
	}
	as, stop := analyses(m, langs, text)
	if !stopWords {
		stop = nil
	}
	stops := langClauses(stop)
	n := float64(len(as) + len(stops))
	if len(as) <= 1 && len(stops) == 0 {
		setAnalyzer(q, analyzer, 1)
		return q
	}
	d := make([]query.Query, 0, len(as)+len(stops))
	for _, a := range as {
		var c query.Query
		switch q := q.(type) {
		case *query.MatchQuery:
			x := *q
			c = &x
		case *query.MatchPhraseQuery:
			x := *q
			c = &x
		}
		setAnalyzer(c, a.analyzer, n)
		if !a.english {
			c = ofLangs(c, append([]string{a.analyzer}, a.others...))
		}
		d = append(d, c)
	}
	return query.NewDisjunctionQuery(append(d, stops...))
}

// ofLangs returns q restricted to the pages of the languages of
// analyzers: another language's analysis of a word is not that word in
// English pages ("handlr", a typo, is "handl" to a stemmer that drops a
// final r, which is "handles" in English). The language clause adds next
// to nothing to the score.
func ofLangs(q query.Query, analyzers []string) query.Query {
	ls := langClauses(analyzers)
	if len(ls) == 0 {
		return q
	}
	return query.NewConjunctionQuery([]query.Query{q, query.NewDisjunctionQuery(ls)})
}

// langClauses returns a clause for each language of analyzers, matching
// the pages of that language and adding next to nothing to their score.
func langClauses(analyzers []string) []query.Query {
	var ls []query.Query
	for _, a := range analyzers {
		for _, l := range langsOfAnalyzer(a) {
			t := query.NewTermQuery(l)
			t.SetField(fLang)
			t.SetBoost(stopClauseBoost)
			ls = append(ls, t)
		}
	}
	return ls
}

// setAnalyzer names q's analyzer and multiplies its boost by f.
func setAnalyzer(q query.Query, name string, f float64) {
	switch q := q.(type) {
	case *query.MatchQuery:
		q.Analyzer = name
		q.SetBoost(q.Boost() * f)
	case *query.MatchPhraseQuery:
		q.Analyzer = name
		q.SetBoost(q.Boost() * f)
	}
}
