// Package experiment compares incremental and batch indexing on the
// changing-web fixture, the way the Percolator paper's Figure 7 compares
// Caffeine with the MapReduce indexing system it replaced.
//
// Both modes run the same crawler (package crawl) on the same fixture with
// the same crawl budget:
//
//   - incremental: the observer chain (observers.Chain) and the serving
//     feeder; a page is searchable as soon as the chain has processed it.
//   - batch: no observers; observers.RunBatch recomputes everything from the
//     raw pages, serving.BuildIndex builds a fresh index of its export set,
//     and the new index is swapped in; then again, back to back.
//
// A mode runs in phases. An initial crawl fetches every page as fast as it
// goes; the mode then indexes it all (incremental: until the engine is
// idle; batch: one run). The measured crawl starts at the budget
// (Options.CrawlRate pages per second, one host, one request at a time),
// runs Options.Settle so the recrawl schedule reaches its steady state,
// and then the window of Options.Duration is measured: the exact time
// averages of freshness and age of every indexed document against the
// fixture's ground truth (freshness.Over), and the crawl→searchable
// latency of every index update in the window that brought new content
// (freshness.Index.Latencies).
//
// Time is real: rates are per second of the wall clock. An experiment is
// compressed by making pages change fast (a hot page every 20 s by
// default) and crawling fast, rather than by scaling a clock the crawler
// does not share.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/freshness/changingweb"
	"github.com/caffeine-go/caffeine/internal/httpserver"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// Modes.
const (
	Incremental = "incremental"
	Batch       = "batch"
)

// Options configure an experiment. The zero value of every field selects
// the default named in its comment.
type Options struct {
	// Web is the fixture. Its Clock, Start and Born are set by the
	// experiment: its pages were created (Born, version 0's Last-Modified)
	// 30 days before they began to change (Start), Lead before each mode's
	// initial crawl.
	Web changingweb.Options
	// Lead is how long the fixture's pages have been changing when a
	// mode's initial crawl begins, so that the crawler meets hot pages
	// recently modified and cold ones long unchanged (see
	// crawl.FirstInterval). Default 5m.
	Lead time.Duration
	// Duration is the measured window of each mode. Default 60s.
	Duration time.Duration
	// Settle is how long the measured crawl runs before the window opens.
	// Default the time to crawl every page once at CrawlRate, at most 60s.
	Settle time.Duration
	// CrawlRate is the crawl budget in pages per second (the crawler's
	// Delay, one request at a time). Default 50.
	CrawlRate float64
	// MinInterval, MaxInterval and InitialInterval are the crawler's
	// adaptive revisit bounds. Defaults 5s, 10m and MinInterval.
	MinInterval, MaxInterval, InitialInterval time.Duration
	// Warmup is the least time from the initial crawl's start to the
	// measured crawl: a mode whose initial crawl and indexing took less
	// waits, so that both modes begin the measured crawl with copies
	// equally old (the fixture keeps changing). Run sets it to the longest
	// warm-up of the modes run so far, unless NoAlign.
	Warmup  time.Duration
	NoAlign bool
	// Converge bounds how long the incremental mode waits, once every
	// page is searchable, for the chain to be idle (PageRank converged,
	// elections and exports done) before the measured crawl, so that the
	// window sees the steady state the paper measures rather than the end
	// of the bulk load (the batch mode's index is complete when it is
	// built). Default 30m; negative: do not wait.
	Converge time.Duration
	// Step is the sampling step of the time series (Result.Series).
	// Default Duration/60.
	Step time.Duration
	// Dir is the working directory; each mode uses a fresh subdirectory.
	// Default a temporary directory, removed afterwards.
	Dir string
	// Logger receives progress (info) and details (debug). Nil discards
	// them.
	Logger *slog.Logger
}

