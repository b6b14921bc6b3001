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
