package serving

import (
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Field names of an indexed document.
const (
	fURL         = "url"
	fHost        = "host"
	fTitle       = "title"
	fTitleWords  = "title_words"   // the title word for word, stop words kept (see wordsAnalyzer)
	fTitleShown  = "title_shown"   // the whole title, stored only, when title (indexed) is without its site's affix
	fLinkDensity = "link_density"  // share of the page's text in links; the score reads it (see Score)
	fMismatch    = "lang_mismatch" // 1 when the page declares a language its text is not; the score reads it (MismatchFactor)
	fText        = "text"
	fAnchors     = "anchors"     // every inbound anchor text, indexed (repeats count)
	fHeadings    = "headings"    // the headings of the page's sections (webtable.Doc.Sections), one value each, indexed only (see headings.go)
	fTopAnchors  = "top_anchors" // the most frequent distinct anchor texts, stored only
	fDuplicates  = "duplicates"  // stored only
	fSimilar     = "similar"     // the near-copies folded under the document (webtable.Doc.Similar), stored only
	fPageRank    = "pagerank"
	fFetchedAt   = "fetched_at"
	fIndexedAt   = "indexed_at"
	fClusterSize = "cluster_size"
	fVersion     = "version"
	fLang        = "lang"
	fFileType    = "filetype"     // html | pdf | txt (webtable.Doc.Kind, "" read as html)
	fInbound     = "inbound"      // inbound anchors from other hosts
	fInboundHost = "inbound_host" // inbound anchors from the page's own host
	fSections    = "sections"     // the page's sections (webtable.Doc.Sections) as JSON, stored only
)

// analyzer is the text analyzer of title, text and anchors of English
// pages and of pages in a language without an analyzer of its own (see
// langs.go): Unicode word segmentation, lower case, English possessives
// and stop words, Porter stemming. Snippets use a page's analyzer too, so
// what is marked is what matched.
const analyzer = en.AnalyzerName

// wordsAnalyzer keeps every word, only lower-cased: the analyzer of
// title_words, which a query made only of stop words searches (the English
// analyzer drops them from title, text and anchors).
const wordsAnalyzer = "words"

// indexMapping decides what the index costs (see BENCHMARKS.md): text
// fields keep term vectors (phrase queries need positions), only what a
// result shows is stored, only PageRank has doc values (the score reads
// it, and the link density), and nothing goes to the composite _all field: unqualified query
// terms are expanded over title, anchors, text and URL instead, each with
// its own boost (see expand). Each language with an analyzer of its own
// has a type mapping, the default one with that analyzer for the text
// fields (see langs.go).
func indexMapping() mapping.IndexMapping {
	m := mapping.NewIndexMapping()
	if err := m.AddCustomAnalyzer(wordsAnalyzer, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []any{lowercase.Name},
	}); err != nil {
		panic(err) // a constant configuration
	}
	m.DefaultMapping = docMapping(analyzer)
	for _, a := range langTypes() {
		m.AddDocumentMapping(a, docMapping(a))
	}
	m.DefaultAnalyzer = analyzer
	m.DefaultField = fText
	m.IndexDynamic = false
	m.StoreDynamic = false
	m.DocValuesDynamic = false
	m.ScoringModel = "bm25"
	return m
}

// docMapping is the mapping of a document whose title, text and anchors
// textAnalyzer analyses.
func docMapping(textAnalyzer string) *mapping.DocumentMapping {
	text := func(store bool) *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = textAnalyzer
		f.Store = store
		f.IncludeTermVectors = true
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	keywordField := func(index, store bool) *mapping.FieldMapping {
		f := mapping.NewKeywordFieldMapping()
		f.Analyzer = keyword.Name
		f.Index = index
		f.Store = store
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	number := func(docValues bool) *mapping.FieldMapping {
		f := mapping.NewNumericFieldMapping()
		f.Store = true
		f.Index = docValues // the range queries users may write need it indexed
		f.DocValues = docValues
		f.IncludeInAll = false
		return f
	}
	date := func() *mapping.FieldMapping {
		f := mapping.NewDateTimeFieldMapping()
		f.Store = true
		f.Index = true
		f.DocValues = false
		f.IncludeInAll = false
		return f
	}

	doc := mapping.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fURL, keywordField(true, true))
	doc.AddFieldMappingsAt(fHost, keywordField(true, true))
	doc.AddFieldMappingsAt(fLang, keywordField(true, true))
	doc.AddFieldMappingsAt(fFileType, keywordField(true, true))
	titleWords := text(false)
	titleWords.Name = fTitleWords
	titleWords.Analyzer = wordsAnalyzer
	doc.AddFieldMappingsAt(fTitle, text(true), titleWords)
	doc.AddFieldMappingsAt(fText, text(true))
	doc.AddFieldMappingsAt(fAnchors, text(false))
	doc.AddFieldMappingsAt(fHeadings, text(false))
	doc.AddFieldMappingsAt(fTopAnchors, keywordField(false, true))
	doc.AddFieldMappingsAt(fDuplicates, keywordField(false, true))
	doc.AddFieldMappingsAt(fSimilar, keywordField(false, true))
	doc.AddFieldMappingsAt(fTitleShown, keywordField(false, true))
	doc.AddFieldMappingsAt(fSections, keywordField(false, true))
	doc.AddFieldMappingsAt(fPageRank, number(true))
	doc.AddFieldMappingsAt(fLinkDensity, number(true))
	doc.AddFieldMappingsAt(fMismatch, number(true))
	doc.AddFieldMappingsAt(fClusterSize, number(false))
	doc.AddFieldMappingsAt(fInbound, number(false))
	doc.AddFieldMappingsAt(fInboundHost, number(false))
	doc.AddFieldMappingsAt(fVersion, number(false))
	doc.AddFieldMappingsAt(fFetchedAt, date())
	doc.AddFieldMappingsAt(fIndexedAt, date())

	return doc
}
