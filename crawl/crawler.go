package crawl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/robots"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Crawler fetches the pages of its frontier, which lives in the table,
// and writes each through a loader transaction. Its methods are safe for
// concurrent use; Run runs once at a time.
type Crawler struct {
	db        *percolator.DB
	spread    int // the table's (webtable.Spread): the frontier's buckets
	opt       Options
	id        string // lease owner: DB id / crawler id
	exclusive bool   // the store has one process: other DBs' leases are stale
	log       *slog.Logger
	token     string // robots.txt product token of Options.UserAgent

	transport http.RoundTripper // guarded against private addresses, maybe wrapped
	plain     *http.Client      // robots.txt and sitemaps: follows up to 5 redirects
	known     *lru              // page rows known to exist
	hosts     *hosts
	shared    *sharedHosts // politeness across processes; nil on an exclusive store
	scope     *scope       // set by Run before its goroutines start
	archive   *archive     // set by Run before its goroutines start, with Options.WARCDir

	running atomic.Bool
	caught  atomic.Bool // Options.CaughtUp was called
	stats   counters
	// heldMax bounds the rows the dispatcher holds (maxHeld; tests lower
	// it); indexRead counts the due index rows the dispatcher read.
	heldMax   int
	indexRead atomic.Int64
}

// New returns a crawler over db, which should be opened with
// webtable.Observed and webtable.Weak so that loads notify the observers.
func New(db *percolator.DB, opt Options) (*Crawler, error) {
	if err := opt.ensureDefaults(); err != nil {
		return nil, err
	}
	var id [4]byte
	rand.Read(id[:])
	c := &Crawler{
		db:      db,
		opt:     opt,
		id:      db.ID() + "/" + hex.EncodeToString(id[:]),
		log:     opt.Logger,
		known:   newLRU(opt.KnownRows),
		heldMax: maxHeld,
	}
	c.token = robots.Token(opt.UserAgent)
	if !strings.EqualFold(c.token, extract.Agent) {
		// The parse observer cannot know the User-Agent a page was
		// fetched with, so both read page robots rules for one token.
		c.log.Warn("robots meta and X-Robots-Tag rules are read for "+extract.Agent+", not for this User-Agent", "user_agent", opt.UserAgent)
	}
	var err error
	if c.spread, err = webtable.Spread(context.Background(), db); err != nil {
		return nil, err
	}
	_, c.exclusive = db.Store().(percolator.ExclusiveStore)
	c.hosts = newHosts(&c.opt)
	if !c.exclusive {
		// A slot is held from before the claim until the requests end.
		c.shared = &sharedHosts{st: db.Store(), owner: []byte(c.id), ttl: c.opt.longestFetch() + 30*time.Second}
	}
	c.transport = newTransport(opt.AllowPrivate, opt.Timeout, opt.Parallel, opt.PrivateAddrs...)
	if opt.WrapTransport != nil {
		c.transport = opt.WrapTransport(c.transport)
	}
	c.plain = &http.Client{
		Transport: c.transport,
		Timeout:   opt.Timeout,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	return c, nil
}

// Run crawls until ctx is done or, with Options.Once, until nothing in the
// frontier is due, or until Options.MaxPages fetches. When ctx ends, fetches
// under way complete and their loader transactions commit; pages claimed
// but not fetched are released; a later Run resumes from the table. Run
// returns ctx.Err() when stopped by ctx.
func (c *Crawler) Run(ctx context.Context) (err error) {
	if !c.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer c.running.Store(false)
	c.stats.begin()
	defer c.stats.end()
	defer c.caughtUp()
	if c.shared != nil {
		if err := c.db.Store().EnsureFamilies(ctx, politeFamilies); err != nil {
			return fmt.Errorf("crawl: create the politeness family: %w", err)
		}
	}
	if err := c.addSeeds(ctx, c.opt.Seeds); err != nil {
		return err
	}
	seeds, err := c.loadSeeds(ctx)
	if err != nil {
		return err
	}
	if len(seeds) == 0 {
		return ErrNoSeeds
	}
	if err := c.checkRemembered(seeds); err != nil {
		return err
	}
	c.scope = newScope(c.opt.Scope, seeds)
	if c.opt.RecrawlDir != "" {
		// Requests queued while no process held the table, then those
		// queued while this one runs.
		c.applySpool(ctx)
		spoolCtx, stopSpool := context.WithCancel(ctx)
		spoolDone := make(chan struct{})
		go func() {
			defer close(spoolDone)
			c.pollSpool(spoolCtx, spoolInterval)
		}()
		defer func() { stopSpool(); <-spoolDone }()
	}
	if c.opt.WARCDir != "" {
		a, err := openArchive(c.opt.WARCDir, c.opt.WARCMaxSize, c.opt.UserAgent, c.log, &c.stats.warcRecords, &c.stats.warcDropped)
		if err != nil {
			return err
		}
		c.archive = a
		defer func() {
			c.archive = nil
			if aerr := a.close(); aerr != nil {
				err = errors.Join(err, aerr)
			}
		}()
	}

	// Fetches and loads use fetchCtx, which outlives ctx until Run returns.
	fetchCtx, stopFetch := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFetch()
	markCtx, stopMarks := context.WithCancel(ctx)
	marked := make(chan struct{})
	go func() { defer close(marked); c.markChanges(markCtx) }()
	defer func() { stopMarks(); <-marked }()
	jobs := make(chan *job)
	done := make(chan *job, c.opt.Workers)
	var wg sync.WaitGroup
	for range c.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := c.newFetcher(fetchCtx)
			for j := range jobs {
				c.handle(ctx, fetchCtx, f, j)
				done <- j
			}
		}()
	}
	err = c.dispatch(ctx, jobs, done)
	close(jobs)
	wg.Wait()
	return err
}

