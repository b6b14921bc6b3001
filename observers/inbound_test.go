package observers_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// A page linked by more pages than its row keeps: the links past the
// limit move into rows of their own, every reader sees them all (the
// document's anchors, PageRank, Verify's batch), and they follow the
// linkers' changes: a new anchor, a link gone, the page gone and back.
// Once few links are left the row's mark goes too.
func TestInboundLinksSpill(t *testing.T) {
	observers.SetMaxInCells(t, 3)
	e := newEnv(t)
	hub := host + "/hub"
	hubRow := mustRow(hub)
	linker := func(i int, anchor string) {
		var links []string
		if anchor != "" {
			links = append(links, "/hub", anchor)
		}
		links = append(links, fmt.Sprintf("/p%d", (i+1)%12), "next")
		e.fetch(fmt.Sprintf("%s/p%d", host, i), 200, page(fmt.Sprintf("Page %d", i), fmt.Sprintf("page number %d of the site", i), links...))
	}
	e.fetch(hub, 200, page("Hub", "the hub of the site", "/p0", "first"))
	want := make(map[string]string) // linker row → anchor
	for i := range 12 {
		a := fmt.Sprintf("hub %d", i)
		linker(i, a)
		want[mustRow(fmt.Sprintf("%s/p%d", host, i))] = a
	}

	// state returns the hub's links in its row and spilled, and its mark.
	state := func() (row, spilled map[string]string, marked bool) {
		t.Helper()
		row, spilled = make(map[string]string), make(map[string]string)
		err := e.db.View(bg, func(tx *percolator.Tx) error {
			err := tx.Scan(bg, hubRow, hubRow+"\x00", webtable.InPrefix, func(_, col string, v []byte) bool {
				if col == webtable.InSpilled {
					marked = true
				} else {
					row[col[len(webtable.InPrefix):]] = string(v)
				}
				return true
			})
			if err != nil {
				return err
			}
			start, end := webtable.InSpillRange(hubRow)
			return tx.Scan(bg, start, end, webtable.InSpill, func(r, _ string, v []byte) bool {
				spilled[r[len(start):]] = string(v)
				return true
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return row, spilled, marked
	}
	check := func(step string, wantSpilled bool) {
		t.Helper()
		e.idle()
		verify(t, e)
		row, spilled, marked := state()
		if len(row) > 3 {
			t.Errorf("%s: %d links in the hub's row, want at most 3", step, len(row))
		}
		if marked != wantSpilled || (len(spilled) > 0) != wantSpilled {
			t.Errorf("%s: %d spilled links, marked %v; want spilled %v", step, len(spilled), marked, wantSpilled)
		}
		all := maps.Clone(row)
		for s, a := range spilled {
			if _, ok := row[s]; ok {
				t.Errorf("%s: link of %s both in the row and spilled", step, s)
			}
			all[s] = a
		}
		if !maps.Equal(all, want) {
			t.Errorf("%s: links %v, want %v", step, all, want)
		}
		doc := e.index()[hub]
		if doc == nil {
			t.Fatalf("%s: the hub is not indexed", step)
		}
		var texts []string
		for _, a := range doc.Anchors {
			if a.Text != "first" && a.Text != "next" {
				texts = append(texts, a.Text)
			}
		}
		if w := slices.Sorted(maps.Values(want)); !slices.Equal(slices.Sorted(slices.Values(texts)), w) {
			t.Errorf("%s: the hub's document has anchors %q, want %q", step, texts, w)
		}
	}
	check("twelve linkers", true)

	// One linker changes its anchor, one drops the link.
	linker(1, "renamed")
	want[mustRow(host+"/p1")] = "renamed"
	linker(6, "")
	delete(want, mustRow(host+"/p6"))
	check("a new anchor, a link gone", true)

	// The hub goes and comes back: its linkers' blocks are found through
	// every link (PageRank; Verify compares it with the batch's).
	e.fetch(hub, 404, "")
	e.idle()
	verify(t, e)
	e.fetch(hub, 200, page("Hub", "the hub of the site", "/p0", "first"))
	check("gone and back", true)

	// All but two drop the link: nothing is spilled, the mark goes.
	for i := range 12 {
		if i != 0 && i != 3 && i != 6 {
			linker(i, "")
			delete(want, mustRow(fmt.Sprintf("%s/p%d", host, i)))
		}
	}
	check("two linkers", false)
}

// A document lists at most webtable.MaxDuplicates of its duplicates (the
// first in URL order); its cluster size counts them all, and the members'
// rows only whether they have company.
func TestDuplicatesListed(t *testing.T) {
	e := newEnv(t)
	const n = webtable.MaxDuplicates + 3
	for i := range n {
		e.fetch(fmt.Sprintf("%s/soft404/p%03d", host, i), 200, page("Not found", "the page you asked for is not here"))
	}
	for i := range 10 {
		e.fetch(fmt.Sprintf("%s/doc%d", host, i), 200, page(fmt.Sprintf("Doc %d", i), fmt.Sprintf("document number %d", i), "/soft404/p000", "missing"))
	}
	e.idle()
	verify(t, e)
	var doc *webtable.Doc
	for _, d := range e.index() {
		if d.ClusterSize == n {
			doc = d
		}
	}
	if doc == nil {
		t.Fatalf("no document of the %d duplicates", n)
	}
	// A member's row says it has company, not how much: an exact size
	// would rewrite every member's row each time one joins.
	if got := e.get(host+"/soft404/p050", webtable.ClusterSize); got != "2" {
		t.Errorf("a member's %s = %q, want \"2\"", webtable.ClusterSize, got)
	}
	if len(doc.Duplicates) != webtable.MaxDuplicates || !slices.IsSorted(doc.Duplicates) {
		t.Errorf("%d duplicates listed (sorted %v), want the first %d", len(doc.Duplicates), slices.IsSorted(doc.Duplicates), webtable.MaxDuplicates)
	}
}
