package experiment

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/serving"
)

// batcher is the batch mode's indexing: a full recomputation over the
// table, a fresh index built from its export set, the swap; again and
// again. Not safe for concurrent use, except stats.
type batcher struct {
	e   *engine.Engine
	dir string
	idx *freshness.Index
	log *slog.Logger

	n    int
	cur  *serving.Index
	urls map[string]bool // URLs in cur

	mu   sync.Mutex // guards runs
	runs []batchRun
}

type batchRun struct {
	began, swapped time.Time
}

// runOnce recomputes, builds and swaps once. A document becomes searchable
// at the swap: its event is stamped then, and URLs the new index lacks are
// deleted then.
func (b *batcher) runOnce(ctx context.Context) error {
	began := time.Now()
	res, err := observers.RunBatch(ctx, b.e.DB)
	if err != nil {
		return err
	}
	b.n++
	dir := filepath.Join(b.dir, fmt.Sprintf("%06d", b.n))
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return err
	}
	ix, err := serving.BuildIndex(dir, res.Docs, serving.Options{})
	if err != nil {
		return err
	}
	swapped := time.Now()
	urls := make(map[string]bool, len(res.Docs))
	evs := make([]freshness.Event, 0, len(res.Docs))
	for _, d := range res.Docs {
		urls[d.URL] = true
		evs = append(evs, freshness.Event{URL: d.URL, FetchedAt: d.FetchedAt, IndexedAt: swapped})
	}
	for u := range b.urls {
		if !urls[u] {
			evs = append(evs, freshness.Event{URL: u, IndexedAt: swapped, Deleted: true})
		}
	}
	b.idx.Apply(evs...)
	if old := b.cur; old != nil {
		old.Close()
		os.RemoveAll(old.Dir())
	}
	b.cur, b.urls = ix, urls
	b.mu.Lock()
	b.runs = append(b.runs, batchRun{began, swapped})
	b.mu.Unlock()
	b.log.Debug("batch swapped", "run", b.n, "docs", len(res.Docs), "took", swapped.Sub(began).Round(time.Millisecond))
	return nil
}

// close closes the current index.
func (b *batcher) close() {
	if b.cur != nil {
		b.cur.Close()
		b.cur = nil
	}
}

// loop runs batches back to back until ctx ends.
func (b *batcher) loop(ctx context.Context) {
	for ctx.Err() == nil {
		if err := b.runOnce(ctx); err != nil && ctx.Err() == nil {
			b.log.Error("batch", "err", err)
			ctxsleep.Sleep(ctx, time.Second)
		}
	}
}

// stats returns the runs swapped in within [from, to] and the distribution
// of their durations.
func (b *batcher) stats(from, to time.Time) (int, freshness.Distribution) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ds []time.Duration
	for _, r := range b.runs {
		if !r.swapped.Before(from) && !r.swapped.After(to) {
			ds = append(ds, r.swapped.Sub(r.began))
		}
	}
	return len(ds), freshness.Summarize(ds)
}
