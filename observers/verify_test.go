package observers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// randomWeb is a fixture web with many duplicates, redirects (some
// chained), 404s, links to pages that do not exist, and edits between
// rounds: content changes, link changes, pages vanishing and returning.
type randomWeb struct {
	r     *rand.Rand
	n     int
	texts []string
}

const host = "http://web.test"

func (w *randomWeb) url(i int) string { return fmt.Sprintf("%s/p%03d", host, i) }

// load writes page i with a random role into the table.
func (w *randomWeb) load(e *env, i int) {
	switch x := w.r.IntN(100); {
	case x < 8: // a redirect, sometimes to another redirect
		e.fetch(w.url(i), 301, "", webtable.Redirect, w.url(w.r.IntN(w.n)))
	case x < 14:
		e.fetch(w.url(i), 404, "")
	default:
		var links []string
		for range w.r.IntN(9) {
			t := w.r.IntN(w.n + 20) // some targets never exist
			links = append(links, fmt.Sprintf("/p%03d", t), fmt.Sprintf("anchor %d", w.r.IntN(5)))
		}
		// Duplicates: few distinct texts and titles, links kept identical
		// for pages that share a text so they cluster.
		k := w.r.IntN(len(w.texts))
		if w.r.IntN(3) == 0 {
			links = nil
		}
		if k < 10 {
			links = []string{"/p001", "shared", "/p002", "shared two"}
		}
		e.fetch(w.url(i), 200, page(fmt.Sprint("Title ", k), w.texts[k], links...))
	}
}

func newRandomWeb(seed uint64, n int) *randomWeb {
	w := &randomWeb{r: rand.New(rand.NewPCG(seed, 1)), n: n}
	for k := range n / 3 {
		w.texts = append(w.texts, fmt.Sprintf("text number %d about topic %d", k, k%7))
	}
	return w
}

func verify(t *testing.T, e *env) {
	t.Helper()
	diffs, b, err := observers.Verify(bg, e.db, 0.01, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if t.Failed() {
		t.FailNow()
	}
	if len(b.Docs) < 10 {
		t.Fatalf("only %d documents: the fixture is too small to prove anything", len(b.Docs))
	}
}

// The incremental chain agrees with the batch recomputation after every
// round of changes.
func TestVerifyAgainstBatch(t *testing.T) { verifyRounds(t) }

// The same with every page's links published two at a time (links-more).
func TestVerifyLinksInParts(t *testing.T) {
	observers.SetMaxLinkChanges(t, 2)
	verifyRounds(t)
}

func verifyRounds(t *testing.T) {
	e := newEnv(t)
	w := newRandomWeb(1, 150)
	for i := range w.n {
		w.load(e, i)
	}
	e.idle()
	verify(t, e)
	for round := range 3 {
		for range 40 {
			w.load(e, w.r.IntN(w.n))
		}
		e.idle()
		verify(t, e)
		t.Logf("round %d verified", round)
	}
}

// Killing the indexer at random points, many times, while pages keep
// changing, loses nothing: after a final run to idle the result agrees with
// the batch recomputation.
func TestIndexerCrashes(t *testing.T) { indexerCrashes(t) }

// The same with every page's links published two at a time: a crash
// between two parts loses none.
func TestIndexerCrashesLinksInParts(t *testing.T) {
	observers.SetMaxLinkChanges(t, 2)
	indexerCrashes(t)
}

func indexerCrashes(t *testing.T) {
	e := newEnv(t)
	e.w.Close() // this test runs its own short-lived workers
	w := newRandomWeb(2, 120)
	for i := range w.n {
		w.load(e, i)
	}
	r := rand.New(rand.NewPCG(3, 3))
	for kill := range 12 {
		wk, err := percolator.NewWorker(e.db, percolator.WorkerOptions{Workers: 8, IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond}, chain()...)
		if err != nil {
			t.Fatal(err)
		}
		wk.Start()
		for range 5 {
			w.load(e, w.r.IntN(w.n))
		}
		time.Sleep(time.Duration(5+r.IntN(60)) * time.Millisecond)
		wk.Close() // cancels observer transactions wherever they are
		_ = kill
	}
	final, err := percolator.NewWorker(e.db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond}, chain()...)
	if err != nil {
		t.Fatal(err)
	}
	final.Start()
	defer final.Close()
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	if err := final.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	verify(t, e)
}
