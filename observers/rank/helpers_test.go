package rank_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

var bg = context.Background()

// openDB opens a DB on a real Badger store in a temporary directory; at
// cleanup percolatortest checks that no transaction or lock is left and
// closes both.
func openDB(t testing.TB) *percolator.DB {
	t.Helper()
	db, _ := percolatortest.Open(t, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	return db
}

// startWorker runs the rank observers alone over db until cleanup, after
// checking that nothing was parked.
func startWorker(t testing.TB, db *percolator.DB) *percolator.Worker {
	t.Helper()
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{}, rank.Observers(rank.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	t.Cleanup(func() {
		w.Close()
		if s := stats(w); s.Failures > 0 || s.Parked > 0 {
			t.Errorf("rank observer: %d failures, %d parked", s.Failures, s.Parked)
		}
	})
	return w
}

// idleTimeout bounds waitIdle (the big section's test on the emulator
// takes longer).
var idleTimeout = 10 * time.Minute

// waitIdle waits for the worker to finish. WaitIdle scans the lock and
// notify families every 20ms, which with a long history takes a good share
// of the CPU from the runs it waits for; so first wait, cheaply, for a
// pause in the commits.
func waitIdle(t testing.TB, w *percolator.Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, idleTimeout)
	defer cancel()
	for last := int64(-1); stats(w).Commits != last; {
		last = stats(w).Commits
		time.Sleep(100 * time.Millisecond)
	}
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatalf("wait idle: %v", err)
	}
}

// stats returns the counters of the rank observers, rank and rank-outside,
// summed.
func stats(w *percolator.Worker) percolator.ObserverStats {
	sum := percolator.ObserverStats{Name: "rank"}
	for _, s := range w.Stats() {
		if s.Name == "rank" || s.Name == "rank-outside" {
			sum.Add(s)
		}
	}
	return sum
}

// page is what the parse observer records about a URL, as far as rank
// cares. The zero page is an uncrawled URL.
type page struct {
	state string   // webtable.State*, "" when never crawled
	links []string // URLs, when ok
	alias string   // redirect target URL, when redirect
}

func ok(links ...string) page { return page{state: webtable.StateOK, links: links} }
func redirect(to string) page { return page{state: webtable.StateRedirect, alias: to} }
func gone() page              { return page{state: webtable.StateGone} }
func u(name string) string    { return "http://" + name + ".test/" }
func row(t testing.TB, url string) string {
	t.Helper()
	r, err := webtable.Row(url)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// web is a test model of the table: pages by URL.
type web map[string]page

// write stores pages as parse would, in transactions of at most 100 rows,
// and touches the rank of every page whose node or edges may have changed:
// the written pages and every page whose out-set changed (what parse and
// links do between them).
func (m web) write(t testing.TB, db *percolator.DB, changes web) {
	t.Helper()
	before := m.edges(t)
	maps.Copy(m, changes)
	after := m.edges(t)
	touch := make(map[string]bool)
	for url := range changes {
		touch[row(t, url)] = true
	}
	for r, out := range after {
		if !slices.Equal(out, before[r]) {
			touch[r] = true
		}
	}
	for r := range before {
		if _, ok := after[r]; !ok {
			touch[r] = true
		}
	}
	// The pages first, then the touches: a touch committed before the
	// page it stands for would let the block run without it, and nothing
	// would touch it again (as the links observer touches a page's block in
	// the transaction that writes the page).
	urls := slices.Sorted(maps.Keys(changes))
	rows := slices.Sorted(maps.Keys(touch))
	for len(urls) > 0 || len(rows) > 0 {
		n := min(len(urls), 100)
		batch := urls[:n]
		urls = urls[n:]
		var tbatch []string
		if n == 0 {
			k := min(len(rows), 100)
			tbatch, rows = rows[:k], rows[k:]
		}
		err := db.Update(bg, func(tx *percolator.Tx) error {
			for _, url := range batch {
				if err := m.set(t, tx, url); err != nil {
					return err
				}
			}
			for _, r := range tbatch {
				if err := rank.Touch(tx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (m web) set(t testing.TB, tx *percolator.Tx, url string) error {
	p, r := m[url], row(t, url)
	if p.state == "" {
		return tx.Delete(r, webtable.State)
	}
	if err := tx.Set(r, webtable.State, []byte(p.state)); err != nil {
		return err
	}
	if p.state == webtable.StateOK {
		ls := make([]map[string]string, 0, len(p.links))
		for _, l := range p.links {
			ls = append(ls, map[string]string{"url": l, "anchor": "to " + l})
			// As the links observer publishes the link (never withdrawn
			// here: a stale cell costs a run, not a value), by which the
			// block of a page whose standing changes tells its linkers
			// (runTouches). Without it a linker's block that ran before
			// the linked page's cell was written was not told, and values
			// depended on the order the runs took.
			if err := tx.Set(row(t, l), webtable.InPrefix+r, []byte("to "+l)); err != nil {
				return err
			}
		}
		b, _ := json.Marshal(ls)
		if err := tx.Set(r, webtable.Links, b); err != nil {
			return err
		}
	} else if err := tx.Delete(r, webtable.Links); err != nil {
		return err
	}
	if p.state == webtable.StateRedirect {
		return tx.Set(r, webtable.AliasOf, []byte(row(t, p.alias)))
	}
	return tx.Delete(r, webtable.AliasOf)
}

// edges is the model's graph by row, computed independently of the
// package: ok pages only, redirects followed up to 5 hops, self-links,
// duplicates and links to non-ok pages dropped.
func (m web) edges(t testing.TB) map[string][]string {
	byRow := make(map[string]page)
	for url, p := range m {
		byRow[row(t, url)] = p
	}
	g := make(map[string][]string)
	for url, p := range m {
		if p.state != webtable.StateOK {
			continue
		}
		src := row(t, url)
		out := []string{}
		for _, l := range p.links {
			dst := row(t, l)
			for hops := 0; hops < 5 && byRow[dst].state == webtable.StateRedirect; hops++ {
				dst = row(t, byRow[dst].alias)
			}
			if byRow[dst].state == webtable.StateOK && dst != src && !slices.Contains(out, dst) {
				out = append(out, dst)
			}
		}
		slices.Sort(out)
		g[src] = out
	}
	return g
}

// pagerank solves the model on graph g by power iteration.
func pagerank(g map[string][]string) map[string]float64 {
	x := make(map[string]float64, len(g))
	for r := range g {
		x[r] = 1
	}
	for range 1000 {
		next := make(map[string]float64, len(g))
		for r := range g {
			next[r] += 0.15
			for _, v := range g[r] {
				next[v] += 0.85 * x[r] / float64(len(g[r]))
			}
		}
		x = next
	}
	return x
}

// maxRelErr is the largest relative difference between a and b over b's
// keys (a missing key counts as 100%).
func maxRelErr(a, b map[string]float64) (float64, string) {
	worst, where := 0.0, ""
	for r, want := range b {
		got, ok := a[r]
		e := 1.0
		if ok {
			e = math.Abs(got-want) / math.Abs(want)
		}
		if e > worst {
			worst, where = e, r
		}
	}
	return worst, where
}

func values(t testing.TB, db *percolator.DB) map[string]float64 {
	t.Helper()
	v, err := rank.Values(bg, db)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func batch(t testing.TB, db *percolator.DB) map[string]float64 {
	t.Helper()
	v, err := rank.Batch(bg, db)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func show(m map[string]float64) string {
	s := ""
	for _, r := range slices.Sorted(maps.Keys(m)) {
		s += fmt.Sprintf("\n  %s %.6f", r, m[r])
	}
	return s
}
