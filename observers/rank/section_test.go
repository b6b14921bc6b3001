package rank_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestBigSectionBigtable loads a site whose RANK_SECTION_PAGES pages
// (200,000 for the figures in docs/benchmarks/rank.md) are all in one
// section, on the Bigtable emulator, with the rank observers alone: the
// section splits as it grows, no block row holds more than maxBlockPages
// pages, and the values agree with the batch. Each page links to the
// site's index page, the next page and four random ones; the index page
// links to the first 1,000. Skipped unless RANK_SECTION_PAGES is set (it
// takes minutes); RANK_BLOCK_PAGES sets the pages past which a block
// splits (default 4,096); RANK_SECTION_STORE=badger runs it on Badger.
func TestBigSectionBigtable(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RANK_SECTION_PAGES"))
	if n == 0 {
		t.Skip("RANK_SECTION_PAGES is not set")
	}
	if p, _ := strconv.Atoi(os.Getenv("RANK_BLOCK_PAGES")); p > 0 {
		t.Cleanup(rank.SetSplit(p, 4*p, 500)) // after the worker stops
	}
	var db *percolator.DB
	if os.Getenv("RANK_SECTION_STORE") == "badger" {
		db = openDB(t)
	} else {
		emulator.Ensure(t)
		st, err := bigtable.Open(t.Context(), bigtable.Config{Project: "caffeine", Instance: "test", Table: fmt.Sprintf("section%d", time.Now().UnixNano())})
		if err != nil {
			t.Fatal(err)
		}
		db = percolatortest.OpenOn(t, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	}
	rng := rand.New(rand.NewPCG(11, 12))
	page := func(i int) string { return fmt.Sprintf("http://big.test/docs/p%d.html", i) }
	g := web{}
	index := ok()
	for i := range n {
		links := []string{page(0), page((i + 1) % n)}
		for range 4 {
			links = append(links, page(rng.IntN(n)))
		}
		g[page(i)] = ok(links...)
		if i < 1000 {
			index.links = append(index.links, page(i))
		}
	}
	g[page(0)] = index

	idleTimeout = 4 * time.Hour // the emulator copies a block row whole for every call
	w := startWorker(t, db)
	began := time.Now()
	(web{}).write(t, db, g)
	wrote := time.Since(began)
	t.Logf("written in %v", wrote.Round(time.Second))
	waitIdle(t, w)
	took := time.Since(began)
	s := stats(w)

	var rows map[string]int
	var split []string
	err := db.View(bg, func(tx *percolator.Tx) error {
		var err error
		rows, split, err = rank.BlockRows(bg, tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]int, 0, len(rows))
	for _, c := range rows {
		sizes = append(sizes, c)
	}
	slices.Sort(sizes)
	t.Logf("%d pages in one section: written in %v, idle after %v; %d rank runs (%.2f a page), %d conflicts",
		n, wrote.Round(time.Second), took.Round(time.Second), s.Commits, float64(s.Commits)/float64(n), s.Conflicts)
	t.Logf("%d block rows with pages, %d split sections; pages a block row: least %d, median %d, most %d (limit %d)",
		len(sizes), len(split), sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1], rank.MaxBlockPages())
	if sizes[len(sizes)-1] > rank.MaxBlockPages() {
		t.Errorf("a block row holds %d pages, more than %d", sizes[len(sizes)-1], rank.MaxBlockPages())
	}
	inc, b := values(t, db), batch(t, db)
	if d := rank.Compare(inc, b, 0.01); len(d) > 0 {
		t.Fatalf("incremental and batch disagree on %d pages: %v", len(d), d[:min(10, len(d))])
	}
	e, where := maxRelErr(inc, b)
	t.Logf("incremental within %.2g of the batch (worst %s)", e, where)
}