// handle claims a due page, fetches it, adds its links to the frontier and
// loads it. Links go first: a crash in between refetches the page, it does
// not lose its links. Claims run here, in the workers, in parallel.
func (c *Crawler) handle(ctx, fetchCtx context.Context, f *fetcher, j *job) {
	if ctx.Err() != nil {
		j.undo()
		return
	}
	// The host first: taking it costs one store call, a claim a
	// transaction.
	if ok, retry := c.reserveHost(ctx, j); !ok {
		j.undo()
		c.hosts.backOff(j.host, retry)
		return
	}
	ok, err := c.claim(ctx, j)
	if err != nil && ctx.Err() == nil {
		c.log.Info("claim failed", "url", j.url, "err", err)
	}
	if !ok || err != nil {
		c.freeHost(fetchCtx, j)
		j.undo()
		return
	}
	j.claimed = true
	defer j.res.done() // a large body's share of the memory budget, once written
	c.stats.claimed.Add(1)
	c.stats.late.Add(int64(max(time.Since(time.UnixMilli(j.due)), 0)))
	fetched := ctx.Err() == nil && c.process(ctx, fetchCtx, f, j)
	c.freeHost(fetchCtx, j)
	if !fetched {
		if err := c.release(fetchCtx, j); err != nil {
			c.log.Info("lease not released; it expires", "url", j.url, "err", err)
		}
		return
	}
	n, err := c.enqueue(fetchCtx, c.parseLinks(j))
	c.stats.discovered.Add(int64(n))
	if err != nil {
		c.stats.errors.Add(1)
		c.log.Info("links not added; page stays due", "url", j.url, "err", err)
		c.release(fetchCtx, j)
		return
	}
	out, err := c.load(fetchCtx, j)
	if err != nil {
		c.stats.errors.Add(1)
		c.log.Info("page not loaded", "url", j.url, "err", err)
		if !errors.Is(err, errLeaseLost) {
			c.release(fetchCtx, j)
		}
		return
	}
	c.stats.fetched.Add(1)
	c.stats.bytes.Add(int64(len(j.res.body)))
	if out.addedTarget {
		c.stats.discovered.Add(1)
	}
	if out.notModified {
		c.stats.notModified.Add(1)
	}
	if out.failed || j.res.err != nil {
		c.stats.errors.Add(1)
		c.log.Info("fetch failed", "url", j.url, "status", j.res.status, "err", j.res.err)
	} else {
		c.log.Debug("fetched", "url", j.url, "status", j.res.status, "bytes", len(j.res.body), "links", n, "changed", out.changed)
	}
}

