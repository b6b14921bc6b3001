package observers_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestRandomOrder checks that the incremental chain ends where the batch
// recomputation does, with the invariants between its columns kept
// (observers.Verify, as indexer -verify runs it), whatever the order in
// which pages arrive: for each seed, a random small web (2–50 pages over
// a few hosts and sections: links, duplicates, redirects and chains of
// them, 404s, errors, noindex and non-HTML pages, pages changing, revisits
// and re-fetches of the same content) is loaded in a random order by
// loader transactions and WARC imports (crawl.Importer, the crawler's
// loader transaction) running beside 1–8 workers of the chain (or,
// for some seeds, loaded first and drained in the bulk stages); the
// process is killed at random points (every store call failing from
// then on, wherever its transactions are) and started again on the same
// store; then the chain runs to idle.
//
// By default it runs -order.n seeds from -order.first; -order.seed runs
// one. A failure prints its seed. The web, the orders, the loaders, the
// workers and the crash points follow from the seed; the interleaving of
// the goroutines does not, so a seed that failed once may need a few
// runs (-count) to fail again. Seeds run in parallel (-parallel: most of
// a seed's time is spent waiting for the chain to be idle). See
// docs/testing.md.
func TestRandomOrder(t *testing.T) {
	seeds := make([]uint64, 0, *orderN)
	if *orderSeed != 0 {
		seeds = append(seeds, *orderSeed)
	} else {
		for i := range uint64(*orderN) {
			seeds = append(seeds, *orderFirst+i)
		}
	}
	var mu sync.Mutex
	var failed []uint64
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				defer func() {
					if t.Failed() {
						mu.Lock()
						failed = append(failed, seed)
						mu.Unlock()
					}
				}()
				runOrder(t, seed)
			})
		}
	})
	if len(failed) > 0 {
		slices.Sort(failed)
		t.Logf("%d of %d seeds failed: %v", len(failed), len(seeds), failed)
	}
}

var (
	orderN     = flag.Int("order.n", 20, "TestRandomOrder: how many seeds to run")
	orderFirst = flag.Uint64("order.first", 1, "TestRandomOrder: the first seed")
	orderSeed  = flag.Uint64("order.seed", 0, "TestRandomOrder: run this seed only")
	orderDump  = flag.Bool("order.dump", false, "TestRandomOrder: log a failed seed's fetches and the chain's cells")
)

// fetchKind is what a fetch of a page returned.
type fetchKind int

const (
	fetchPage     fetchKind = iota // 200, HTML
	fetchSame                      // 200, the same bytes as the page's last 200
	fetchRedirect                  // 301 or 302 to another page (or itself)
	fetchGone                      // 404 or 410
	fetchError                     // 500 after the retries
	fetchRevisit                   // 304 (a WARC revisit record)
	fetchTimeout                   // no response (loader transactions only)
	fetchNoIndex                   // 200, HTML with a robots noindex
	fetchBinary                    // 200, not HTML
	fetchText                      // 200, text/plain
)

// fetchEvent is one fetch of one page.
type fetchEvent struct {
	url      string
	kind     fetchKind
	status   int
	body     string
	location string // a redirect's Location, absolute or relative
	at       time.Time
}

// orderWeb is a random small web and the fetches of its pages, in the
// order they happened.
type orderWeb struct {
	urls     []string // the pages; some are only linked to, never fetched
	timeline []fetchEvent
}

