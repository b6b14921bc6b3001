package observers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// randomWeb is a fixture web with many duplicates and near-copies, redirects (some
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
		text := w.texts[k]
		if k >= 10 && k < 19 {
			// Near-copies: a long text with a counter (exact copies
			// for the fingerprint) and sometimes a word of its own.
			text = fmt.Sprintf("%s Visitor %d. %s", nearArticles[k%3], w.r.IntN(1000), []string{"", "", "Welcome", "Goodbye"}[w.r.IntN(4)])
		}
		e.fetch(w.url(i), 200, page(fmt.Sprint("Title ", k), text, links...))
	}
}

func newRandomWeb(seed uint64, n int) *randomWeb {
	w := &randomWeb{r: rand.New(rand.NewPCG(seed, 1)), n: n}
	for k := range n / 3 {
		w.texts = append(w.texts, fmt.Sprintf("text number %d about topic %d", k, k%7))
	}
	return w
}

func verify(t *testing.T, e *env) *observers.Batch {
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
	return b
}

// folded fails t unless some near-copies were folded.
func folded(t *testing.T, b *observers.Batch) {
	t.Helper()
	n := 0
	for _, d := range b.Docs {
		n += len(d.Similar)
	}
	if n == 0 {
		t.Fatal("no near-copies folded: the fixture proves nothing of them")
	}
}

// The incremental chain agrees with the batch recomputation after every
// round of changes.
func TestVerifyAgainstBatch(t *testing.T) { verifyRounds(t) }

// The same on a table other processes could reach (two-phase commits, and
// reads of many rows or ranges with one store call, as on Bigtable).
func TestVerifyAgainstBatchShared(t *testing.T) {
	t.Setenv(percolatortest.EnvShared, "1")
	verifyRounds(t)
}

// The same with every page's links published two at a time (links-more).
func TestVerifyLinksInParts(t *testing.T) {
	observers.SetMaxLinkChanges(t, 2)
	verifyRounds(t)
}