// behindPoll is how often a crawler held by Options.Behind asks again.
const behindPoll = 20 * time.Millisecond

// dispatch scans the frontier's due rows in time order and hands claimed
// pages to idle workers, as host politeness allows. It keeps a cursor into
// the due index and the unprocessed rest of the last batch it read, so one
// pass over the index spans many wake-ups; it waits for a worker to
// finish, a host to become ready, the next due time, or a poll. While
// Options.Behind says the chain is behind, it hands out nothing.
func (c *Crawler) dispatch(ctx context.Context, jobs chan<- *job, done <-chan *job) error {
	inflight := make(map[string]*job, c.opt.Workers)
	var dispatched int // claimed pages, for MaxPages
	finish := func(j *job) {
		delete(inflight, j.row)
		c.stats.inflight.Add(-1)
		if j.claimed {
			c.hosts.finish(j.host)
		} else {
			dispatched-- // the slot was undone by the worker
		}
	}
	var (
		cursor   = webtable.DuePrefix
		pending  []candidate // read from the index, not yet looked at
		last     bool        // pending ends the pass (the batch reached now)
		next     int64       // the first due time after the pass, if last
		passDue  = 0         // in-scope due rows seen in this pass
		passIdle = true      // nothing was in flight when the pass started
		timer    = time.NewTimer(time.Hour)
		limit    = max(64, 2*c.opt.Workers)
		resumer  = frontierPass{once: c.opt.Once}
		held     = newHeldRows(c.heldMax)
		inPass   bool // the current pass has read the index
	)
	defer timer.Stop()
	full := func() bool { return c.opt.MaxPages > 0 && dispatched >= c.opt.MaxPages }
	for {
		for drained := false; !drained; {
			select {
			case j := <-done:
				finish(j)
			default:
				drained = true
			}
		}
		if ctx.Err() != nil || full() {
			if len(inflight) == 0 {
				return ctx.Err()
			}
			finish(<-done)
			continue
		}

		wake := time.Now().Add(time.Second) // poll: other crawlers' leases expire, others write
		free := c.opt.Workers - len(inflight)
		if free > 0 && c.opt.Behind != nil && c.opt.Behind() {
			free, wake = 0, time.Now().Add(behindPoll)
		}
		if free > 0 {
			now := time.Now()
			progress := false
			send := func(cd candidate, u string, h *host, undo func()) {
				j := &job{url: u, row: cd.row, dueKey: cd.key, due: cd.due, host: h, undo: undo}
				inflight[j.row] = j
				c.stats.inflight.Add(1)
				free--
				dispatched++
				progress = true
				jobs <- j // a worker is idle: this does not block for long
			}
			// try dispatches a row of host h if it has a slot free now.
			try := func(cd candidate, u string, h *host) bool {
				ok, retry, undo := c.hosts.acquire(h, now)
				if !ok {
					if !retry.IsZero() && retry.Before(wake) {
						wake = retry
					}
					return false
				}
				send(cd, u, h, undo)
				return true
			}
			// The held rows first: they were due before what the index has next.
			held.each(func(key string, r heldRow) (took, more bool) {
				if free <= 0 || full() || ctx.Err() != nil {
					return false, false
				}
				return try(r.cd, r.url, c.hosts.get(key, originOf(r.url))), true
			})
			waiting := false
			if len(pending) == 0 && free > 0 && !inPass {
				if d := resumer.wait(now, held.len(), c.heldMax); d > 0 {
					waiting = true
					if now.Add(d).Before(wake) {
						wake = now.Add(d)
					}
				}
			}
			if len(pending) == 0 && free > 0 && !waiting {
				inPass = true
				began := time.Now()
				batch, after, more, err := c.scanDue(ctx, cursor, now.UnixMilli(), limit)
				if err != nil {
					if ctx.Err() != nil {
						continue
					}
					return fmt.Errorf("scan frontier: %w", err)
				}
				resumer.readFor(time.Since(began))
				resumer.scanned(now)
				pending, last, next = batch, !more, after
				if len(batch) > 0 {
					cursor = batch[len(batch)-1].pos + "\x00"
				}
			}
			for len(pending) > 0 && free > 0 && !full() && ctx.Err() == nil {
				cd := pending[0]
				pending = pending[1:]
				u, err := webtable.URL(cd.row)
				if err != nil || !c.scope.contains(u) {
					continue // out of scope (the seeds changed): left alone
				}
				passDue++
				if inflight[cd.row] != nil || held.has(cd.row) {
					continue
				}
				key := webtable.HostOfRow(cd.row)
				if !held.busy(key) && try(cd, u, c.hosts.get(key, originOf(u))) {
					resumer.sentRow()
					continue
				}
				if !held.add(key, heldRow{cd: cd, url: u}) {
					resumer.skipped(cd.pos) // held is full: the next pass reads it again
				}
			}
			if len(pending) == 0 && last {
				whole := resumer.whole()
				idle := passDue == 0 && len(inflight) == 0 && held.len() == 0
				if whole && passIdle && idle {
					if c.opt.Once {
						return nil
					}
					c.caughtUp()
				}
				if whole {
					c.stats.queue.Store(int64(passDue))
				} else {
					c.stats.queue.Store(int64(held.len() + len(inflight)))
				}
				confirm := (c.opt.Once || c.catchingUp()) && idle && (!passIdle || !whole)
				cursor = resumer.next(now, idle)
				last, passDue, passIdle, inPass = false, 0, len(inflight) == 0, false
				if next > 0 && time.UnixMilli(next).Before(wake) {
					wake = time.UnixMilli(next)
				}
				if confirm || progress {
					continue // all quiet now: one more pass decides; or more may be due
				}
			} else if progress || (free > 0 && !full() && !waiting) {
				continue
			}
		}
		timer.Reset(max(time.Until(wake), time.Millisecond))
		select {
		case <-ctx.Done():
		case j := <-done:
			finish(j)
		case <-timer.C:
		}
		timer.Stop()
	}
}