func newOrderWeb(r *rand.Rand) *orderWeb {
	w := &orderWeb{}
	hosts := []string{"http://a.test", "http://b.test", "https://c.test"}[:1+r.IntN(3)]
	n := 2 + r.IntN(49)
	if r.IntN(3) == 0 {
		n = 2 + r.IntN(8) // small webs find races faster
	}
	sections := 1 + r.IntN(3)
	for i := range n {
		h := hosts[r.IntN(len(hosts))]
		if r.IntN(2) == 0 {
			w.urls = append(w.urls, fmt.Sprintf("%s/p%d", h, i))
		} else {
			w.urls = append(w.urls, fmt.Sprintf("%s/d%d/p%d.html", h, r.IntN(sections), i))
		}
	}
	titles := 1 + r.IntN(max(1, n/3))
	body := func(i int, kind fetchKind) string {
		k := r.IntN(titles)
		var b strings.Builder
		fmt.Fprintf(&b, "<html><head><title>Title %d</title>", k)
		if kind == fetchNoIndex {
			b.WriteString(`<meta name="robots" content="noindex">`)
		}
		fmt.Fprintf(&b, "</head><body><p>text number %d about topic %d</p>", k, k%3)
		for range r.IntN(9) {
			j := r.IntN(n + 3) // some targets are never fetched
			var href string
			switch {
			case j >= n:
				href = fmt.Sprintf("%s/never%d", hosts[r.IntN(len(hosts))], j)
			case r.IntN(4) == 0:
				href = w.relative(i, j)
			default:
				href = w.urls[j]
			}
			if r.IntN(10) == 0 {
				href += "#frag"
			}
			fmt.Fprintf(&b, `<a href="%s">anchor %d</a>`, href, r.IntN(4))
		}
		b.WriteString("</body></html>")
		return b.String()
	}
	var versions [][]fetchEvent
	for i, u := range w.urls {
		var evs []fetchEvent
		var last string // the page's last 200 body
		for v := range 3 {
			if v > 0 && r.IntN(2) == 0 || v == 0 && r.IntN(10) == 0 {
				break // never fetched, or no more fetches
			}
			ev := fetchEvent{url: u}
			switch x := r.IntN(100); {
			case x < 50:
				ev.kind, ev.status, ev.body = fetchPage, 200, body(i, fetchPage)
				if j := r.IntN(n); r.IntN(4) == 0 && len(versions) > j && len(versions[j]) > 0 && versions[j][0].body != "" {
					ev.body = versions[j][0].body // a duplicate of another page
				}
			case x < 58:
				ev.kind, ev.status, ev.body = fetchSame, 200, last
				if last == "" {
					ev.kind, ev.body = fetchPage, body(i, fetchPage)
				}
			case x < 70:
				ev.kind, ev.status = fetchRedirect, 301+r.IntN(2)
				j := r.IntN(n)
				ev.location = w.urls[j]
				if r.IntN(3) == 0 {
					ev.location = w.relative(i, j)
				}
			case x < 78:
				ev.kind, ev.status = fetchGone, 404+6*r.IntN(2)
			case x < 81:
				ev.kind, ev.status = fetchError, 500
			case x < 89:
				ev.kind, ev.status = fetchRevisit, 304
			case x < 93:
				ev.kind = fetchTimeout
			case x < 97:
				ev.kind, ev.status, ev.body = fetchNoIndex, 200, body(i, fetchNoIndex)
			case x < 99:
				ev.kind, ev.status, ev.body = fetchBinary, 200, "\x89PNG\r\n\x1a\n"+strconv.Itoa(r.IntN(3))
			default:
				ev.kind, ev.status, ev.body = fetchText, 200, fmt.Sprintf("Notes %d\n\nThe notes, version %d.\n", i%3, r.IntN(2))
			}
			if ev.status == 200 {
				last = ev.body
			}
			evs = append(evs, ev)
		}
		versions = append(versions, evs)
	}
	// The fetches of different pages interleave at random; a page's own
	// come in order, a second apart at least.
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for {
		var left []int
		for i, evs := range versions {
			if len(evs) > 0 {
				left = append(left, i)
			}
		}
		if len(left) == 0 {
			break
		}
		i := left[r.IntN(len(left))]
		ev := versions[i][0]
		versions[i] = versions[i][1:]
		at = at.Add(time.Second)
		ev.at = at
		w.timeline = append(w.timeline, ev)
	}
	return w
}

