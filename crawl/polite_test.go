package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// sharedTables opens n DBs on one Badger store with its ExclusiveStore
// hidden (percolatortest.Shared), as n processes open one Bigtable table.
// Cleanup checks the frontier through the first, then closes them all and
// the store.
func sharedTables(t *testing.T, n int) []*percolator.DB {
	t.Helper()
	dir := t.TempDir()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	shared := percolatortest.Shared(st)
	dbs := make([]*percolator.DB, n)
	for i := range dbs {
		db, err := percolator.Open(context.Background(), shared, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
		if err != nil {
			t.Fatal(err)
		}
		dbs[i] = db
	}
	tb := &table{t: t, dir: dir, st: st, db: dbs[0]}
	t.Cleanup(tb.close) // runs last: the others are closed by then
	t.Cleanup(func() {
		for _, db := range dbs[1:] {
			if err := db.Close(); err != nil {
				t.Errorf("close db: %v", err)
			}
		}
	})
	return dbs
}

// politeSite is a one-host site of a home page linking to n leaves that
// records when each request arrives and how many were in flight at most.
type politeSite struct {
	*site
	mu       sync.Mutex // guards starts, inflight and peak
	starts   []time.Time
	inflight int
	peak     int
}

func newPoliteSite(t *testing.T, n int, latency time.Duration, robots string) *politeSite {
	ps := &politeSite{site: newSite(t)}
	var links strings.Builder
	for i := range n {
		fmt.Fprintf(&links, `<a href="/p%d">%d</a> `, i, i)
	}
	pages := map[string]string{"/": links.String()}
	for i := range n {
		pages[fmt.Sprintf("/p%d", i)] = `<a href="/">home</a>`
	}
	ps.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.inflight++
		ps.peak = max(ps.peak, ps.inflight)
		if r.URL.Path != "/robots.txt" {
			ps.starts = append(ps.starts, time.Now())
		}
		ps.mu.Unlock()
		defer func() {
			ps.mu.Lock()
			ps.inflight--
			ps.mu.Unlock()
		}()
		time.Sleep(latency)
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robots)
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	})
	return ps
}

// crawlTogether runs one crawler with opt on each DB at once, to the end
// of the first crawl, and returns their stats.
func crawlTogether(t *testing.T, dbs []*percolator.DB, opt Options) []Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stats := make([]Stats, len(dbs))
	var wg sync.WaitGroup
	for i, db := range dbs {
		c, err := New(db, opt)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := c.Run(ctx); err != nil {
				t.Errorf("crawler %d: %v", i, err)
			}
			stats[i] = c.Stats()
		})
	}
	wg.Wait()
	return stats
}

// Politeness holds across processes: three crawlers, each on its own DB
// over one shared table, hit one host no faster than one crawler would
// (issue #17), and still fetch every page once between them.
func TestPolitenessAcrossCrawlers(t *testing.T) {
	const (
		pages    = 10
		crawlers = 3
		slack    = 20 * time.Millisecond // request arrival jitter
	)
	for _, tc := range []struct {
		name     string
		delay    time.Duration // Options.Delay
		gap      time.Duration // the least gap between request starts
		parallel int
		latency  time.Duration // of every response
		robots   string
	}{
		{name: "delay", delay: 100 * time.Millisecond, gap: 100 * time.Millisecond, parallel: 1},
		{name: "crawl-delay", delay: -1, gap: 100 * time.Millisecond, parallel: 4,
			robots: "User-agent: *\nCrawl-delay: 0.1\n"},
		{name: "parallel", delay: 10 * time.Millisecond, gap: 10 * time.Millisecond, parallel: 2,
			latency: 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPoliteSite(t, pages, tc.latency, tc.robots)
			dbs := sharedTables(t, crawlers)
			opt := testOptions(s.URL + "/")
			opt.Delay, opt.Parallel, opt.Workers = tc.delay, tc.parallel, 4
			opt.NoSitemaps = true
			stats := crawlTogether(t, dbs, opt)

			var fetched int64
			for _, st := range stats {
				fetched += st.Fetched
			}
			t.Logf("fetched %d pages: %+v", fetched, stats)
			if fetched != pages+1 {
				t.Errorf("fetched %d pages between them, want %d", fetched, pages+1)
			}
			for _, p := range append([]string{"/"}, func() (ps []string) {
				for i := range pages {
					ps = append(ps, fmt.Sprintf("/p%d", i))
				}
				return
			}()...) {
				if n := s.count(p); n != 1 {
					t.Errorf("%s fetched %d times, want 1", p, n)
				}
			}
			s.mu.Lock()
			starts, peak := slices.Clone(s.starts), s.peak
			s.mu.Unlock()
			slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
			var least time.Duration = -1
			for i := 1; i < len(starts); i++ {
				if gap := starts[i].Sub(starts[i-1]); least < 0 || gap < least {
					least = gap
				}
			}
			t.Logf("%d page requests, least gap %v, at most %d requests in flight", len(starts), least, peak)
			if least < tc.gap-slack {
				t.Errorf("two requests came %v apart; %d crawlers together must keep %v", least, crawlers, tc.gap)
			}
			if peak > tc.parallel && tc.robots == "" {
				t.Errorf("%d requests in flight at once; Parallel is %d", peak, tc.parallel)
			}
			if peak > 1 && tc.robots != "" {
				t.Errorf("%d requests in flight at once; a Crawl-delay allows 1", peak)
			}
		})
	}
}

