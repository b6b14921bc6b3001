package engine

import (
	"context"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/web"
)

// The Engine is the backend of the web UI (web.Backend).

// Search runs a query on the serving index.
func (e *Engine) Search(ctx context.Context, q serving.Query) (*serving.Results, error) {
	return e.Index.Search(ctx, q)
}

// Doc returns what the table and the index know of a URL.
func (e *Engine) Doc(ctx context.Context, url string) (*feed.DocInfo, error) {
	return feed.LookupDoc(ctx, e.DB, e.Index, e.indexName(), url)
}

// Top returns the top pages, of one host if host is not empty.
func (e *Engine) Top(ctx context.Context, host string, n int) (*serving.Top, error) {
	return e.Index.Top(ctx, host, n)
}

var _ web.Backend = (*Engine)(nil)