// The same with a page row keeping two inbound links at most (the rest
// move in and out of spill rows as links come and go) and a document
// three anchors (webtable.Doc.CutAnchors).
func TestVerifyLinksSpilled(t *testing.T) {
	observers.SetMaxInCells(t, 2)
	old := webtable.MaxAnchors
	webtable.MaxAnchors = 3
	t.Cleanup(func() { webtable.MaxAnchors = old })
	e := verifyRounds(t)
	cut := 0
	for _, d := range verify(t, e).Docs {
		if d.MoreAnchors > 0 {
			cut++
		}
	}
	if cut == 0 {
		t.Fatal("no document's anchors cut: the test proves nothing of them")
	}
	t.Logf("%d documents' anchors cut", cut)
	n := 0
	err := e.db.View(bg, func(tx *percolator.Tx) error {
		return tx.Scan(bg, webtable.InSpillPrefix, webtable.InSpillEnd, webtable.InSpill, func(string, string, []byte) bool {
			n++
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no link spilled: the test proves nothing")
	}
	t.Logf("%d links spilled", n)
}

func verifyRounds(t *testing.T) *env {
	e := newEnv(t)
	w := newRandomWeb(1, 150)
	for i := range w.n {
		w.load(e, i)
	}
	e.idle()
	folded(t, verify(t, e))
	for round := range 3 {
		for range 40 {
			w.load(e, w.r.IntN(w.n))
		}
		e.idle()
		verify(t, e)
		t.Logf("round %d verified", round)
	}
	return e
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

// The same with a page row keeping two inbound links at most: a crash
// never leaves a link in both places or in neither.
func TestIndexerCrashesLinksSpilled(t *testing.T) {
	observers.SetMaxInCells(t, 2)
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
	// Shown only if the check below fails: what the worker left.
	failed, err := e.db.Failed(bg)
	if err != nil {
		t.Fatal(err)
	}
	pending, err := e.db.Pending(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("when idle: %d parked failures %v, pending %v", len(failed), failed, pending)
	folded(t, verify(t, e))
}

// Verify finds each invariant of the chain's columns broken: a table
// indexed to idle, then one cell changed behind the chain's back (and put
// back after).
func TestVerifyFindsBrokenInvariants(t *testing.T) {
	const h = "http://broken.test"
	e := newEnv(t)
	e.fetch(h+"/a", 200, page("A", "page a", "/b", "to b", "/c", "to c"))
	e.fetch(h+"/b", 200, page("B", "page b", "/a", "to a"))
	e.fetch(h+"/c", 200, page("C", "page c"))
	e.fetch(h+"/d1", 200, page("D", "same text"))
	e.fetch(h+"/d2", 200, page("D", "same text", "/a", "a"))
	e.fetch(h+"/r", 301, "", webtable.Redirect, h+"/a")
	e.fetch(h+"/n1", 200, page("N", nearArticles[0]+" Visitor 1."))
	e.fetch(h+"/n22", 200, page("N", nearArticles[0]+" Visitor 2."))
	e.idle()
	e.w.Close()
	set := func(row, col string, val []byte) {
		t.Helper()
		err := e.db.Update(bg, func(tx *percolator.Tx) error {
			if val == nil {
				return tx.Delete(row, col)
			}
			return tx.Set(row, col, val)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, want string
		row, col   string // the cell to change; row as a URL unless it starts with '!'
		val        string // "" deletes
	}{
		{"none", "", "", "", ""},
		{"in cell lost", "in: cell", h + "/b", webtable.InPrefix + "test.broken:http/a", ""},
		{"in cell stray", "in: cell of", h + "/c", webtable.InPrefix + "test.broken:http/b", "x"},
		{"spilled unmarked", "not marked", webtable.InSpillRow("test.broken:http/a", "test.broken:http/b"), webtable.InSpill, "to a"},
		{"in cell twice", "both in the row", webtable.InSpillRow("test.broken:http/a", "test.broken:http/b"), webtable.InSpill, "to a"},
		{"alias lost", "no redirect row", webtable.AliasRow("test.broken:http/a", "test.broken:http/r"), webtable.AliasFrom, ""},
		{"alias twice", "both a cell and a row", h + "/a", webtable.AliasPrefix + "test.broken:http/r", "x"},
		{"alias stray", "does not redirect here", webtable.AliasRow("test.broken:http/b", "test.broken:http/r"), webtable.AliasFrom, "x"},
		{"member lost", "not a member of the cluster", "!dupm/", webtable.ClusterMember, ""},
		{"member twice", "both a cell and a row", "!dup/", webtable.MemberPrefix + "test.broken:http/d1", "x"},
		{"canonical", "elect", "!dup/", webtable.ClusterCanon, "test.broken:http/zzz"},
		{"member size", "cluster size", h + "/d1", webtable.ClusterSize, "7"},
		{"rank graph", "graph cell", "!rank/test.broken:http", "rg:test.broken:http/b", "ok"},
		{"rank touch", "not told", "!rank/test.broken:http", "rt:test.broken:http/b", "-"},
		{"rank written", "written as", h + "/c", webtable.Rank, "0.5"},
		{"band row lost", "no band row", "!near/", webtable.NearFP, ""},
		{"band rows moved", "band rows under", h + "/n1", webtable.NearFP, "0000000000000000"},
		{"left unseen", "not looked around", h + "/n1", webtable.NearWas, "0000000000000000"},
		{"folded shown", "exported, batch does not", h + "/n22", webtable.ExportDigest, "x"},
	} {
		row := tc.row
		if row == "!dup/" {
			row += e.get(h+"/d1", webtable.Hash)
		} else if row == "!dupm/" {
			d1, _ := webtable.Row(h + "/d1")
			row = webtable.MemberRow(e.get(h+"/d1", webtable.Hash), d1)
		} else if row == "!near/" {
			n1, _ := webtable.Row(h + "/n1")
			fp, err := webtable.ParseNearFP(e.get(h+"/n1", webtable.SimHash))
			if err != nil {
				t.Fatal(err)
			}
			row = webtable.NearRow(2, fp, n1)
		} else if row != "" && !strings.HasPrefix(row, "!") {
			row, _ = webtable.Row(row)
		}
		var old []byte
		if row != "" {
			err := e.db.View(bg, func(tx *percolator.Tx) (err error) {
				old, err = tx.Get(bg, row, tc.col)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var val []byte
			if tc.val != "" {
				val = []byte(tc.val)
			}
			set(row, tc.col, val)
		}
		diffs, _, err := observers.Verify(bg, e.db, 0.01, 20)
		if err != nil {
			t.Fatal(err)
		}
		switch got := strings.Join(diffs, "\n"); {
		case tc.want == "" && len(diffs) > 0:
			t.Errorf("%s: Verify: %q; want no difference", tc.name, diffs)
		case !strings.Contains(got, tc.want):
			t.Errorf("%s: Verify: %q; want a difference saying %q", tc.name, diffs, tc.want)
		}
		if row == "" {
			continue
		}
		if old == nil && tc.val == "" {
			old = []byte{} // a cell deleted above: it was there, empty
		}
		set(row, tc.col, old)
		if diffs, _, err := observers.Verify(bg, e.db, 0.01, 20); err != nil || len(diffs) > 0 {
			t.Fatalf("%s: put back: %q %v", tc.name, diffs, err)
		}
	}
}