// caughtUp calls Options.CaughtUp, once.
func (c *Crawler) caughtUp() {
	if c.opt.CaughtUp != nil && c.caught.CompareAndSwap(false, true) {
		c.opt.CaughtUp()
	}
}

// catchingUp reports whether Options.CaughtUp waits for its call: an idle
// pass is then confirmed by a whole one at once, as with Once.
func (c *Crawler) catchingUp() bool { return c.opt.CaughtUp != nil && !c.caught.Load() }

// originOf returns scheme://host[:port] of a normalized URL.
func originOf(u string) string {
	i := strings.Index(u, "://")
	if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
		return u[:i+3+j]
	}
	return u
}

// checkRemembered refuses to recrawl, without Options.AllowPrivate, a table
// whose remembered seeds (not given again in Options.Seeds) are private
// addresses: they were crawled with AllowPrivate, and every page would now
// be refused and leave the index. Seeds given again are the caller's
// choice.
func (c *Crawler) checkRemembered(seeds []string) error {
	if c.opt.AllowPrivate {
		return nil
	}
	given := make(map[string]bool, len(c.opt.Seeds))
	for _, s := range c.opt.Seeds {
		if u, err := webtable.Normalize(s); err == nil {
			given[u] = true
		}
	}
	var private []string
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || given[s] {
			continue
		}
		if checkHost(u.Hostname()) != nil {
			private = append(private, s)
		}
	}
	if len(private) > 0 {
		return fmt.Errorf("%w: %v", ErrPrivateSeeds, private)
	}
	return nil
}