func (o *Options) ensureDefaults() {
	if o.Duration <= 0 {
		o.Duration = 60 * time.Second
	}
	if o.CrawlRate <= 0 {
		o.CrawlRate = 50
	}
	if o.Web.Pages <= 0 {
		o.Web.Pages = changingweb.DefaultPages
	}
	if o.Lead <= 0 {
		o.Lead = 5 * time.Minute
	}
	if o.Settle <= 0 {
		o.Settle = min(time.Duration(float64(o.Web.Pages)/o.CrawlRate*float64(time.Second)), time.Minute)
	}
	if o.MinInterval <= 0 {
		o.MinInterval = 5 * time.Second
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = 10 * time.Minute
	}
	if o.InitialInterval <= 0 {
		o.InitialInterval = o.MinInterval
	}
	if o.Step <= 0 {
		o.Step = o.Duration / 60
	}
	if o.Converge == 0 {
		o.Converge = 30 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Result is one mode's measurement.
type Result struct {
	Mode      string    `json:"mode"`
	Pages     int       `json:"pages"`
	CrawlRate float64   `json:"crawl_rate"` // the budget, pages/s
	From      time.Time `json:"from"`       // the window
	To        time.Time `json:"to"`
	// Fetched is the number of page fetches the fixture served in the
	// window; FetchRate the same per second (at most CrawlRate).
	Fetched   int64   `json:"fetched"`
	FetchRate float64 `json:"fetch_rate"`
	// Late is how long past its due time the crawler claimed a page, on
	// average over the window's claims: a crawl below its budget with
	// pages late is limited by the machine, one on time by its schedule.
	Late float64 `json:"crawl_late_s"`
	// Changes is the number of page changes in the window.
	Changes int `json:"changes"`
	// Latency is crawl→searchable over the updates in the window that
	// brought new content.
	Latency freshness.Distribution `json:"latency"`
	// Latencies are the samples of Latency, in seconds, sorted.
	Latencies []float64 `json:"-"`
	// Average is freshness and age, time-averaged over the window.
	Average freshness.Average `json:"average"`
	// Series samples freshness and age every Options.Step.
	Series []freshness.Snapshot `json:"series"`
	// Warmup is how long the initial crawl and indexing took.
	Warmup time.Duration `json:"-"`
	// Batches is how many batch runs were swapped in during the window;
	// BatchTime the distribution of their durations (run + build).
	Batches   int                    `json:"batches,omitempty"`
	BatchTime freshness.Distribution `json:"batch_time"`
}

// Run runs each mode in turn.
func Run(ctx context.Context, opt Options, modes ...string) ([]*Result, error) {
	opt.ensureDefaults()
	if opt.Dir == "" {
		dir, err := os.MkdirTemp("", "freshness-experiment-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		opt.Dir = dir
	}
	var out []*Result
	for _, m := range modes {
		r, err := RunMode(ctx, opt, m)
		if err != nil {
			return out, fmt.Errorf("%s: %w", m, err)
		}
		if !opt.NoAlign {
			opt.Warmup = max(opt.Warmup, r.Warmup)
		}
		out = append(out, r)
	}
	return out, nil
}

// RunMode runs one mode (Incremental or Batch) in a fresh subdirectory of
// opt.Dir, which must be set.
func RunMode(ctx context.Context, opt Options, mode string) (*Result, error) {
	opt.ensureDefaults()
	if mode != Incremental && mode != Batch {
		return nil, fmt.Errorf("experiment: unknown mode %q", mode)
	}
	if opt.Dir == "" {
		return nil, errors.New("experiment: no directory")
	}
	log := opt.Logger.With("mode", mode)
	dir := filepath.Join(opt.Dir, mode)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}

	// The fixture, fresh for each mode: its changes started Lead ago.
	wopt := opt.Web
	wopt.Clock, wopt.Start = time.Now, time.Now().Add(-opt.Lead)
	wopt.Born = wopt.Start.Add(-30 * 24 * time.Hour)
	web, err := changingweb.New(wopt)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := httpserver.New(web, httpserver.Options{})
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	truth := web.Truth()

	idx := freshness.NewIndex()
	// GC as a deployment runs it, only more often: notifications, frontier
	// rows and queue entries are rewritten all the time, and their dead
	// versions slow every scan until collected. The same in both modes.
	cfg := engine.Config{Dir: filepath.Join(dir, "table"), Logger: opt.Logger, GCInterval: 10 * time.Second, GCGrace: 10 * time.Second}
	if mode == Incremental {
		cfg.Observers = observers.Chain()
		cfg.OnApply = func(as []serving.Applied) {
			evs := make([]freshness.Event, 0, len(as))
			for _, a := range as {
				evs = append(evs, freshness.Event{URL: a.URL, FetchedAt: a.FetchedAt, IndexedAt: a.IndexedAt, Deleted: a.Op == webtable.OpDelete})
			}
			idx.Apply(evs...)
		}
	} else {
		cfg.NoFeeder = true
	}
	e, err := engine.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	var b *batcher
	defer func() {
		if b != nil {
			b.close() // after the loop below has stopped
		}
	}()
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	wg.Go(func() {
		if err := e.Run(runCtx); err != nil {
			log.Error("engine stopped", "err", err)
		}
	})

	// Phase 1: the initial crawl, as fast as it goes, then index it all.
	// It stops after the index page and every page: with a revisit
	// interval shorter than the crawl, Once alone would never see an
	// empty frontier (the first pages are due again).
	began := time.Now()
	copt := crawl.Options{
		Seeds: []string{base + "/"}, AllowPrivate: true, NoSitemaps: true, Once: true, MaxPages: web.Pages() + 1,
		Delay: -1, Parallel: 4, Workers: 4,
		MinInterval: opt.MinInterval, MaxInterval: opt.MaxInterval, InitialInterval: opt.InitialInterval,
		Logger: opt.Logger,
	}
	c, err := crawl.New(e.DB, copt)
	if err != nil {
		return nil, err
	}
	if err := c.Run(runCtx); err != nil {
		return nil, fmt.Errorf("initial crawl: %w", err)
	}
	log.Info("initial crawl done", "fetched", c.Stats().Fetched, "took", time.Since(began).Round(time.Millisecond))
	if mode == Incremental {
		if err := waitIndexed(runCtx, e, idx, web.Pages()-wopt.Duplicates+1, log); err != nil {
			return nil, err
		}
		if opt.Converge > 0 {
			if err := waitConverged(runCtx, e, opt.Converge, log); err != nil {
				return nil, err
			}
		}
	} else {
		b = &batcher{e: e, dir: filepath.Join(dir, "batch"), idx: idx, log: log}
		if err := b.runOnce(runCtx); err != nil {
			return nil, err
		}
	}
	n := len(idx.URLs())
	warmup := time.Since(began)
	log.Info("indexed", "documents", n, "took", warmup.Round(time.Millisecond))
	if wait := opt.Warmup - warmup; wait > 0 {
		log.Info("waiting to start the measured crawl as late as the other mode", "wait", wait.Round(time.Millisecond))
		if err := ctxsleep.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}

	// Phase 2: the measured crawl at the budget; batch runs back to back.
	copt.Once, copt.MaxPages = false, 0
	copt.Delay = time.Duration(float64(time.Second) / opt.CrawlRate)
	copt.Parallel, copt.Workers = 4, 4 // Delay spaces request starts: the budget; parallel fetches let a slow load not lower it
	if c, err = crawl.New(e.DB, copt); err != nil {
		return nil, err
	}
	wg.Go(func() {
		if err := c.Run(runCtx); err != nil && runCtx.Err() == nil {
			log.Error("crawler stopped", "err", err)
		}
	})
	if b != nil {
		wg.Go(func() { b.loop(runCtx) })
	}
	if err := ctxsleep.Sleep(ctx, opt.Settle); err != nil {
		return nil, err
	}
	from, fetched0, crawled0 := time.Now(), web.Requests(), c.Stats()
	log.Info("window opens", "settle", opt.Settle, "duration", opt.Duration)
	if err := ctxsleep.Sleep(ctx, opt.Duration); err != nil {
		return nil, err
	}
	to, fetched1, crawled1 := time.Now(), web.Requests(), c.Stats()
	stop()
	wg.Wait()

	r := &Result{Mode: mode, Pages: web.Pages(), CrawlRate: opt.CrawlRate, From: from, To: to, Warmup: warmup,
		Fetched: fetched1 - fetched0}
	r.FetchRate = float64(r.Fetched) / to.Sub(from).Seconds()
	if n := crawled1.Claimed - crawled0.Claimed; n > 0 {
		r.Late = (crawled1.Late - crawled0.Late).Seconds() / float64(n)
	}
	for p := range web.Pages() {
		for _, t := range web.ChangesUntil(p, to) {
			if t.After(from) {
				r.Changes++
			}
		}
	}
	var lat []time.Duration
	for _, u := range idx.Updates(truth, from, to) {
		if u.First {
			// Not a recrawl that found a change: every page was indexed
			// before the window, so this is a duplicate cluster electing
			// another member, whose copy may be old.
			continue
		}
		lat = append(lat, u.Latency)
		r.Latencies = append(r.Latencies, u.Latency.Seconds())
		if u.Latency > 5*time.Second {
			log.Debug("slow update", "url", u.URL, "fetched", u.FetchedAt, "indexed", u.IndexedAt, "first", u.First, "events", len(idx.Events(u.URL)))
		}
	}
	slices.Sort(r.Latencies)
	r.Latency = freshness.Summarize(lat)
	r.Average = freshness.Over(truth, idx, nil, from, to)
	r.Series = freshness.Series(truth, idx, nil, from, to, opt.Step)
	if b != nil {
		r.Batches, r.BatchTime = b.stats(from, to)
	}
	log.Info("measured", "latency_p50_s", r.Latency.P50, "mean_age_s", r.Average.MeanAge.Seconds(),
		"freshness", r.Average.Freshness, "fetch_rate", r.FetchRate, "crawl_late_s", r.Late)
	return r, nil
}

// waitIndexed returns when every distinct page is searchable (want
// documents held by the index) and nothing waits to be parsed, for a few
// looks in a row. It does not wait for PageRank to converge and the
// elections and exports it causes (waitConverged does, when asked).
func waitIndexed(ctx context.Context, e *engine.Engine, idx *freshness.Index, want int, log *slog.Logger) error {
	quiet, last := 0, time.Now()
	for quiet < 4 {
		if err := ctxsleep.Sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
		s, err := e.Stats(ctx)
		if err != nil {
			return err
		}
		pending := map[string]int{}
		for _, o := range s.Observers {
			pending[o.Name] = o.Pending
		}
		held := idx.Held(time.Now())
		if held >= want && pending["parse"] == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			log.Info("indexing", "searchable", held, "want", want, "pending", pending, "export_queue", s.ExportQueue)
		}
	}
	return nil
}

// waitConverged returns when the engine is idle, or after limit.
func waitConverged(ctx context.Context, e *engine.Engine, limit time.Duration, log *slog.Logger) error {
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.WaitIdle(ctx) }()
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			switch {
			case err == nil:
				log.Info("chain idle", "took", time.Since(began).Round(time.Millisecond))
				return nil
			case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
				log.Warn("chain not idle; measuring anyway", "waited", limit)
				return nil
			}
			return err
		case <-t.C:
			if s, err := e.Stats(ctx); err == nil {
				pending := map[string]int{}
				for _, o := range s.Observers {
					pending[o.Name] = o.Pending
				}
				log.Info("settling", "pending", pending, "export_queue", s.ExportQueue)
			}
		}
	}
}

// Line is the one-line summary of an incremental and a batch result.
// age_reduction is 1 − age_incremental/age_batch.
func Line(inc, batch *Result) string {
	ratio, reduction := 0.0, 0.0
	if inc.Latency.P50 > 0 {
		ratio = batch.Latency.P50 / inc.Latency.P50
	}
	ai, ab := inc.Average.MeanAge.Seconds(), batch.Average.MeanAge.Seconds()
	if ab > 0 {
		reduction = 1 - ai/ab
	}
	return fmt.Sprintf("incremental_p50_s=%.2f batch_p50_s=%.1f latency_ratio=%.1f age_incremental_s=%.1f age_batch_s=%.1f age_reduction=%.2f",
		inc.Latency.P50, batch.Latency.P50, ratio, ai, ab, reduction)
}
