package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
)

// heldSite serves pages p0..p(n-1) on 127.0.0.1, each linking the next
// and p0; the fetch of the last one waits until release is called.
type heldSite struct {
	seed    string
	held    chan struct{} // closed when the last page's request arrived
	release func()
	word    atomic.Value // string: a word every page has
}

func newHeldSite(t *testing.T, n int) *heldSite {
	t.Helper()
	s := &heldSite{held: make(chan struct{})}
	s.word.Store("zebra")
	gate := make(chan struct{})
	var arrived, released sync.Once
	s.release = func() { released.Do(func() { close(gate) }) }
	last := fmt.Sprintf("/p%d", n-1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &i); err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == last {
			arrived.Do(func() { close(s.held) })
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		next := ""
		if i+1 < n {
			next = fmt.Sprintf(`<a href="/p%d">page %d</a>`, i+1, i+1)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>page %d</title></head><body><p>words of page %d about %s</p>%s <a href="/p0">home</a></body></html>`, i, i, s.word.Load(), next)
	}))
	t.Cleanup(func() {
		s.release()
		srv.Close()
	})
	s.seed = srv.URL + "/p0"
	return s
}

// A Bulk engine indexes nothing while its first crawl goes on (a fetch
// in flight), then everything, stage by stage, exactly as the chain
// would (verify), and its crawler goes on after; without Bulk, the chain
// runs during the crawl. Each case's control is the other.
func TestBulkIndexesAfterTheCrawl(t *testing.T) {
	for _, bulk := range []bool{true, false} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) {
			const pages = 6
			site := newHeldSite(t, pages)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			e, stop := runBulk(t, ctx, crawl.Options{Seeds: []string{site.seed}, AllowPrivate: true, Delay: -1, Parallel: 4}, bulk)
			defer stop()
			defer site.release() // before the stop: a fetch held would hold Run
			select {
			case <-site.held:
			case <-ctx.Done():
				t.Fatal("the last page was never asked for")
			}
			// The other pages are loaded; the chain has had time to run
			// on them (without Bulk it does at once: hints).
			deadline := time.Now().Add(5 * time.Second)
			for e.Crawler.Stats().Fetched < pages-1 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			runs := observerRuns(e)
			if bulk && (runs > 0 || e.Indexing()) {
				t.Fatalf("Bulk: %d observer runs (indexing %v) while the crawl has a fetch in flight, want none", runs, e.Indexing())
			}
			if !bulk && runs == 0 {
				t.Fatal("without Bulk no observer ran during the crawl")
			}
			if st, err := e.Stats(ctx); err != nil || st.BulkCrawl != bulk {
				t.Fatalf("Stats during the crawl: bulk_crawl %v (%v), want %v", st != nil && st.BulkCrawl, err, bulk)
			}
			site.release()
			if err := e.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := e.Index.Count(); err != nil || n != pages {
				t.Fatalf("%d documents searchable once idle (%v), want %d", n, err, pages)
			}
			if !e.Indexing() {
				t.Fatal("idle, and still not indexing")
			}
			if st, err := e.Stats(ctx); err != nil || st.BulkCrawl || st.BulkStage != "" {
				t.Fatalf("Stats once idle: bulk_crawl or bulk_stage %q still set (%v)", st.BulkStage, err)
			}
			if e.crawlerDone() {
				t.Fatal("the crawler stopped after its first crawl: recrawls would never run")
			}
			// Bulk drains the chain in stages (Config.Stages): a page
			// is elected and exported once, after its PageRank and its
			// anchors; without Bulk, each as they arrive (12 elections
			// and 4 more exports here).
			for _, o := range e.Worker.Stats() {
				want := map[string]int64{"elect": pages, "export": pages, "export-links": 0, "elect-rank": 0}
				if n, ok := want[o.Name]; bulk && ok && o.Runs != n {
					t.Errorf("Bulk: %s ran %d times, want %d", o.Name, o.Runs, n)
				}
			}
			diffs, _, err := observers.Verify(ctx, e.DB, 0.01, 5)
			if err != nil || len(diffs) > 0 {
				t.Fatalf("verify: %v %s", err, strings.Join(diffs, "; "))
			}
			// A recrawl after the bulk crawl is indexed as usual.
			site.word.Store("okapi")
			if _, err := crawl.Recrawl(ctx, e.DB, []string{site.seed}, time.Now()); err != nil {
				t.Fatal(err)
			}
			for {
				r, err := e.Index.Search(ctx, serving.Query{Q: "okapi", N: 10})
				if err != nil {
					t.Fatal(err)
				}
				if r.Total == 1 {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatal("the page recrawled after the bulk crawl never became searchable with its new text")
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
	}
}

// runBulk opens an engine with the chain crawling with copt (Bulk if
// bulk) and runs it; stop ends the run, checks that it ended well and
// closes the engine.
func runBulk(t *testing.T, ctx context.Context, copt crawl.Options, bulk bool) (e *Engine, stop func()) {
	t.Helper()
	e, err := Open(ctx, Config{Dir: t.TempDir(), Crawl: &copt, Observers: observers.Chain(), Bulk: bulk, Stages: observers.BulkStages})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	return e, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		e.Close()
	}
}

func observerRuns(e *Engine) int64 {
	var n int64
	for _, o := range e.Worker.Stats() {
		n += o.Runs
	}
	return n
}

// A Bulk engine whose crawler stops (MaxPages) before nothing is due
// indexes what it fetched.
func TestBulkIndexesWhenTheCrawlStops(t *testing.T) {
	site := newHeldSite(t, 10)
	site.release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, stop := runBulk(t, ctx, crawl.Options{Seeds: []string{site.seed}, AllowPrivate: true, Delay: -1, Parallel: 1, MaxPages: 3}, true)
	defer stop()
	if err := e.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Index.Count(); err != nil || n != 3 {
		t.Fatalf("%d documents searchable once idle (%v), want the 3 fetched", n, err)
	}
}

// A Bulk engine runs no GC pass while its first load goes on: during
// the crawl (a fetch held) and during the stages (the PageRank stage's
// Before held), but moves the safe point meanwhile; it runs them as
// usual once the stages are drained. The control is the passes after the
// drain.
func TestBulkHoldsGCUntilStaged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, site, inRank, releaseRank := runHeldStages(t, ctx, 4, 5*time.Millisecond)
	var safe uint64
	held := func(what string, wait <-chan struct{}) {
		t.Helper()
		select {
		case <-wait:
		case <-ctx.Done():
			t.Fatalf("%s: never reached", what)
		}
		time.Sleep(200 * time.Millisecond) // 40 intervals
		if n := e.gcPasses.Load(); n != 0 {
			t.Fatalf("%s: %d GC passes, want none", what, n)
		}
		// The safe point follows the clock (less GCGrace) meanwhile.
		if s := e.DB.SafePoint(); s <= safe {
			t.Fatalf("%s: the safe point stays at %d (was %d)", what, s, safe)
		}
		safe = e.DB.SafePoint()
	}
	held("the crawl", site.held)
	site.release()
	held("the PageRank stage", inRank)
	if !e.Worker.Staging() {
		t.Fatal("the PageRank stage's Before runs, and the worker does not stage")
	}
	releaseRank()
	if err := e.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	for e.gcPasses.Load() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("no GC pass once the stages were drained")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// While a Bulk engine stages, its counts read the pages once (the
// crawler hands out none meanwhile) and reuse that count, exact, however
// the table changes and whatever it took; once the stages are drained
// they read them again.
func TestStagedCountsReadPagesOnce(t *testing.T) {
	const pages = 4
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, site, inRank, releaseRank := runHeldStages(t, ctx, pages, 0)
	site.release()
	select {
	case <-inRank:
	case <-ctx.Done():
		t.Fatal("the PageRank stage never began")
	}
	counts := func() pageCounts {
		t.Helper()
		e.computeMu.Lock()
		defer e.computeMu.Unlock()
		e.pagesDirty = true // as a commit of the worker's would
		c, err := e.counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pc := c.pageCounts
		c.pageCounts.took = 0 // no reuse for the time the scan took
		return pc
	}
	c1 := counts()
	c2 := counts()
	if c1.pages != pages || c2.pages != pages || !c2.staged {
		t.Fatalf("staged counts: %d then %d pages (staged %v), want %d", c1.pages, c2.pages, c2.staged, pages)
	}
	if !c2.at.Equal(c1.at) {
		t.Errorf("the pages were read again during a stage (at %v, then %v)", c1.at, c2.at)
	}
	// A frontier row comes due (its time made past): the due rows alone
	// are read again, and agree with a whole count.
	e.computeMu.Lock()
	e.lastCounts.pageCounts.nextDue = time.Now().UnixMilli() - 1
	e.computeMu.Unlock()
	c3 := counts()
	full, err := e.countPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !c3.at.Equal(c1.at) || c3.dueAt.IsZero() {
		t.Errorf("a row came due: the pages read again at %v (first at %v), the due rows at %v; want the due rows alone", c3.at, c1.at, c3.dueAt)
	}
	if c3.pages != full.pages || c3.frontier != full.frontier || c3.due != full.due || c3.nextDue != full.nextDue {
		t.Errorf("a row came due: %d pages, %d in the frontier, %d due, next at %d; a whole count: %d, %d, %d, next at %d",
			c3.pages, c3.frontier, c3.due, c3.nextDue, full.pages, full.frontier, full.due, full.nextDue)
	}
	releaseRank()
	if err := e.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	for e.Worker.Staging() {
		time.Sleep(5 * time.Millisecond)
	}
	if c4 := counts(); c4.pages != pages || !c4.at.After(c2.at) || c4.staged {
		t.Errorf("once drained: %d pages read at %v (staged %v; before: at %v), want %d read afresh", c4.pages, c4.at, c4.staged, c2.at, pages)
	}
}

// runHeldStages runs a Bulk engine crawling a heldSite of n pages (its
// last page's fetch held until site.release) through observers.BulkStages
// with the PageRank stage's Before held: inRank is closed when it begins
// and releaseRank lets it go on. gc is Config.GCInterval (0: default).
// The run is stopped and the engine closed at the test's cleanup.
func runHeldStages(t *testing.T, ctx context.Context, n int, gc time.Duration) (e *Engine, site *heldSite, inRank <-chan struct{}, releaseRank func()) {
	t.Helper()
	site = newHeldSite(t, n)
	began, hold := make(chan struct{}), make(chan struct{})
	var once sync.Once
	releaseRank = func() { once.Do(func() { close(hold) }) }
	stages := func(db *percolator.DB) []percolator.Stage {
		st := observers.BulkStages(db)
		before := st[1].Before
		st[1].Before = func(ctx context.Context) error {
			close(began)
			select {
			case <-hold:
			case <-ctx.Done():
				return ctx.Err()
			}
			return before(ctx)
		}
		return st
	}
	copt := crawl.Options{Seeds: []string{site.seed}, AllowPrivate: true, Delay: -1, Parallel: 4}
	e, err := Open(ctx, Config{Dir: t.TempDir(), Crawl: &copt, Observers: observers.Chain(), Bulk: true, Stages: stages, GCInterval: gc})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	t.Cleanup(func() {
		site.release() // a fetch or a Before held would hold Run
		releaseRank()
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		e.Close()
	})
	return e, site, began, releaseRank
}