// relative is a link from page i to page j as a relative reference.
func (w *orderWeb) relative(i, j int) string {
	from, to := w.urls[i], w.urls[j]
	fh := from[:strings.Index(from[8:], "/")+8]
	th := to[:strings.Index(to[8:], "/")+8]
	if fh != th {
		return "//" + strings.TrimPrefix(strings.TrimPrefix(to, "http://"), "https://")
	}
	return to[len(th):]
}

// orderPlan is how a seed's web is loaded and indexed.
type orderPlan struct {
	arrivals  []fetchEvent // the fetches in the order loaders take them
	loaders   []loaderKind
	workers   int
	delays    []time.Duration // Delay of each background observer of the chain
	crashes   []int           // kill the process once this many fetches were taken (ascending)
	crashWait []time.Duration // and this long after
	bulk      bool            // load the first part before any worker, then drain it in stages
}

type loaderKind int

const (
	loadTx   loaderKind = iota // a loader transaction per fetch
	loadWARC                   // WARC files of a few records, imported
)

func newOrderPlan(r *rand.Rand, w *orderWeb) *orderPlan {
	p := &orderPlan{arrivals: append([]fetchEvent(nil), w.timeline...), workers: 1 + r.IntN(8)}
	switch r.IntN(4) {
	case 0: // in any order: an older fetch arriving after a newer one is skipped by imports
		r.Shuffle(len(p.arrivals), func(i, j int) { p.arrivals[i], p.arrivals[j] = p.arrivals[j], p.arrivals[i] })
	case 1: // mostly in order, neighbours swapped
		for i := 1; i < len(p.arrivals); i++ {
			if r.IntN(3) == 0 {
				p.arrivals[i-1], p.arrivals[i] = p.arrivals[i], p.arrivals[i-1]
			}
		}
	}
	for range 1 + r.IntN(3) {
		p.loaders = append(p.loaders, loaderKind(r.IntN(2)))
	}
	for _, o := range observers.Chain() {
		d := time.Duration(0)
		if o.Delay > 0 {
			d = []time.Duration{0, 0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond}[r.IntN(5)]
		}
		p.delays = append(p.delays, d)
	}
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(3) {
			p.crashes = append(p.crashes, r.IntN(len(p.arrivals)+2))
			p.crashWait = append(p.crashWait, time.Duration(r.IntN(30))*time.Millisecond)
		}
		slices.Sort(p.crashes)
	}
	p.bulk = r.IntN(6) == 0
	return p
}

func (p *orderPlan) String() string {
	kinds := map[loaderKind]string{loadTx: "tx", loadWARC: "warc"}
	var ls []string
	for _, l := range p.loaders {
		ls = append(ls, kinds[l])
	}
	return fmt.Sprintf("%d fetches, loaders %v, %d workers, crashes after %v fetches, bulk %v", len(p.arrivals), ls, p.workers, p.crashes, p.bulk)
}

// quiet is a logger that discards: crashes make the DB log every lock
// it cleans up.
var quiet = slog.New(slog.DiscardHandler)

// dbOptions are the DB's options: a small oracle window, since a process
// started again jumps past the last one's window, and timestamps a second
// ahead of the clock after each crash would hold the background observers'
// delays (counted from the notifications' timestamps) that long.
var dbOptions = percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, Logger: quiet, OracleWindow: 1 << 12}

// orderProc is one process over the seed's store: a DB, the chain's
// worker and the loaders.
type orderProc struct {
	cs *crashStore
	db *percolator.DB
	w  *percolator.Worker
}

func startProc(t *testing.T, st *badger.Store) *orderProc {
	t.Helper()
	cs := &crashStore{st: st}
	db, err := percolator.Open(bg, cs, dbOptions)
	if err != nil {
		t.Fatal(err)
	}
	// A process started after a crash sweeps the dead one's locks (the
	// worker does so every LockTTL), so that what they carry is not left
	// in rows nobody reads.
	if _, err := db.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}
	return &orderProc{cs: cs, db: db}
}

