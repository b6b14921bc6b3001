package serving

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Fields a query may name, by kind. site is not a field of the index: it
// is rewritten into host terms (see hostQuery).
var queryFields = map[string]fieldKind{
	fTitle: kindText, fText: kindText, fAnchors: kindText, fHeadings: kindText,
	fURL: kindKeyword, fHost: kindHost, fLang: kindKeyword, fFileType: kindKeyword, fieldSite: kindHost,
	fPageRank: kindNumber, fFetchedAt: kindDate, fIndexedAt: kindDate,
}

type fieldKind int

const (
	kindText fieldKind = iota
	kindKeyword
	kindHost
	kindNumber
	kindDate
)

const fieldSite = "site"

// fieldNames lists the fields a query may name, for error messages.
func fieldNames() string {
	names := make([]string, 0, len(queryFields))
	for f := range queryFields {
		names = append(names, f)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Limits on the expensive parts of a query: regular expressions,
// wildcards, fuzzy and prefix terms. Each expands to the index terms it
// matches, at most maxExpansion of them (see limits.go).
const maxExpensiveTerms = 8

// plan is a parsed query, ready to run.
type plan struct {
	q       query.Query
	relaxed query.Query // q with its words made optional, nil when it cannot be relaxed (see relax)
	terms   []string    // words to mark in snippets
	words   []string    // plain words over the text fields, as written: what spelling suggestions correct
	heads   []string    // the terms of words: what a heading should hold (see headings.go)
	// optional and termOf are the rewriter's, for a query of plain
	// words: what joining words rewrites (see compound.go).
	optional map[query.Query]bool
	termOf   map[query.Query]string
	ranked   bool // false: nothing to score (match all, or only exclusions); ordered by PageRank
	costly   bool // has regexp, wildcard, fuzzy or prefix terms
}

// parse checks q's limits and parses its query string: unqualified terms
// are expanded over the text fields, words the analyzer drops (stop words,
// punctuation) are removed, host: and site: become host terms, and
// everything Bleve would refuse at search time is refused here with an
// error wrapping ErrBadQuery.
//
// m is the index's mapping: an index built before title_words existed has
// no words analyzer, and a query of stop words finds nothing there.
func parse(m mapping.IndexMapping, q Query) (*plan, error) { return parseIn(m, nil, q) }

// parseIn is parse for an index holding pages in langs (analyzers other
// than the English one; see langs.go): query words are analysed by each.
func parseIn(m mapping.IndexMapping, langs []string, q Query) (*plan, error) {
	s := strings.TrimSpace(q.Q)
	switch {
	case s == "":
		return nil, badQuery("empty query")
	case len(s) > MaxQueryLen:
		return nil, badQuery("query longer than %d bytes", MaxQueryLen)
	case !utf8.ValidString(s):
		return nil, badQuery("query is not valid UTF-8")
	case q.N < 1 || q.N > MaxResults:
		return nil, badQuery("n must be between 1 and %d", MaxResults)
	case q.Start < 0 || q.Start > MaxStart:
		return nil, badQuery("start must be between 0 and %d", MaxStart)
	}
	p, err := query.NewQueryStringQuery(escapeScopes(escapeHostValues(s))).Parse()
	if err != nil {
		return nil, parseError(s, err)
	}
	var phraseLangs []string
	for _, l := range searchLangs(q) {
		if a := langAnalyzer(l); a != "" && slices.Contains(langs, a) && !slices.Contains(phraseLangs, a) {
			phraseLangs = append(phraseLangs, a)
		}
	}
	r := rewriter{m: m, langs: langs, phraseLangs: phraseLangs, an: m.AnalyzerNamed(analyzer), titleWords: m.AnalyzerNamed(wordsAnalyzer) != nil, question: isQuestion(s), optional: map[query.Query]bool{}, termOf: map[query.Query]string{}}
	p, defaulted := allRequired(p)
	out, err := r.rewrite(p, false)
	if err != nil {
		return nil, err
	}
	if r.costly > maxExpensiveTerms {
		return nil, badQuery("too many wildcard, regular expression or fuzzy terms: %d, at most %d are allowed", r.costly, maxExpensiveTerms)
	}
	out, err = r.ensurePositive(out)
	if err != nil {
		return nil, err
	}
	if v, ok := out.(query.ValidatableQuery); ok {
		if err := v.Validate(); err != nil {
			return nil, badQuery("%v", err)
		}
	}
	if defaulted {
		out = r.withProximity(out)
	}
	pl := &plan{q: out, terms: r.terms, words: r.plain, heads: headTerms(r.an, r.plain), ranked: !unranked(out), costly: r.costly > 0}
	if defaulted {
		pl.relaxed = relax(out, r.optional)
		pl.optional, pl.termOf = r.optional, r.termOf
	}
	return pl, nil
}

// withProximity adds to a query of plain words (all required by
// allRequired) an optional phrase of them over the text fields: pages
// where the words stand together ("foreign key", "garbage collection")
// rank above pages that have them apart. Only the plain words of a query
// made of them alone count (no fields, phrases or patterns).
func (r *rewriter) withProximity(q query.Query) query.Query {
	plain := r.plain
	b, ok := q.(*query.BooleanQuery)
	if !ok || b.Should != nil || len(plain) < 2 {
		return q
	}
	c, ok := b.Must.(*query.ConjunctionQuery)
	if !ok || len(c.Conjuncts) != len(plain) {
		return q
	}
	// In the searcher's languages only (and English): a phrase in every
	// language the index holds costs more than the words themselves.
	all := r.langs
	r.langs = r.phraseLangs
	b.Should = r.fielded(query.NewMatchPhraseQuery(strings.Join(plain, " ")), false)
	r.langs = all
	return b
}

// escapeScopes escapes the colons of a C++ or Rust scope outside quotes
// (std::vector, QtConcurrent::run): the query string would read "std" as
// a field name and fail on the second colon. Escaped, the word is the
// analyzer's (its parts, required, and an optional phrase of them).
func escapeScopes(s string) string {
	if !strings.Contains(s, "::") {
		return s
	}
	var b strings.Builder
	inQuote, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == ':' && i+1 < len(s) && s[i+1] == ':':
			b.WriteString(`\:\:`)
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// parseError turns a query-string parse error into a plain message. The
// parser reports its own panics (a lone "/" makes one) as "runtime error".
func parseError(s string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "parse error: ")
	switch {
	case strings.Contains(msg, "runtime error"):
		if strings.Contains(s, "/") {
			return badQuery(`the query could not be parsed: a regular expression is written /re/ with no space, ':', '^' or '~' inside (it matches whole terms, so ^ and $ are not needed); write \/ for a plain slash`)
		}
		return badQuery("the query could not be parsed")
	case strings.Contains(msg, "strconv."):
		return badQuery("the query could not be parsed: a number after ~ (0 to 2) or ^ (a boost) is malformed")
	}
	return badQuery("%s", msg)
}

// allRequired makes plain words all required, as users of web search
// engines expect: "a b" finds pages with both. Bleve's query strings make
// them optional unless some word has a +; with one, the rest stay
// optional (they rank, not filter). changed tells whether it made them
// required: only then may the search relax them again (see relax).
func allRequired(q query.Query) (_ query.Query, changed bool) {
	b, ok := q.(*query.BooleanQuery)
	if !ok || b.Must != nil || b.Should == nil {
		return q, false
	}
	d, ok := b.Should.(*query.DisjunctionQuery)
	if !ok {
		return q, false
	}
	b.Must, b.Should = query.NewConjunctionQuery(d.Disjuncts), nil
	return b, true
}

// dropped is a word or phrase of the query that the analyzer turned into
// nothing.
type dropped struct {
	text   string
	phrase bool
}

// rewriter walks a parsed query string.
type rewriter struct {
	m     mapping.IndexMapping
	langs []string // analyzers of the index's languages besides the English one
	// phraseLangs are those of langs that the searcher's languages
	// (searchLangs) use: the optional phrase of a query's words is
	// analysed by them alone.
	phraseLangs []string
	an          analysis.Analyzer
	titleWords  bool      // the index has title_words
	question    bool      // the query is a question: its filler words are dropped (see fillers)
	terms       []string  // positive words over text fields, for snippets
	plain       []string  // positive plain words over text fields (no phrase, no fuzziness), for spelling
	dropped     []dropped // positive words and phrases made only of stop words
	costly      int       // expensive terms, before field expansion
	// optional holds the rewritten positive words, phrases and term
	// patterns over text fields: what a relaxed query may leave out.
	// Fields, hosts, ranges and exclusions always stay required.
	optional map[query.Query]bool
	// termOf is the term of each rewritten plain word of one term.
	termOf map[query.Query]string
}

// text returns q, a positive query over the text fields, recorded as one
// a relaxed query may leave out.
func (r *rewriter) text(q query.Query, negated bool) query.Query {
	if !negated {
		r.optional[q] = true
	}
	return q
}

// rewrite returns q rewritten, or nil when nothing of it is left (its
// words were all stop words or punctuation).
func (r *rewriter) rewrite(q query.Query, negated bool) (query.Query, error) {
	var err error
	switch q := q.(type) {
	case *query.BooleanQuery:
		for _, sub := range []struct {
			q   *query.Query
			neg bool
		}{{&q.Must, negated}, {&q.Should, negated}, {&q.MustNot, !negated}, {&q.Filter, negated}} {
			if *sub.q != nil {
				if *sub.q, err = r.rewrite(*sub.q, sub.neg); err != nil {
					return nil, err
				}
			}
		}
		if q.Must == nil && q.Should == nil && q.MustNot == nil && q.Filter == nil {
			return nil, nil
		}
		return q, nil
	case *query.ConjunctionQuery:
		if q.Conjuncts, err = r.rewriteAll(q.Conjuncts, negated); err != nil || len(q.Conjuncts) == 0 {
			return nil, err
		}
		return q, nil
	case *query.DisjunctionQuery:
		if q.Disjuncts, err = r.rewriteAll(q.Disjuncts, negated); err != nil || len(q.Disjuncts) == 0 {
			return nil, err
		}
		if q.Min > float64(len(q.Disjuncts)) {
			q.Min = float64(len(q.Disjuncts))
		}
		return q, nil
	case *query.MatchQuery:
		return r.words(q, q.FieldVal, q.Match, q.Fuzziness, false, negated)
	case *query.MatchPhraseQuery:
		return r.words(q, q.FieldVal, q.MatchPhrase, q.Fuzziness, true, negated)
	case *query.FuzzyQuery:
		if err := checkField(q.FieldVal, kindText, kindKeyword); err != nil {
			return nil, err
		}
		if err := checkFuzziness(q.Term, q.Fuzziness); err != nil {
			return nil, err
		}
		r.costly++
		if !negated && isText(q.FieldVal) {
			r.terms = append(r.terms, q.Term)
			return r.text(fielded(q), negated), nil
		}
		return fielded(q), nil
	case *query.PrefixQuery:
		if err := checkField(q.FieldVal, kindText, kindKeyword); err != nil {
			return nil, err
		}
		r.costly++
		if isText(q.FieldVal) {
			return r.text(fielded(q), negated), nil
		}
		return fielded(q), nil
	case *query.WildcardQuery:
		if strings.Trim(q.Wildcard, "*") == "" && (q.FieldVal == "" || q.FieldVal == "*") {
			return query.NewMatchAllQuery(), nil
		}
		if err := checkField(q.FieldVal, kindText, kindKeyword, kindHost); err != nil {
			return nil, err
		}
		if q.FieldVal == fieldSite {
			return nil, badQuery("site: takes a host name such as example.com, without wildcards")
		}
		if err := checkWildcard(q.Wildcard); err != nil {
			return nil, err
		}
		r.costly++
		if isText(q.FieldVal) {
			return r.text(fielded(q), negated), nil
		}
		return fielded(q), nil
	case *query.RegexpQuery:
		if err := checkField(q.FieldVal, kindText, kindKeyword, kindHost); err != nil {
			return nil, err
		}
		if q.FieldVal == fieldSite {
			return nil, badQuery("site: takes a host name such as example.com, not a regular expression")
		}
		if err := checkRegexp(q.Regexp); err != nil {
			return nil, err
		}
		r.costly++
		if isText(q.FieldVal) {
			return r.text(fielded(q), negated), nil
		}
		return fielded(q), nil
	case *query.NumericRangeQuery:
		if isNumberLiteral(q) && (q.FieldVal == "" || queryFields[q.FieldVal] != kindNumber) {
			// The query string reads every number also as a numeric
			// range on its field; it only means something on a numeric
			// field.
			return nil, nil
		}
		if err := checkField(q.FieldVal, kindNumber); err != nil {
			return nil, err
		}
		return q, nil
	case *query.DateRangeStringQuery:
		if err := checkField(q.FieldVal, kindDate); err != nil {
			return nil, err
		}
		return q, nil
	}
	return q, nil
}

func (r *rewriter) rewriteAll(qs []query.Query, negated bool) ([]query.Query, error) {
	out := qs[:0]
	for _, q := range qs {
		q, err := r.rewrite(q, negated)
		if err != nil {
			return nil, err
		}
		if q != nil {
			out = append(out, q)
		}
	}
	return out, nil
}

// words rewrites a match or phrase query: host and site become host terms;
// over text fields, a value the analyzer turns into nothing is dropped
// (remembered when it has letters, for the stop-word fallback), and an
// unqualified one is expanded over the text fields.
func (r *rewriter) words(q fieldQuery, field, text string, fuzziness int, phrase, negated bool) (query.Query, error) {
	if err := checkField(field, kindText, kindKeyword, kindHost); err != nil {
		return nil, err
	}
	if err := checkFuzziness(text, fuzziness); err != nil {
		return nil, err
	}
	if queryFields[field] == kindHost {
		return hostQuery(field, text)
	}
	if !isText(field) {
		if strings.TrimSpace(text) == "" {
			return nil, badQuery("nothing to search for after %s:", field)
		}
		if fuzziness > 0 {
			r.costly++
		}
		if phrase {
			// A keyword field has no positions: a quoted value is the
			// whole term (url:"http://example.com/").
			m := query.NewMatchQuery(text)
			m.SetField(field)
			m.SetBoost(q.Boost())
			m.SetFuzziness(fuzziness)
			return m, nil
		}
		return q, nil
	}
	var toks analysis.TokenStream
	if r.an != nil {
		toks = r.an.Analyze([]byte(text))
	}
	if r.an != nil && len(toks) == 0 {
		hasWord := strings.IndexFunc(text, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsNumber(c) }) >= 0
		switch {
		case !hasWord && field != "":
			return nil, badQuery("nothing to search for in %s:%s; put special characters in quotes or escape them with \\", field, text)
		case hasWord && !negated:
			r.dropped = append(r.dropped, dropped{text: text, phrase: phrase})
		}
		return nil, nil
	}
	if r.question && field == "" && !phrase && fuzziness == 0 && !negated && fillers[strings.ToLower(text)] {
		r.dropped = append(r.dropped, dropped{text: text})
		return nil, nil
	}
	if fuzziness > 0 {
		r.costly++
	}
	if !phrase && fuzziness == 0 && !negated && positions(toks) > 1 {
		// A word the analyzer splits ("f-string", "pre-commit", "x86-64"):
		// all its terms, not any of them (as a match query would), and
		// an optional phrase of them, so that pages with its parts in a
		// row rank first.
		if m, ok := q.(*query.MatchQuery); ok {
			m.SetOperator(query.MatchQueryOperatorAnd)
		}
		p := query.NewMatchPhraseQuery(text)
		p.SetField(q.Field())
		p.SetBoost(q.Boost())
		r.terms = append(r.terms, text)
		r.plain = append(r.plain, text)
		return r.text(query.NewBooleanQuery([]query.Query{r.fielded(q, false)}, []query.Query{r.fielded(p, false)}, nil), negated), nil
	}
	if !negated {
		r.terms = append(r.terms, text)
		if !phrase && fuzziness == 0 {
			r.plain = append(r.plain, text)
		}
	}
	out := r.text(r.fielded(q, !phrase && !negated), negated)
	if !negated && !phrase && fuzziness == 0 && field == "" && len(toks) == 1 {
		r.termOf[out] = string(toks[0].Term)
	}
	return out, nil
}

// interrogatives are the first words of a question ("how do I …", "can
// I …", "what is …").
var interrogatives = map[string]bool{
	"how": true, "what": true, "why": true, "when": true, "where": true, "which": true, "who": true,
	"can": true, "could": true, "should": true, "would": true, "is": true, "are": true,
	"do": true, "does": true, "did": true, "will": true,
}

// fillers are words of a question that the English analyzer keeps but
// that say how it is asked, not what about: a page that answers "how
// much memory can I use" need not say "much" or "can". Only questions
// drop them (a query "can bus" keeps "can"); the analyzer drops the other
// words of "how do I", "what is". The verbs of how a thing is asked for
// ("how do I get/make/see/use …") are among them: nearly every page has
// them, and a page that answers says what is got or made instead.
var fillers = map[string]bool{
	"can": true, "may": true, "might": true, "must": true, "will": true, "shall": true,
	"much": true, "need": true, "want": true, "possible": true,
	"happen": true, "happens": true, "mean": true, "means": true,
	"write": true, "tell": true, "know": true, "something": true, "anything": true,
	"get": true, "make": true, "see": true, "use": true, "one": true, "way": true,
	"just": true, "really": true, "actually": true,
}

// isQuestion tells a query asked as a question: it ends with "?" or
// starts with an interrogative followed by more words.
func isQuestion(s string) bool {
	if strings.HasSuffix(s, "?") {
		return true
	}
	first, rest, ok := strings.Cut(s, " ")
	return ok && strings.TrimSpace(rest) != "" && interrogatives[strings.ToLower(first)]
}

// ensurePositive makes sure q has something that selects documents. When
// all its positive words were stop words, they are matched word for word
// in titles instead (the only field that keeps them); a query of
// exclusions only matches every document but those.
func (r *rewriter) ensurePositive(q query.Query) (query.Query, error) {
	b, _ := q.(*query.BooleanQuery)
	if q != nil && (b == nil || b.Must != nil || b.Should != nil) {
		return q, nil
	}
	var must query.Query
	switch {
	case len(r.dropped) > 0 && !r.titleWords:
		must = query.NewMatchNoneQuery()
	case len(r.dropped) > 0:
		ws := make([]query.Query, 0, len(r.dropped))
		for _, d := range r.dropped {
			// The analyzer is named: the mapping finds a field's
			// analyzer by its document path (title), not its name.
			if d.phrase {
				w := query.NewMatchPhraseQuery(d.text)
				w.SetField(fTitleWords)
				w.Analyzer = wordsAnalyzer
				ws = append(ws, w)
			} else {
				w := query.NewMatchQuery(d.text)
				w.SetField(fTitleWords)
				w.Analyzer = wordsAnalyzer
				ws = append(ws, w)
			}
			r.terms = append(r.terms, d.text)
		}
		must = query.NewConjunctionQuery(ws)
	case b != nil && b.Filter != nil:
		// host: and site: alone list their pages.
		must = query.NewMatchAllQuery()
	case b != nil && b.MustNot != nil:
		// Nothing to find, only what to leave out: an error, as other
		// engines answer, rather than every page but a few.
		return nil, badQuery("the query has only exclusions, nothing to search for: add a word, or write * -word for every page without the word")
	default:
		return nil, badQuery("the query has no words to search for")
	}
	if b == nil {
		return must, nil
	}
	b.Must = must
	return b, nil
}

// unranked tells a query with nothing to score: match all, possibly with
// exclusions. Such queries are ordered by PageRank without scoring.
func unranked(q query.Query) bool {
	switch q := q.(type) {
	case *query.MatchAllQuery:
		return true
	case *query.BooleanQuery:
		return (q.Must == nil || unranked(q.Must)) && (q.Should == nil || unranked(q.Should))
	case *query.ConjunctionQuery:
		for _, c := range q.Conjuncts {
			if !unranked(c) {
				return false
			}
		}
		return true
	}
	return false
}

// isNumberLiteral tells the range the query string adds for a bare
// number: min = max, both inclusive.
func isNumberLiteral(q *query.NumericRangeQuery) bool {
	return q.Min != nil && q.Max != nil && *q.Min == *q.Max
}

func isText(field string) bool { return field == "" || queryFields[field] == kindText }

// checkField refuses a field the index does not have or whose kind the
// query cannot search. "" (no field) is the text fields.
func checkField(field string, kinds ...fieldKind) error {
	if field == "" {
		if slices.Contains(kinds, kindText) {
			return nil
		}
		return badQuery("this kind of query needs a field, such as pagerank:>1")
	}
	k, ok := queryFields[field]
	switch {
	case !ok:
		return badQuery("unknown field %q: the fields are %s (to search for a word followed by a colon, put it in quotes or write \\:)", clip(field, 40), fieldNames())
	case !slices.Contains(kinds, k):
		return badQuery("field %s cannot be searched this way", field)
	}
	return nil
}

func checkFuzziness(term string, f int) error {
	if f < 0 || f > 2 {
		return badQuery("fuzziness of %s~%d must be 0, 1 or 2", clip(term, 40), f)
	}
	return nil
}

// clip shortens s for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// fielded is fielded(q) with each match or phrase query over a text field
// analysed in the index's languages (inLangs); stopWords lets the pages
// of a language that drops q's word match it.
func (r *rewriter) fielded(q fieldQuery, stopWords bool) query.Query {
	f := fielded(q)
	if q.Field() == "" {
		if d, ok := f.(*query.DisjunctionQuery); ok {
			for i, c := range d.Disjuncts {
				d.Disjuncts[i] = inLangs(r.m, r.langs, c, stopWords)
			}
		}
		return f
	}
	if isText(q.Field()) {
		return inLangs(r.m, r.langs, f, stopWords)
	}
	return f
}

// fieldQuery is a leaf query naming a field, with a boost.
type fieldQuery interface {
	query.FieldableQuery
	query.BoostableQuery
}

// fielded returns q itself when it names a field, else q expanded over the
// text fields.
func fielded(q fieldQuery) query.Query {
	if q.Field() != "" {
		return q
	}
	switch q := q.(type) {
	case *query.MatchQuery:
		return overFields(q)
	case *query.MatchPhraseQuery:
		return overFields(q)
	case *query.FuzzyQuery:
		return overFields(q)
	case *query.PrefixQuery:
		return overFields(q)
	case *query.WildcardQuery:
		return overFields(q)
	case *query.RegexpQuery:
		return overFields(q)
	}
	return q
}

// overFields returns q as a disjunction of copies, one per text field
// with its boost.
func overFields[T any, P interface {
	*T
	fieldQuery
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

func badQuery(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
}

// positions returns how many positions toks take.
func positions(toks analysis.TokenStream) int {
	seen := map[int]bool{}
	for _, t := range toks {
		seen[t.Position] = true
	}
	return len(seen)
}
