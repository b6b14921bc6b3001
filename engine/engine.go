// Package engine runs a whole deployment in one process: the crawler, the
// observer chain and the serving feeder over one table (the embedded
// Badger table in a directory, or a store the caller opened: Cloud
// Bigtable), and the backend of the search UI (package web) over it.
// cmd/search is a thin main around it; the freshness experiment runs it
// too.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/internal/indexdir"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/promstats"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/web"
	"github.com/caffeine-go/caffeine/webtable"
)

// IndexDir is where, inside Config.Dir, the serving index lives.
const IndexDir = "serving-index"

// TableFile is where, inside Config.Dir, the name of the table (Config.Table)
// whose serving index the directory holds is kept, when that table is not
// the directory's own Badger table.
const TableFile = indexdir.TableFile

var (
	// ErrOtherTable is returned by Open when Config.Dir holds the serving
	// index of another table than the one to serve.
	ErrOtherTable = errors.New("engine: another table's directory")
)

// DefaultCrawlAhead is cmd/search's -crawl-ahead. Paced, a bulk crawl's
// pages are searchable about a second after their fetch, where unpaced
// they wait behind the chain's backlog, and the crawl takes somewhat
// longer to reach idle (docs/benchmarks/bulk.md § Paced or unpaced). The
// backlog stays bounded, where an unpaced crawl of a big site lets it
// grow without bound.
const DefaultCrawlAhead = 512

// Config configures an Engine.
type Config struct {
	// Dir is the local directory: the embedded Badger table (without
	// Store), the serving index (Dir/IndexDir) and the status history.
	Dir string
	// Store, if not nil, is the table, opened by the caller (a Bigtable
	// store); Dir then holds no table, only the serving index and the
	// history. The engine owns it: Close closes it after the DB, and so
	// does an Open that fails. Nil opens the Badger table in Dir.
	Store percolator.Store
	// Table names Store's table (bigtable://PROJECT/INSTANCE/TABLE); it is
	// kept in Dir/TableFile, so that the serving index there is never
	// served with another table. Required with Store.
	Table string
	// Crawl, if set, runs a crawler with these options.
	Crawl *crawl.Options
	// Observers run in the worker; nil runs no worker (serving only).
	Observers []percolator.Observer
	// Scanners and Workers size the observer worker (defaults 2 and 16).
	Scanners, Workers int
	// CrawlAhead, if positive, paces the crawler to the chain: no page is
	// handed out while more than CrawlAhead foreground tasks wait in this
	// process's worker (percolator.Worker.Backlog). A bulk crawl then
	// runs a bounded backlog ahead of indexing, and a page is searchable
	// seconds after its fetch instead of after the whole backlog; the
	// crawl takes as long as the chain, and pages exported before their
	// inbound links arrive are re-exported once those do. Zero crawls as
	// fast as the hosts allow. cmd/search's default is DefaultCrawlAhead.
	CrawlAhead int
	// Bulk crawls before it indexes: the worker and the feeder start once
	// the crawler first has nothing due and nothing in flight
	// (crawl.Options.CaughtUp), or has stopped. A first crawl of a big
	// site then runs at the crawler's speed, and the chain meets its
	// pages all at once: a section's PageRank is solved for all its
	// pages, not again for each as it arrives, and a page's inbound
	// links are there before its first export. Nothing is searchable
	// until the crawl is over; the recrawls after it are indexed as
	// usual. CrawlAhead does not hold the first crawl.
	Bulk bool
	// Stages, with Bulk, returns the stages in which the first crawl's
	// pages are drained through the observers (percolator.WorkerOptions.
	// Stages; cmd/search gives observers.BulkStages): each observer runs once
	// the stages before its own have nothing left, so a page is elected
	// once its PageRank has converged and exported once with all its
	// anchors, instead of again as each arrives. The crawler hands out no
	// page meanwhile (its recrawls wait for the drain).
	Stages func(*percolator.DB) []percolator.Stage
	// NoFeeder leaves the export queue alone (nothing becomes searchable).
	NoFeeder bool
	// IndexName names the serving index (feed.FeederOptions.Name): on
	// a table other processes share, one process feeds the index of a
	// name and the others stand by, and every name registered gets every
	// export (replicas). Default feed.DefaultIndexName.
	IndexName string
	// Rebuild rebuilds the serving index from the table before serving.
	Rebuild bool
	// GCInterval is the interval of old-version collection; default 1
	// minute, negative for none. A pass reads every row, so the wait after
	// a pass is at least gcIdle times what it took: GC gets at most a tenth
	// of the time however big the table. On a shared table only the
	// engine holding the engine duty collects (and counts the pages for
	// the others' status pages): give every engine of a table the same
	// GCInterval, or one without GC may hold the duty.
	GCInterval time.Duration
	// GCGrace is how long old versions are kept (percolator.Options.GCGrace);
	// default 1 minute.
	GCGrace time.Duration
	// SampleInterval is the interval of the status page's time series.
	// Default 5s.
	SampleInterval time.Duration
	// OnApply is called with every batch the serving index applies.
	OnApply func([]serving.Applied)
	// CacheBytes is the memory of the Badger table's caches and memtables
	// (badger.Options.CacheBytes); 0 means Badger's defaults. Unused with
	// Store.
	CacheBytes int64
	// DiskReserve is the least free space the Badger table and the serving
	// index keep in their file system (badger.Options.DiskReserve,
	// serving.Options.DiskReserve): zero means their defaults, negative
	// no check.
	DiskReserve int64
	// Logger receives what happens. Nil discards it.
	Logger *slog.Logger
}

