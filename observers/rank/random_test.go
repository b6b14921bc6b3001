package rank_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/webtable"
)

// randomWeb returns n pages over a few hosts with about deg links each,
// some to uncrawled URLs, some pages gone or redirecting.
func randomWeb(rng *rand.Rand, n, deg int) web {
	m := web{}
	for i := range n {
		m[pageURL(i)] = randomPage(rng, n, deg)
	}
	return m
}

// pageURL names page i: on one of 7 hosts, at the top of the site or in
// one of two directories (so in one of three blocks of its host).
func pageURL(i int) string {
	return fmt.Sprintf("http://h%d.test/%sp%d", i%7, [...]string{"", "a/", "b/c/"}[i/7%3], i)
}

func randomPage(rng *rand.Rand, n, deg int) page {
	switch rng.IntN(20) {
	case 0:
		return gone()
	case 1:
		return redirect(pageURL(rng.IntN(n)))
	}
	return ok(randomLinks(rng, n, rng.IntN(2*deg+1))...)
}

func randomLinks(rng *rand.Rand, n, k int) []string {
	links := make([]string, 0, k)
	for range k {
		if rng.IntN(10) == 0 {
			links = append(links, fmt.Sprintf("http://uncrawled.test/%d", rng.IntN(1000)))
			continue
		}
		links = append(links, pageURL(rng.IntN(n)))
	}
	return links
}

// edit changes k random pages: links added or removed, pages going gone,
// coming back, turning into redirects.
func edit(rng *rand.Rand, m web, n, k int) web {
	changes := web{}
	for range k {
		url := pageURL(rng.IntN(n))
		p := m[url]
		p.links = append([]string(nil), p.links...)
		switch op := rng.IntN(6); {
		case p.state != webtable.StateOK:
			p = ok(randomLinks(rng, n, rng.IntN(17))...) // back
		case op == 0:
			p = gone()
		case op == 1:
			p = redirect(pageURL(rng.IntN(n)))
		case op == 2 && len(p.links) > 0:
			i := rng.IntN(len(p.links))
			p.links = append(p.links[:i], p.links[i+1:]...)
		default:
			p.links = append(p.links, randomLinks(rng, n, 1+rng.IntN(3))...)
		}
		changes[url] = p
	}
	return changes
}

// A random graph built from scratch, then edited in rounds: after each
// round the incremental values agree with the batch within 1%.
func TestRandomGraphEdits(t *testing.T) { testRandomGraphEdits(t) }

// The same with every other block's pages read in one scan (prefetch),
// which the random web's small blocks never reach otherwise.
func TestRandomGraphEditsScanned(t *testing.T) {
	t.Cleanup(rank.SetScanFrom(1)) // after the worker stops
	testRandomGraphEdits(t)
}

func testRandomGraphEdits(t *testing.T) {
	n, deg, rounds := 300, 8, 6
	if raceEnabled || testing.Short() {
		n, rounds = 40, 3
	}
	rng := rand.New(rand.NewPCG(1, 2))
	db := openDB(t)
	w := startWorker(t, db)
	m := web{}

	check := func(what string, began time.Time, before int64) {
		t.Helper()
		waitIdle(t, w)
		took := time.Since(began)
		inc, b := values(t, db), batch(t, db)
		if d := rank.Compare(inc, b, 0.01); len(d) > 0 {
			if len(d) > 10 {
				d = d[:10]
			}
			t.Fatalf("%s: incremental and batch disagree: %v", what, d)
		}
		e, _ := maxRelErr(inc, b)
		t.Logf("%s: %d nodes, %d runs in %v, max relative error %.2g", what, len(b), stats(w).Commits-before, took.Round(time.Millisecond), e)
	}

	began := time.Now()
	m.write(t, db, randomWeb(rng, n, deg))
	check("from scratch", began, 0)
	for round := range rounds {
		before, began := stats(w).Commits, time.Now()
		k := 1 + round*n/50
		m.write(t, db, edit(rng, m, n, k))
		check(fmt.Sprintf("round %d (%d edits)", round, k), began, before)
	}
	s := stats(w)
	t.Logf("conflicts %d of %d runs", s.Conflicts, s.Runs)
}

// Blocks whose runs may write only a few page rows each finish over several
// runs and still agree with the batch.
func TestFewWritesPerRun(t *testing.T) {
	t.Cleanup(rank.SetMaxWrites(7)) // after the worker stops
	db := openDB(t)
	w := startWorker(t, db)
	web{}.write(t, db, randomWeb(rand.New(rand.NewPCG(7, 8)), 150, 6))
	waitIdle(t, w)
	if d := rank.Compare(values(t, db), batch(t, db), 0.01); len(d) > 0 {
		t.Fatalf("incremental and batch disagree: %v", d)
	}
}
