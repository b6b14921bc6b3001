package rank_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers/rank"
)

// 500 pages link to one page and are all touched at once: every push lands
// in the hot row without conflicting, the hot page's runs collapse, and the
// values match the batch.
func TestHotTarget(t *testing.T) {
	const n = 500
	db := openDB(t)
	w := startWorker(t, db)
	hot := "http://hot.test/"
	g := web{hot: ok("http://hot.test/next")} // an uncrawled link: hot is dangling
	for i := range n {
		g[fmt.Sprintf("http://src%d.test/", i)] = ok(hot)
	}
	began := time.Now()
	web{}.write(t, db, g)
	waitIdle(t, w)
	took := time.Since(began)

	inc, b := values(t, db), batch(t, db)
	if d := rank.Compare(inc, b, 0.01); len(d) > 0 {
		t.Fatalf("incremental and batch disagree: %v", d)
	}
	if want := 0.15 + n*0.85*0.15; b[row(t, hot)]-want > 1e-9 || want-b[row(t, hot)] > 1e-9 {
		t.Fatalf("batch hot = %v, want %v", b[row(t, hot)], want)
	}
	s := stats(w)
	t.Logf("%d pages in %v: %d runs committed, %d conflicts, hot = %.4f (batch %.4f)",
		len(g), took.Round(time.Millisecond), s.Commits, s.Conflicts, inc[row(t, hot)], b[row(t, hot)])
	if s.Conflicts > 2*n {
		t.Errorf("%d conflicts for %d pushers", s.Conflicts, n)
	}
}

// TestHubSendsNoTinyMoves: a hub linking 600 pages in 12 blocks gives
// each a flow of about 2e-4, which a new page among its targets moves by
// 1/600 of itself. Those moves are below what is sent (Epsilon of a
// tenth of the least PageRank): the new page's block runs, the other
// eleven do not. Values still agree with the batch.
func TestHubSendsNoTinyMoves(t *testing.T) {
	const blocks, per = 12, 50
	db := openDB(t)
	w := startWorker(t, db)
	hub := "http://hub.test/"
	target := func(b, i int) string { return fmt.Sprintf("http://t.test/d%d/p%d", b, i) }
	var links []string
	m := web{}
	g := web{}
	for b := range blocks {
		for i := range per {
			links = append(links, target(b, i))
			g[target(b, i)] = ok()
		}
	}
	m.write(t, db, g)
	waitIdle(t, w)
	extra := target(0, per) // linked, not crawled yet
	m.write(t, db, web{hub: ok(append(links, extra)...)})
	waitIdle(t, w)
	before := stats(w).Commits
	m.write(t, db, web{extra: ok()}) // the hub's out-degree moves by one
	waitIdle(t, w)
	if runs := stats(w).Commits - before; runs >= blocks {
		t.Errorf("%d block runs for one new page, want a few: the hub's tiny moves reached every block", runs)
	}
	if d := rank.Compare(values(t, db), batch(t, db), 0.01); len(d) > 0 {
		t.Fatalf("incremental and batch disagree: %v", d)
	}
}