// Engine is a running deployment.
type Engine struct {
	DB      *percolator.DB
	Index   *serving.Index
	Crawler *crawl.Crawler // nil without Config.Crawl
	Worker  *percolator.Worker
	Feeder  *feed.Feeder
	Metrics *prometheus.Registry

	cfg    Config
	stages []percolator.Stage // the worker's, with Bulk
	// duty is held by one engine of a shared table: its GC passes and
	// page counts serve every process (pageCounts).
	duty  *percolator.Duty
	store percolator.Store
	log   *slog.Logger

	// spread is the table's (webtable.Spread): the buckets of its queues
	// and frontier.
	spread int

	crawlDone chan struct{} // closed when the crawler's Run returned
	// indexing is closed when the worker and the feeder may start: at
	// once, or with Config.Bulk once the first crawl is over.
	indexing  chan struct{}
	startOnce sync.Once

	computeMu  sync.Mutex      // held while computing Stats: one at a time
	lastCounts *tableCounts    // the last table scan's, under computeMu
	pagesDirty bool            // a commit since the last page count, under computeMu
	held       *pageCounts     // the last count this engine made holding its duty, under computeMu
	marked     time.Time       // when markChanged last wrote, under computeMu
	changed    <-chan struct{} // a commit of this process since (DB.Watch)
	stopWatch  func()
	statsMu    sync.Mutex // guards the fields below
	statsAt    time.Time
	statsKeep  time.Duration // how long stats is served again
	stats      *web.Stats
	// statsWork is what this process had done (work) when stats was
	// computed; nextLook is when turnedIdle may look again.
	statsWork int64
	nextLook  time.Time
	idleSince struct {
		ok              bool
		at              time.Time
		applied, loaded int64
	}
	workerRuns atomic.Int64 // the worker's runs at the last quiet look (workerStill)
	gcPasses   atomic.Int64 // GC passes begun (gcLoop)
	samples    []web.Sample
	history    history // the samples' file; used by Open, then by the sampler only
	lastSamp   struct {
		at              time.Time
		fetched, loaded int64
	}
}

