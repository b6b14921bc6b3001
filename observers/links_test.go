package observers_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// A page with more changed links than one run writes publishes them over
// several runs (links-more), and when idle its targets' in: cells and its
// links:out are exactly its links, after every change.
func TestManyLinksPublishedInParts(t *testing.T) {
	observers.SetMaxLinkChanges(t, 3)
	e := newEnv(t)
	src := host + "/index"
	links := func(from, to int, anchor string) map[string]string {
		m := make(map[string]string)
		for i := from; i < to; i++ {
			m[fmt.Sprintf("%s/t%02d", host, i)] = fmt.Sprintf("%s %d", anchor, i)
		}
		return m
	}
	load := func(want map[string]string) {
		var hrefs []string
		for _, u := range slices.Sorted(maps.Keys(want)) {
			hrefs = append(hrefs, u, want[u])
		}
		e.fetch(src, 200, page("Index", "the index of every page", hrefs...))
	}
	check := func(want map[string]string) {
		t.Helper()
		e.idle()
		srcRow := mustRow(src)
		for i := range 20 {
			u := fmt.Sprintf("%s/t%02d", host, i)
			if got := e.get(u, webtable.InPrefix+srcRow); got != want[u] {
				t.Errorf("%s in:%s = %q, want %q", u, srcRow, got, want[u])
			}
		}
		var out map[string]string
		if b := e.get(src, webtable.LinksOut); b != "" {
			if err := json.Unmarshal([]byte(b), &out); err != nil {
				t.Fatal(err)
			}
		}
		wantRows := make(map[string]string)
		for u, a := range want {
			wantRows[mustRow(u)] = a
		}
		if !maps.Equal(out, wantRows) {
			t.Errorf("links:out %v, want %v", out, wantRows)
		}
	}
	more := func() int64 {
		for _, s := range e.w.Stats() {
			if s.Name == "links-more" {
				return s.Commits
			}
		}
		t.Fatal("no links-more observer in the chain")
		return 0
	}

	first := links(0, 10, "first")
	load(first)
	check(first)
	if n := more(); n < 3 { // 10 links, 3 a run
		t.Errorf("links-more committed %d runs for 10 links published 3 at a time, want at least 3", n)
	}

	// Five links go, five come, one keeps its target with a new anchor.
	second := links(5, 15, "second")
	second[fmt.Sprintf("%s/t%02d", host, 9)] = "first 9"
	before := more()
	load(second)
	check(second)
	if n := more() - before; n < 4 { // 14 changes: 5 deleted, 4 new anchors, 5 added
		t.Errorf("links-more committed %d runs for 14 changes published 3 at a time, want at least 4", n)
	}

	// The page goes: every cell goes with it.
	e.fetch(src, 404, "")
	check(nil)
}

// What a run leaves for links-more waits in the table, not in a process:
// an indexer without links-more (one that stopped after the first part)
// leaves links:out listing exactly the cells written, and the next
// indexer publishes the rest.
func TestManyLinksRestWaitsInTable(t *testing.T) {
	observers.SetMaxLinkChanges(t, 2)
	e := newEnv(t)
	e.w.Close()
	var hrefs []string
	for i := range 9 {
		hrefs = append(hrefs, fmt.Sprintf("/t%02d", i), fmt.Sprintf("anchor %d", i))
	}
	src := host + "/index"
	row := mustRow(src)
	e.fetch(src, 200, page("Index", "the index", hrefs...))
	cells := func() map[string]string {
		got := make(map[string]string)
		for i := range 9 {
			u := fmt.Sprintf("%s/t%02d", host, i)
			if a := e.get(u, webtable.InPrefix+row); a != "" {
				got[mustRow(u)] = a
			}
		}
		return got
	}
	published := func() map[string]string {
		var out map[string]string
		if b := e.get(src, webtable.LinksOut); b != "" {
			if err := json.Unmarshal([]byte(b), &out); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}

	first, err := percolator.NewWorker(e.db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond}, observers.Parse(), observers.Links())
	if err != nil {
		t.Fatal(err)
	}
	first.Start()
	e.w = first
	e.idle()
	first.Close()
	if got, out := cells(), published(); len(got) != 2 || !maps.Equal(got, out) {
		t.Fatalf("after the first part: in: cells %v, links:out %v; want the same two", got, out)
	}
	pending, err := e.db.Pending(bg)
	if err != nil {
		t.Fatal(err)
	}
	if pending[webtable.LinksMore] != 1 {
		t.Fatalf("pending %v, want one %s", pending, webtable.LinksMore)
	}

	final, err := percolator.NewWorker(e.db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond}, chain()...)
	if err != nil {
		t.Fatal(err)
	}
	final.Start()
	defer final.Close()
	e.w = final
	e.idle()
	got, out := cells(), published()
	if len(got) != 9 || !maps.Equal(got, out) {
		t.Fatalf("when idle: in: cells %v, links:out %v; want the same nine", got, out)
	}
	for r, a := range got {
		if want := "anchor " + strings.TrimPrefix(r[len(r)-2:], "0"); a != want {
			t.Errorf("%s: in:%s = %q, want %q", r, row, a, want)
		}
	}
}
