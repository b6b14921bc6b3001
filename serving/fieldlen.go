package serving

import (
	"encoding/json"
	"sync"

	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// BM25 normalizes a term's frequency by the length of its field against
// the field's average length over the index. Bleve v2.6 takes that
// average to be the field's distinct terms divided by the documents (the
// term searcher's bm25ScoreMetrics): 60 tokens where pages hold 1,080,
// so that a long page is marked down as if it were eighteen times the
// average. fieldLengths measures the true average instead: the analysed
// length of each text field of every document applied (Bleve's
// TextField.AnalyzedLength, known once a batch is analysed, at no cost),
// and hands it to the searchers as the BM25 statistics of a search
// (bm25Stats), with the documents' count.
//
// It is a running mean over the documents applied, which the index
// keeps between runs (fieldLengthsKey, written with each batch). A
// document applied again counts again, and a deleted one still counts:
// the mean is of what was indexed, which the index holds in the same
// proportions. Past lengthWindow documents the sums are halved, so that
// the mean follows a site whose pages change.
type fieldLengths struct {
	mu   sync.Mutex
	docs float64            // documents counted
	sum  map[string]float64 // analysed tokens of each field, over them
}

// fieldLengthsKey is where the index keeps its fieldLengths (Bleve's
// internal key-value store).
var fieldLengthsKey = []byte("caffeine_field_lengths")

const (
	// lengthWindow is the documents after which the sums are halved.
	lengthWindow = 200_000
	// lengthMinDocs is the documents counted before the measured means
	// are used: below them Bleve's own estimate stands.
	lengthMinDocs = 20
)

// indexFields are the fields of an indexed document (see document).
var indexFields = []string{fURL, fHost, fLang, fFileType, fTitle, fTitleWords, fTitleShown, fText, fAnchors, fHeadings,
	fTopAnchors, fDuplicates, fSimilar, fPageRank, fLinkDensity, fMismatch, fClusterSize, fInbound, fInboundHost, fVersion, fFetchedAt, fIndexedAt, fSections}

type fieldLengthsJSON struct {
	Docs float64            `json:"docs"`
	Sum  map[string]float64 `json:"sum"`
}

func newFieldLengths() *fieldLengths {
	return &fieldLengths{sum: make(map[string]float64)}
}

// load reads what the index kept; a missing or damaged value starts
// afresh.
func (l *fieldLengths) load(b []byte) {
	var v fieldLengthsJSON
	if len(b) == 0 || json.Unmarshal(b, &v) != nil || v.Docs < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.docs = v.Docs
	for f, s := range v.Sum {
		l.sum[f] = s
	}
}

// encode returns what the index keeps.
func (l *fieldLengths) encode() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, _ := json.Marshal(fieldLengthsJSON{Docs: l.docs, Sum: l.sum})
	return b
}

// add counts the text fields of documents a batch analysed.
func (l *fieldLengths) add(docs []*bdoc.Document) {
	if len(docs) == 0 {
		return
	}
	lens := make(map[string]int)
	for _, d := range docs {
		d.VisitFields(func(f index.Field) {
			if t, ok := f.(*bdoc.TextField); ok {
				lens[t.Name()] += t.AnalyzedLength()
			}
		})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.docs += float64(len(docs))
	for f, n := range lens {
		l.sum[f] += float64(n)
	}
	if l.docs > lengthWindow {
		l.docs /= 2
		for f := range l.sum {
			l.sum[f] /= 2
		}
	}
}

// mean returns the mean analysed length of field, and whether enough
// documents were counted to say.
func (l *fieldLengths) mean(field string) (float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.docs < lengthMinDocs {
		return 0, false
	}
	return l.sum[field] / l.docs, true
}

// bm25Stats returns the BM25 statistics of a search of r: its documents,
// and for each field the "cardinality" Bleve divides by them to get the
// average length: the measured mean times the documents for the fields
// measured, Bleve's own figure for the others (a searcher on a field
// without one fails). It returns nil when r cannot say (another kind of
// reader) or nothing was measured yet: Bleve's estimate stands.
func (l *fieldLengths) bm25Stats(r index.IndexReader) *search.BM25Stats {
	br, ok := r.(index.BM25Reader)
	if !ok {
		return nil
	}
	l.mu.Lock()
	measured := l.docs >= lengthMinDocs
	l.mu.Unlock()
	if !measured {
		return nil
	}
	count, err := r.DocCount()
	if err != nil || count == 0 {
		return nil
	}
	fields, err := r.Fields() // those with terms, in some segment
	if err != nil {
		return nil
	}
	fields = append(fields, indexFields...) // a searcher fails on a field without statistics
	st := &search.BM25Stats{DocCount: float64(count), FieldCardinality: make(map[string]int, len(fields))}
	for _, f := range fields {
		if _, done := st.FieldCardinality[f]; done {
			continue
		}
		if m, ok := l.mean(f); ok && m > 0 {
			st.FieldCardinality[f] = int(m*float64(count) + 0.5)
			continue
		}
		c, err := br.FieldCardinality(f)
		if err != nil {
			return nil
		}
		st.FieldCardinality[f] = c
	}
	return st
}
