package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

const (
	modeCrawl = "crawl"
	modeBatch = "batch"
)

// batchBase is where batch mode puts the corpus.
const batchBase = "http://corpus.test"

// loadPages returns the HTML pages under dir, or the embedded PostgreSQL
// manual when dir is "".
func loadPages(dir string) ([]corpus.Page, error) {
	if dir == "" {
		return corpus.Load()
	}
	var pages []corpus.Page
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".html") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		pages = append(pages, corpus.Page{Path: filepath.ToSlash(rel), Body: b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("no .html pages under %s", dir)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].Path < pages[j].Path })
	return pages, nil
}

// built is an index of the corpus, searchable until closed.
type built struct {
	ix    *serving.Index
	base  string // URL of the corpus root, without the trailing slash
	close func() error
}

// build indexes pages in dir (a new directory) as mode says.
func build(ctx context.Context, mode string, pages []corpus.Page, dir string, log io.Writer) (*built, error) {
	if mode == modeBatch {
		return buildBatch(ctx, pages, dir)
	}
	return buildCrawl(ctx, pages, dir, log)
}

// buildCrawl serves pages on 127.0.0.1 and runs the one process over them
// until idle.
func buildCrawl(ctx context.Context, pages []corpus.Page, dir string, log io.Writer) (*built, error) {
	srv := httptest.NewServer(corpus.Handler(pages, nil))
	began := time.Now()
	copt := crawl.Options{Seeds: []string{srv.URL + "/index.html"}, AllowPrivate: true, Delay: -1, Parallel: 8}
	e, err := engine.Open(ctx, engine.Config{Dir: filepath.Join(dir, "table"), Crawl: &copt,
		Observers: observers.Chain(), Scanners: 2, Workers: 16, GCInterval: -1})
	if err != nil {
		srv.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	stop := func() error {
		cancel()
		err := <-done
		if cerr := e.Close(); err == nil {
			err = cerr
		}
		srv.Close()
		return err
	}
	if err := e.WaitIdle(ctx); err != nil {
		stop()
		return nil, err
	}
	fmt.Fprintf(log, "searcheval: crawled %d pages and idle in %.1f s\n", e.Crawler.Stats().Fetched, time.Since(began).Seconds())
	return &built{ix: e.Index, base: srv.URL, close: stop}, nil
}

// buildBatch writes pages to a table as fetched, recomputes the documents
// in batch and indexes them.
func buildBatch(ctx context.Context, pages []corpus.Page, dir string) (*built, error) {
	store, err := badger.Open(filepath.Join(dir, "table"), badger.Options{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	db, err := percolator.Open(ctx, store, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	now := []byte(strconv.FormatInt(time.Now().UnixMilli(), 10))
	for i := 0; i < len(pages); i += 100 {
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			for _, p := range pages[i:min(i+100, len(pages))] {
				row, err := webtable.Row(batchBase + "/" + p.Path)
				if err != nil {
					return fmt.Errorf("%s: %w", p.Path, err)
				}
				for col, v := range map[string][]byte{webtable.Status: []byte("200"), webtable.Type: []byte("text/html"),
					webtable.FetchedAt: now, webtable.Body: p.Body} {
					if err := tx.Set(row, col, v); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	b, err := observers.RunBatch(ctx, db)
	if err != nil {
		return nil, err
	}
	ix, err := serving.BuildIndex(filepath.Join(dir, "index"), b.Docs, serving.Options{})
	if err != nil {
		return nil, err
	}
	return &built{ix: ix, base: batchBase, close: ix.Close}, nil
}