func (pr *orderProc) startWorker(t *testing.T, p *orderPlan, stages bool) {
	t.Helper()
	obs := observers.Chain()
	for i := range obs {
		if obs[i].Delay > 0 {
			obs[i].Delay, obs[i].MaxDelay = p.delays[i], 10*p.delays[i]
		}
	}
	opt := percolator.WorkerOptions{Workers: p.workers, IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond, RetryBase: 5 * time.Millisecond, Logger: quiet}
	if stages {
		opt.Stages = observers.BulkStages(pr.db)
	}
	w, err := percolator.NewWorker(pr.db, opt, obs...)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	pr.w = w
}

// stop ends the process: killed first (its store calls fail from then
// on), or not.
func (pr *orderProc) stop(kill bool) {
	if kill {
		pr.cs.kill()
	}
	if pr.w != nil {
		pr.w.Close()
	}
	pr.db.Close()
}

func runOrder(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x6f72646572))
	w := newOrderWeb(r)
	p := newOrderPlan(r, w)
	defer func() {
		if t.Failed() {
			t.Logf("seed %d: %s; rerun with: go test ./observers -run 'TestRandomOrder' -order.seed %d", seed, p, seed)
		}
	}()
	st, err := badger.Open("", badger.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q := &arrivals{evs: p.arrivals, dir: t.TempDir()}
	crashes, waits := p.crashes, p.crashWait
	for phase := 0; ; phase++ {
		pr := startProc(t, st)
		crashAt := len(p.arrivals) + 1 // no crash
		if len(crashes) > 0 {
			crashAt = crashes[0]
		}
		if phase == 0 && p.bulk {
			// A bulk load: the fetches up to the first crash (or all of
			// them) loaded before the worker starts, which drains them in
			// stages.
			if err := q.load(pr, p.loaders, r.Uint64(), min(crashAt, len(p.arrivals)), nil, nil); err != nil {
				t.Fatal(err)
			}
			pr.startWorker(t, p, true)
		} else {
			pr.startWorker(t, p, false)
		}
		if len(crashes) == 0 {
			if err := q.load(pr, p.loaders, r.Uint64(), len(p.arrivals), nil, nil); err != nil {
				pr.stop(false)
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
			err := pr.w.WaitIdle(ctx)
			cancel()
			if err != nil {
				pr.stop(false)
				t.Fatalf("not idle: %v", err)
			}
			checkOrder(t, pr.db)
			if t.Failed() && *orderDump {
				dumpOrder(t, p, pr.db)
			}
			pr.stop(false)
			return
		}
		// Load on; once crashAt fetches were taken, kill the process a
		// little later, loaders and observers wherever they are.
		wait := waits[0]
		crashes, waits = crashes[1:], waits[1:]
		trigger, killed := make(chan struct{}), make(chan struct{})
		go func() {
			<-trigger
			time.Sleep(wait)
			pr.cs.kill()
			close(killed)
		}()
		var once sync.Once
		fire := func() { once.Do(func() { close(trigger) }) }
		if crashAt <= q.next {
			fire()
		}
		err := q.load(pr, p.loaders, r.Uint64(), len(p.arrivals), func(taken int) {
			if taken >= crashAt {
				fire()
			}
		}, killed)
		fire() // all loaded before the crash point: the observers die
		<-killed
		pr.stop(true)
		if err != nil && !errors.Is(err, errDead) {
			t.Fatalf("load: %v", err)
		}
	}
}

// arrivals are the fetches of a seed in the order loaders take them.
type arrivals struct {
	mu   sync.Mutex // guards next
	evs  []fetchEvent
	next int    // the next fetch to take
	dir  string // for WARC files
	file int    // WARC files written, for their names
}

// take takes the next n fetches (fewer at the end), and reports how many
// were taken so far in all.
func (q *arrivals) take(n, upTo int) ([]fetchEvent, int, string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	end := min(q.next+n, upTo)
	evs := q.evs[q.next:max(end, q.next)]
	q.next = max(end, q.next)
	q.file++
	return evs, q.next, filepath.Join(q.dir, fmt.Sprintf("f%05d.warc", q.file))
}

// load runs the loaders over the fetches up to upTo, each in a goroutine
// of its own, until they are all loaded or stop is closed. taken, if not
// nil, is told how many fetches were taken so far after each take. It
// returns the first error of a loader.
func (q *arrivals) load(pr *orderProc, kinds []loaderKind, seed uint64, upTo int, taken func(int), stop <-chan struct{}) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(kinds))
	for i, kind := range kinds {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		wg.Go(func() {
			var im *crawl.Importer
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := 1
				if kind == loadWARC {
					n = 1 + r.IntN(6)
				}
				evs, sofar, file := q.take(n, upTo)
				if taken != nil {
					taken(sofar)
				}
				if len(evs) == 0 {
					return
				}
				var err error
				switch kind {
				case loadTx:
					err = loadFetch(bg, pr.db, evs[0])
				case loadWARC:
					if im == nil {
						im, err = crawl.NewImporter(bg, pr.db, crawl.Options{Logger: quiet})
					}
					if err == nil {
						err = importFetches(im, file, evs)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// loadFetch writes ev into its page row as the crawler's loader
// transaction does (crawl/loader.go): the fetch columns; the body written
// only when its bytes changed, deleted for every other response but a
// revisit and a fetch without a response, and deleted though absent (a
// tombstone, which notifies the parse observer) when a page without a
// body changed status or redirect target. A fetch older than the page's
// last is skipped, as imports do.
func loadFetch(ctx context.Context, db *percolator.DB, ev fetchEvent) error {
	row, err := webtable.Row(ev.url)
	if err != nil {
		return err
	}
	return db.Update(ctx, func(tx *percolator.Tx) error {
		get := func(col string) []byte {
			v, e := tx.Get(ctx, row, col)
			if err == nil {
				err = e
			}
			return v
		}
		err = nil
		fetched, body, status, redirect := get(webtable.FetchedAt), get(webtable.Body), get(webtable.Status), get(webtable.Redirect)
		if err != nil {
			return err
		}
		if ms, _ := strconv.ParseInt(string(fetched), 10, 64); fetched != nil && ms >= ev.at.UnixMilli() {
			return nil
		}
		if ev.kind == fetchRevisit && status == nil {
			return nil // a revisit of a page never fetched
		}
		tx.Set(row, webtable.URLCol, []byte(ev.url))
		tx.Set(row, webtable.FetchedAt, []byte(strconv.FormatInt(ev.at.UnixMilli(), 10)))
		if ev.kind == fetchRevisit {
			return nil
		}
		var target string
		if ev.kind == fetchRedirect {
			base, _ := url.Parse(ev.url)
			target, _ = webtable.Resolve(base, ev.location)
		}
		changed := string(status) != strconv.Itoa(ev.status) || string(redirect) != target
		tx.Set(row, webtable.Status, []byte(strconv.Itoa(ev.status)))
		if target != "" {
			tx.Set(row, webtable.Redirect, []byte(target))
		} else if redirect != nil {
			tx.Delete(row, webtable.Redirect)
		}
		switch {
		case ev.status == 200:
			ctype := "text/html; charset=utf-8"
			switch ev.kind {
			case fetchBinary:
				ctype = "image/png"
			case fetchText:
				ctype = "text/plain; charset=utf-8"
			}
			tx.Set(row, webtable.Type, []byte(ctype))
			if string(body) != ev.body || body == nil {
				return tx.Set(row, webtable.Body, []byte(ev.body))
			}
		case ev.kind == fetchTimeout:
			// No response: a body is kept as it was, with its type.
			if body == nil && changed {
				return tx.Delete(row, webtable.Body)
			}
		default:
			tx.Delete(row, webtable.Type)
			if body != nil || changed {
				return tx.Delete(row, webtable.Body)
			}
		}
		return nil
	})
}

// importMu serializes imports: gowarc (v1.6.0) sets a global of
// google/uuid (EnableRandPool) whenever it opens a reader, a data race
// between two imports at once.
var importMu sync.Mutex

// importFetches writes evs as the records of a WARC file and imports it.
func importFetches(im *crawl.Importer, file string, evs []fetchEvent) error {
	var b strings.Builder
	for i, ev := range evs {
		date := ev.at.Format(time.RFC3339)
		id := fmt.Sprintf("<urn:uuid:%s-%d>", filepath.Base(file), i)
		var typ, block string
		var extra []string
		switch {
		case ev.kind == fetchTimeout:
			continue // a WARC holds responses only
		case ev.kind == fetchRevisit:
			typ, block = "revisit", "HTTP/1.1 304 Not Modified\r\n\r\n"
			extra = []string{"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/server-not-modified"}
		case ev.kind == fetchRedirect:
			typ, block = "response", fmt.Sprintf("HTTP/1.1 %d Moved\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", ev.status, ev.location)
		case ev.status == 200:
			ctype := "text/html; charset=utf-8"
			switch ev.kind {
			case fetchBinary:
				ctype = "image/png"
			case fetchText:
				ctype = "text/plain; charset=utf-8"
			}
			typ, block = "response", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", ctype, len(ev.body), ev.body)
		default:
			typ, block = "response", fmt.Sprintf("HTTP/1.1 %d Error\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\nnot found", ev.status)
		}
		fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Target-URI: %s\r\nWARC-Date: %s\r\nWARC-Record-ID: %s\r\n", typ, ev.url, date, id)
		for i := 0; i+1 < len(extra); i += 2 {
			fmt.Fprintf(&b, "%s: %s\r\n", extra[i], extra[i+1])
		}
		fmt.Fprintf(&b, "Content-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", len(block), block)
	}
	if b.Len() == 0 {
		return nil
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return err
	}
	importMu.Lock()
	err := im.ImportFile(bg, file)
	importMu.Unlock()
	if err != nil {
		return err
	}
	if st := im.Stats(); st.Malformed > 0 {
		return fmt.Errorf("import %s: %d malformed records", file, st.Malformed)
	}
	return nil
}

// checkOrder checks the idle table: Verify (what indexer -verify
// prints), the table's invariants, no failure parked and no lock left.
func checkOrder(t *testing.T, db *percolator.DB) {
	t.Helper()
	diffs, _, err := observers.Verify(bg, db, 0.01, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error("verify:", d)
	}
	failed, err := db.Failed(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range failed {
		t.Errorf("parked failure: %+v", f)
	}
	locks, err := db.Locks(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) > 0 {
		t.Errorf("%d locks left, first %+v", len(locks), locks[0])
	}
}

// dumpOrder logs the fetches of a seed in the order they arrived and the
// newest write of the cells the chain derives from them.
func dumpOrder(t *testing.T, p *orderPlan, db *percolator.DB) {
	t.Helper()
	for _, ev := range p.arrivals {
		t.Logf("fetch %s %s: %d %s %q", ev.at.Format(time.TimeOnly), ev.url, ev.status, ev.location, ev.body)
	}
	var b strings.Builder
	if err := db.Dump(bg, &b, "", ""); err != nil {
		t.Error(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		f := strings.Split(l, "\t")
		if len(f) < 4 || !strings.HasPrefix(f[2], "write@") || strings.HasPrefix(f[1], "fetch:") || strings.HasPrefix(f[1], "crawl:") {
			continue
		}
		t.Log(l)
	}
}
