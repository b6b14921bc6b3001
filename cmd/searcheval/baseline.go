package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
)

// baselineDoc is a page as the plain BM25 baseline indexes it.
type baselineDoc struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// baseline measures plain BM25 on qs: a Bleve index of the same pages
// (their title and text as extract reads them, one document a page, in
// Bleve's composite field with the English analyzer, BM25 scoring as Bleve
// computes it) searched with a match query of the query's words, any of
// them (OR), as a reference the project's ranking is measured against.
func baseline(ctx context.Context, pages []corpus.Page, dir string, qs []judgedQuery) (*scores, error) {
	m := bleve.NewIndexMapping()
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = "bm25"
	ix, err := bleve.New(filepath.Join(dir, "baseline"), m)
	if err != nil {
		return nil, fmt.Errorf("baseline index: %w", err)
	}
	defer ix.Close()
	b := ix.NewBatch()
	for _, p := range pages {
		pg, err := extract.HTML(batchBase+"/"+p.Path, p.Body, "text/html", extract.Options{})
		if err != nil {
			continue // not a page the project indexes either
		}
		if err := b.Index(p.Path, baselineDoc{Title: pg.Title, Text: pg.Text}); err != nil {
			return nil, err
		}
		if b.Size() >= 500 {
			if err := ix.Batch(b); err != nil {
				return nil, err
			}
			b.Reset()
		}
	}
	if err := ix.Batch(b); err != nil {
		return nil, err
	}
	s := &scores{}
	for _, jq := range qs {
		mq := query.NewMatchQuery(jq.q)
		mq.SetOperator(query.MatchQueryOperatorOr)
		res, err := ix.SearchInContext(ctx, bleve.NewSearchRequestOptions(mq, 10, 0, false))
		if err != nil {
			return nil, fmt.Errorf("baseline query %q: %w", jq.q, err)
		}
		var paths []string
		for _, h := range res.Hits {
			paths = append(paths, h.ID)
		}
		s.add(jq.kind, rankOf(jq, paths))
	}
	return s, nil
}