// Open opens the table (cfg.Store, or the Badger table in cfg.Dir) and the
// serving index in cfg.Dir, and sets up what Run runs.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Dir == "" {
		if cfg.Store != nil {
			cfg.Store.Close()
		}
		return nil, errors.New("engine: no directory")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.IndexName == "" {
		cfg.IndexName = feed.DefaultIndexName
	}
	if err := webtable.CheckIndexName(cfg.IndexName); err != nil {
		if cfg.Store != nil {
			cfg.Store.Close()
		}
		return nil, fmt.Errorf("engine: %w", err)
	}
	if cfg.GCInterval == 0 {
		cfg.GCInterval = time.Minute
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 5 * time.Second
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, crawlDone: make(chan struct{}), indexing: make(chan struct{}), Metrics: prometheus.NewRegistry(), store: cfg.Store}
	ok := false
	defer func() {
		if !ok {
			e.Close()
		}
	}()
	rebuild, err := e.openStore()
	if err != nil {
		return nil, err
	}
	if e.DB, err = percolator.Open(ctx, e.store, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, GCGrace: cfg.GCGrace, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	// Read (or record) the queues' spread once, before any transaction
	// that needs it: two that record it would conflict.
	if e.spread, err = webtable.Spread(ctx, e.DB); err != nil {
		return nil, err
	}
	e.changed, e.stopWatch = e.DB.Watch("")
	e.duty = e.DB.Duty(engineDuty)
	iopt := serving.Options{OnApply: cfg.OnApply, Logger: cfg.Logger, DiskReserve: cfg.DiskReserve}
	dir := filepath.Join(cfg.Dir, IndexDir)
	if rebuild {
		if !cfg.Rebuild {
			e.log.Info("building the serving index from the table", "dir", dir, "table", cfg.Table)
		}
		e.Index, err = feed.Rebuild(ctx, e.DB, dir, iopt)
	} else {
		e.Index, err = serving.OpenIndex(dir, iopt)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Store != nil && rebuild {
		// Only once the index is whole: a build cut short is done again.
		if err := os.WriteFile(filepath.Join(cfg.Dir, TableFile), []byte(cfg.Table+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	if len(cfg.Observers) > 0 {
		m := promstats.NewMetrics()
		e.Metrics.MustRegister(m)
		wopt := percolator.WorkerOptions{Scanners: cfg.Scanners, Workers: cfg.Workers, Metrics: m, Logger: cfg.Logger}
		if cfg.Bulk && cfg.Crawl != nil && cfg.Stages != nil {
			e.stages = cfg.Stages(e.DB)
			wopt.Stages = e.stages
		}
		e.Worker, err = percolator.NewWorker(e.DB, wopt, cfg.Observers...)
		if err != nil {
			return nil, err
		}
	}
	if !cfg.NoFeeder {
		e.Feeder = feed.NewFeeder(e.DB, e.Index, feed.FeederOptions{Name: cfg.IndexName, Logger: cfg.Logger})
	}
	if cfg.Crawl != nil {
		opt := *cfg.Crawl
		if opt.Logger == nil {
			opt.Logger = cfg.Logger
		}
		if cfg.Bulk {
			caught := opt.CaughtUp
			opt.CaughtUp = func() {
				e.startIndexing()
				if caught != nil {
					caught()
				}
			}
		}
		if n := cfg.CrawlAhead; n > 0 && e.Worker != nil && opt.Behind == nil {
			w := e.Worker
			opt.Behind = func() bool { return w.Backlog() > n }
		}
		if w := e.Worker; w != nil && w.Staging() {
			behind := opt.Behind
			opt.Behind = func() bool {
				return e.Indexing() && w.Staging() || behind != nil && behind()
			}
		}
		if e.Crawler, err = crawl.New(e.DB, opt); err != nil {
			return nil, err
		}
	} else {
		close(e.crawlDone)
	}
	if !cfg.Bulk || e.Crawler == nil {
		e.startIndexing()
	}
	e.history.path = filepath.Join(cfg.Dir, HistoryFile)
	if e.samples, err = e.history.load(); err != nil {
		e.log.Warn("status history not loaded", "err", err)
	}
	e.Metrics.MustRegister(collector{e})
	ok = true
	return e, nil
}

// Run runs the crawler, the worker, the feeder, GC and the status sampler
// until ctx is done or one of them fails. A crawler that finishes
// (Options.Once, MaxPages) or has nothing to crawl (crawl.ErrNoSeeds,
// crawl.ErrPrivateSeeds) stops alone and the rest keeps going; a crawler
// or feeder that fails, a worker whose table kept failing
// (percolator.ErrStoreFailing), or a GC pass that the operating system failed
// (out of file descriptors, say), stops everything, and Run returns its
// error (the first, if several fail). So does a table or index that can
// no longer write (watchHealth): a full disk (diskspace.ErrFull, naming
// the directory and the space needed) or a broken store (badger.ErrBroken,
// serving.ErrIndexBroken). Run returns nil when ctx ends it.
func (e *Engine) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return e.watchHealth(ctx) })
	if e.Worker != nil {
		g.Go(func() error {
			if !e.waitIndexing(ctx) {
				return nil
			}
			err := e.Worker.Run(ctx)
			if err != nil && ctx.Err() == nil {
				e.log.Error("worker stopped", "err", err)
				return fmt.Errorf("engine: worker: %w", err)
			}
			return nil
		})
	}
	if e.Crawler != nil {
		g.Go(func() error {
			defer close(e.crawlDone)
			err := e.Crawler.Run(ctx)
			switch {
			case err == nil:
				e.log.Info("crawl done", "fetched", e.Crawler.Stats().Fetched)
			case errors.Is(err, crawl.ErrNoSeeds):
				e.log.Info("nothing to crawl: no seeds given or remembered")
			case errors.Is(err, crawl.ErrPrivateSeeds):
				e.log.Warn("not recrawling", "err", err)
			case ctx.Err() == nil:
				e.log.Error("crawler stopped", "err", err)
				return fmt.Errorf("engine: crawler: %w", err)
			}
			return nil
		})
	}
	if e.Feeder != nil {
		g.Go(func() error {
			if !e.waitIndexing(ctx) {
				return nil
			}
			err := e.Feeder.Run(ctx)
			if err != nil && ctx.Err() == nil {
				e.log.Error("feeder stopped", "err", err)
				return fmt.Errorf("engine: feeder: %w", err)
			}
			return nil
		})
	}
	g.Go(func() error { e.duty.Hold(ctx); return nil })
	if e.cfg.GCInterval > 0 {
		g.Go(func() error { return e.gcLoop(ctx) })
	}
	e.sampleBase()
	g.Go(func() error { e.every(ctx, e.cfg.SampleInterval, e.sample); return nil })
	return g.Wait()
}

// healthPoll is how often watchHealth asks the table and the index.
const healthPoll = 250 * time.Millisecond

// healthy is a table or index that tells whether it can still write
// (badger.Store, serving.Index).
type healthy interface{ Health() error }

// watchHealth returns the first Health error of the table or the index,
// or nil when ctx ends. The engine stops on it rather than pause: the
// crawler and the worker take a failed write for a failure of one page or
// notification and retry it, which a full disk would turn into a stream
// of failures (and fetches thrown away) while nothing progresses. What
// was committed is on disk; a restart once space is freed goes on from
// there, and a restart before says the disk is full at Open.
func (e *Engine) watchHealth(ctx context.Context) error {
	var hs []healthy
	if h, ok := e.store.(healthy); ok {
		hs = append(hs, h)
	}
	if e.Index != nil {
		hs = append(hs, e.Index)
	}
	if len(hs) == 0 {
		return nil
	}
	t := time.NewTicker(healthPoll)
	defer t.Stop()
	for {
		for _, h := range hs {
			if err := h.Health(); err != nil {
				return fmt.Errorf("engine: stopped: %w", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// startIndexing lets the worker and the feeder start.
func (e *Engine) startIndexing() {
	e.startOnce.Do(func() {
		if e.cfg.Bulk && e.Crawler != nil {
			e.log.Info("bulk crawl over: indexing", "fetched", e.Crawler.Stats().Fetched)
		}
		close(e.indexing)
	})
}

// waitIndexing waits until the worker and the feeder may start, and
// reports whether they may (false: ctx ended first).
func (e *Engine) waitIndexing(ctx context.Context) bool {
	select {
	case <-e.indexing:
		return true
	case <-ctx.Done():
		return false
	}
}

// Indexing reports whether the worker and the feeder run (or may): false
// while a Bulk engine's first crawl goes on.
func (e *Engine) Indexing() bool {
	select {
	case <-e.indexing:
		return true
	default:
		return false
	}
}

func (e *Engine) every(ctx context.Context, d time.Duration, fn func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// engineDuty names the duty of the engines of a shared table (GC passes
// and page counts): one holds it at a time (percolator.Duty).
const engineDuty = "engine"

// gcIdle is how many times a GC pass's duration the engine waits before
// the next one, at least.
const gcIdle = 9

// gcLoop collects old versions every GCInterval, or gcIdle times the last
// pass's duration when that is longer; on a shared table, only while
// this engine holds its duty (one process collects for all). While a
// Bulk engine's first load goes on (bulkLoading) it only moves the safe
// point. A pass that fails is
// retried at the next interval, but one that the system failed (storeFault)
// stops the engine.
func (e *Engine) gcLoop(ctx context.Context) error {
	wait := e.cfg.GCInterval
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if !e.duty.Held() {
			wait = e.cfg.GCInterval // another process collects
			continue
		}
		if e.bulkLoading() {
			// No pass, but the safe point moves: the table's own
			// compactions drop the notifications answered meanwhile.
			if _, err := e.DB.AdvanceSafePoint(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("gc: safe point", "err", err)
			}
			wait = e.cfg.GCInterval
			continue
		}
		e.gcPasses.Add(1)
		began := time.Now()
		s, err := e.DB.GC(ctx)
		took := time.Since(began)
		if err != nil && ctx.Err() == nil && storeFault(err) {
			e.log.Error("gc failed in the table's store: stopping", "err", err)
			return fmt.Errorf("engine: gc: %w", err)
		}
		if err != nil && ctx.Err() == nil {
			e.log.Warn("gc", "err", err)
		} else if err == nil {
			e.log.Debug("gc", "columns", s.Cells, "took", s.Duration)
		}
		wait = max(e.cfg.GCInterval, gcIdle*took)
	}
}

// storeFault reports whether err comes from the operating system (out of
// file descriptors or disk space, an I/O error). A GC pass compacts the
// table, and an embedded store whose compaction failed that way is not
// safe to go on with (Badger's DropPrefix leaves its memtables half
// released): stopping beats a panic in the store later.
func storeFault(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno)
}

// bulkLoading reports whether a Bulk engine's first load goes on: its
// crawl, then the worker's stages. GC's passes wait for its end. A pass
// reads every row and flattens the table (percolator.Compactor), and
// what it would collect meanwhile is little: each stage writes a page's
// columns about once. At a million pages, GC and the compactions it fed
// took two fifths of the CPU of the elections' stage. The safe point
// moves all the same (percolator.DB.AdvanceSafePoint): the worker
// deletes a notification for every page and observer, and without it
// Badger kept every one of those deletions until the load was over,
// for the scanners to step over on every pass.
func (e *Engine) bulkLoading() bool {
	return !e.Indexing() || e.Worker != nil && e.Worker.Staging()
}

// openStore sets e.store: the Badger table in Dir, or Config.Store once
// Dir is checked to be its index's (checkIndexDir). It reports whether the
// serving index must be built from the table.
func (e *Engine) openStore() (rebuild bool, err error) {
	cfg := e.cfg
	if cfg.Store == nil {
		if name, err := indexdir.Table(cfg.Dir); err != nil {
			return false, err
		} else if name != "" {
			return false, fmt.Errorf("%w: %s holds the serving index of %s, not a Badger table: serve that table (-table), or give another directory", ErrOtherTable, cfg.Dir, name)
		}
		st, err := badger.Open(cfg.Dir, badger.Options{CacheBytes: cfg.CacheBytes, DiskReserve: cfg.DiskReserve})
		if err != nil {
			return false, err
		}
		e.store = st
		return cfg.Rebuild, nil
	}
	if cfg.Table == "" {
		return false, errors.New("engine: Config.Store without Config.Table")
	}
	fresh, err := checkIndexDir(cfg.Dir, cfg.Table, cfg.Rebuild)
	// A directory new to the table (a new machine, a build cut short) gets
	// its index from the table: the export queue holds only what no
	// serving process has applied yet.
	return cfg.Rebuild || fresh, err
}

// checkIndexDir prepares dir for the serving index of table (not dir's
// own Badger table) and reports whether the index must be built afresh:
// dir has none of table's. It is an error if dir holds a Badger table, or
// the index of another table and rebuild is false.
func checkIndexDir(dir, table string, rebuild bool) (fresh bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("engine: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
		return false, fmt.Errorf("%w: %s holds an embedded Badger table; with %s, give a directory for its serving index alone", ErrOtherTable, dir, table)
	}
	name, err := indexdir.Table(dir)
	switch {
	case err != nil:
		return false, err
	case name == "":
		return true, nil
	case name != table && !rebuild:
		return false, fmt.Errorf("%w: %s holds the serving index of %s, not of %s: give another directory, or rebuild the index from %s (search -rebuild)", ErrOtherTable, dir, name, table, table)
	}
	return false, nil
}

// indexName returns the name of the serving index.
func (e *Engine) indexName() string { return e.cfg.IndexName }

// queue returns the export queue of the serving index.
func (e *Engine) queue() webtable.Queue {
	q := feed.IndexQueue(e.DB, e.cfg.IndexName)
	q.Spread = e.spread
	return q
}

// Close closes the index and the table.
func (e *Engine) Close() error {
	if e.stopWatch != nil {
		e.stopWatch()
	}
	var errs []error
	if e.Index != nil {
		errs = append(errs, e.Index.Close())
	}
	if e.DB != nil {
		errs = append(errs, e.DB.Close())
	}
	if e.store != nil {
		errs = append(errs, e.store.Close())
	}
	return errors.Join(errs...)
}