// The host slots in the table, step by step on a clock of our own: a
// slot is taken once, next and the slots hold the host off until their
// times, a crashed crawler's slot expires, and a freed or unused slot
// lets the next crawler in.
func TestSharedHostSlots(t *testing.T) {
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	testSharedHostSlots(t, percolatortest.Shared(st))
}

// The same on the Bigtable store, on the official emulator: its
// predicates test the cells' timestamps as Badger's do.
func TestSharedHostSlotsBigtable(t *testing.T) {
	emulator.Ensure(t)
	st, err := bigtable.Open(t.Context(), bigtable.Config{Project: "caffeine", Instance: "test", Table: "polite"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	testSharedHostSlots(t, st)
}

func testSharedHostSlots(t *testing.T, st percolator.Store) {
	ctx := context.Background()
	if err := st.EnsureFamilies(ctx, politeFamilies); err != nil {
		t.Fatal(err)
	}
	const ttl = 10 * time.Second
	crawler := func(id string) *sharedHosts {
		return &sharedHosts{st: st, owner: []byte(id), ttl: ttl}
	}
	a, b, c := crawler("a"), crawler("b"), crawler("c")
	t0 := time.UnixMilli(1_800_000_000_000)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	const row = "\x00crawl/host/test"

	// reserve asserts whether sh gets a slot at now, and when to retry.
	reserve := func(sh *sharedHosts, now time.Time, delay time.Duration, par, hint int, want bool, retry time.Time) *hostSlot {
		t.Helper()
		s, got, err := sh.reserve(ctx, row, now, delay, par, hint)
		if err != nil {
			t.Fatal(err)
		}
		if (s != nil) != want {
			t.Fatalf("%s at +%v: slot %v, want %v", sh.owner, now.Sub(t0), s != nil, want)
		}
		if !want && !got.Equal(retry) {
			t.Fatalf("%s at +%v: retry at +%v, want +%v", sh.owner, now.Sub(t0), got.Sub(t0), retry.Sub(t0))
		}
		return s
	}

	// One slot, 100 ms: b waits for next, then for a's request to end.
	sa := reserve(a, at(0), 100*ms, 1, 0, true, time.Time{})
	reserve(b, at(50*ms), 100*ms, 1, 0, false, at(101*ms))
	reserve(b, at(101*ms), 100*ms, 1, 0, false, at(201*ms)) // a still fetching: poll
	// a's request went out at +30 ms (its claim took that long): the
	// gap counts from there.
	if err := a.done(ctx, sa, at(130*ms)); err != nil {
		t.Fatal(err)
	}
	reserve(b, at(120*ms), 100*ms, 1, 0, false, at(131*ms))
	sb := reserve(b, at(131*ms), 100*ms, 1, 0, true, time.Time{})

	// b crashes holding the slot: it expires after ttl.
	reserve(c, at(5*time.Second), 100*ms, 1, 0, false, at(5*time.Second+100*ms))
	reserve(c, at(ttl+131*ms-ms), 100*ms, 1, 0, false, at(ttl+131*ms))
	sc := reserve(c, at(ttl+131*ms), 100*ms, 1, 0, true, time.Time{})
	if err := b.done(ctx, sb, at(140*ms)); err != nil { // too late: c's next stands
		t.Fatal(err)
	}
	reserve(a, at(ttl+200*ms), 100*ms, 1, 0, false, at(ttl+232*ms))

	// A slot that sent nothing is given back whole.
	if err := c.unused(ctx, sc); err != nil {
		t.Fatal(err)
	}
	sa = reserve(a, at(ttl+200*ms), 100*ms, 1, 0, true, time.Time{})
	if err := a.done(ctx, sa, time.Time{}); err != nil {
		t.Fatal(err)
	}

	// Two slots, 10 ms: b finds the free one; c waits for one to end.
	t1 := at(time.Minute)
	after := func(d time.Duration) time.Time { return t1.Add(d) }
	s0 := reserve(a, after(0), 10*ms, 2, 0, true, time.Time{})
	s1 := reserve(b, after(20*ms), 10*ms, 2, 0, true, time.Time{})
	if s0.run == s1.run {
		t.Fatalf("a and b both hold %s", s0.run)
	}
	reserve(c, after(40*ms), 10*ms, 2, 1, false, after(140*ms))
	if err := a.done(ctx, s0, after(45*ms)); err != nil {
		t.Fatal(err)
	}
	reserve(c, after(44*ms), 10*ms, 2, 0, false, after(46*ms))
	if s := reserve(c, after(46*ms), 10*ms, 2, 1, true, time.Time{}); s.run != s0.run {
		t.Errorf("c took %s, want %s (freed by a)", s.run, s0.run)
	}
}

// On the embedded store (one process) politeness stays in memory: the
// crawler never creates the politeness family, let alone writes to it.
func TestPolitenessExclusiveStore(t *testing.T) {
	s := newPoliteSite(t, 3, 0, "")
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.Delay = 20 * time.Millisecond
	if c := tb.crawl(opt); c.shared != nil || c.Stats().Fetched != 4 {
		t.Fatalf("shared politeness %v, fetched %d pages", c.shared != nil, c.Stats().Fetched)
	}
	err := tb.st.ReadRows(context.Background(), "", "", func(string, []percolator.Cell) bool { return true },
		percolator.Filter{Family: politeFamily})
	if !errors.Is(err, badger.ErrUnknownFamily) {
		t.Errorf("reading family %q: %v, want %v", politeFamily, err, badger.ErrUnknownFamily)
	}
}
