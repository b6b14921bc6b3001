package serving

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"github.com/caffeine-go/caffeine/extract"
)

// langBoost is what a ranked search multiplies the score of a page in one
// of the searcher's languages by (Query.Langs): a page and its
// translation that match about equally come in the searcher's language
// first, while a page that matches clearly better in another language
// still leads.
const langBoost = 2.0

// maxLangs bounds the searcher's languages a search prefers.
const maxLangs = 3

// searchLangs returns the languages a search prefers, as primary
// subtags: the query's own when the words are clearly of one language
// (extract.DetectLang), else the first maxLangs of q.Langs.
func searchLangs(q Query) []string {
	if l, ok := extract.DetectLang(q.Q); ok {
		return []string{l}
	}
	var out []string
	for _, t := range q.Langs {
		l := primaryLang(strings.ToLower(strings.TrimSpace(t)))
		if l == "" || l == "*" || slices.Contains(out, l) {
			continue
		}
		if out = append(out, l); len(out) == maxLangs {
			break
		}
	}
	return out
}

// segLangs are, for one segment, the local numbers of its documents in
// each language asked for so far (the lang field's postings), loaded
// once a language: a segment never changes.
type segLangs struct {
	mu sync.Mutex
	by map[string]*roaring.Bitmap
}

// of returns the documents of seg in lang.
func (l *segLangs) of(seg segment.Segment, lang string) (*roaring.Bitmap, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.by[lang]; ok {
		return b, nil
	}
	b := roaring.New()
	d, err := seg.Dictionary(fLang)
	if err != nil {
		return nil, fmt.Errorf("serving: languages: %w", err)
	}
	if d != nil {
		pl, err := d.PostingsList([]byte(lang), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("serving: languages: %w", err)
		}
		if pl != nil {
			it := pl.Iterator(false, false, false, nil)
			for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
				if err != nil {
					return nil, fmt.Errorf("serving: languages: %w", err)
				}
				b.Add(uint32(p.Number()))
			}
		}
	}
	if l.by == nil {
		l.by = make(map[string]*roaring.Bitmap)
	}
	l.by[lang] = b
	return b, nil
}

// preferred returns, for each segment of is (as of ranks it), the local
// numbers of its documents in any of langs, or nil without langs.
func (rs *ranks) preferred(is *scorch.IndexSnapshot, sr *snapRanks, langs []string) ([]*roaring.Bitmap, error) {
	if len(langs) == 0 {
		return nil, nil
	}
	ss := is.Segments()
	out := make([]*roaring.Bitmap, len(ss))
	for i, s := range ss {
		u := roaring.New()
		for _, l := range langs {
			b, err := sr.segs[i].langs.of(s.Segment(), l)
			if err != nil {
				return nil, err
			}
			u.Or(b)
		}
		out[i] = u
	}
	return out, nil
}
