package serving

import (
	"context"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// A page made mostly of links (an index, a table of contents) that lists
// the query's words ranks below the page they are about, though it
// matches more of them and has more PageRank.
func TestHubPagesRankBelow(t *testing.T) {
	ix := openIndex(t)
	hub := upsert(1, "hub", "http://docs.example/bookindex.html", "Index",
		"vacuum VACUUM vacuum routine vacuuming vacuum_cost_delay autovacuum vacuum full vacuum", 60)
	hub.Doc.LinkDensity = 0.9
	page := upsert(1, "page", "http://docs.example/sql-vacuum.html", "Garbage collection",
		"VACUUM reclaims storage occupied by dead tuples; run vacuum periodically on busy tables", 1)
	page.Doc.LinkDensity = 0.03
	apply(t, ix, hub, page)
	if got := find(t, ix, "vacuum"); len(got) != 2 || got[0] != page.URL {
		t.Errorf("the hub outranks the page: %v", got)
	}
	if f := HubFactor(0.1); f != 1 {
		t.Errorf("HubFactor(0.1) = %g: a content page is not scaled", f)
	}
	if a, b := HubFactor(0.6), HubFactor(0.9); !(b < a && a < 1 && b > 0) {
		t.Errorf("HubFactor(0.6) = %g, HubFactor(0.9) = %g", a, b)
	}
}

// The site's title affix is shown, not searched: a query for the site's
// name does not match every page through its title.
func TestTitleAffixNotSearched(t *testing.T) {
	ix := openIndex(t)
	os := upsert(1, "os", "http://py.example/os.html", "os — Miscellaneous operating system interfaces — Python 3.11 documentation", "This module provides a portable way of using operating system dependent functionality.", 1)
	os.Doc.TitleCore = "os — Miscellaneous operating system interfaces"
	about := upsert(1, "about", "http://py.example/about.html", "About these documents — Python 3.11 documentation", "These documents are generated from reStructuredText sources by Sphinx, a documentation processor written for the Python documentation.", 1)
	about.Doc.TitleCore = "About these documents"
	apply(t, ix, os, about)
	if got := find(t, ix, "python documentation"); len(got) != 1 || got[0] != about.URL {
		t.Errorf("python documentation: %v, want only the page whose text says so", got)
	}
	res, err := ix.Search(context.Background(), Query{Q: "portable", N: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].Title != os.Doc.Title {
		t.Errorf("results %+v: the whole title is shown", res.Results)
	}
	top, err := ix.Top(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range top.Pages {
		if p.URL == os.URL && p.Title != os.Doc.Title {
			t.Errorf("top shows %q", p.Title)
		}
	}
}

// Pages where the query's words stand together rank above pages that
// have them apart.
func TestProximity(t *testing.T) {
	ix := openIndex(t)
	apart := upsert(1, "apart", "http://a.example/", "Servers", "a key to the table; the foreign server is elsewhere, a key", 1)
	together := upsert(1, "together", "http://b.example/", "Constraints", "a foreign key constrains the values of a column to those of another table", 1)
	apply(t, ix, apart, together)
	if got := find(t, ix, "foreign key"); len(got) != 2 || got[0] != together.URL {
		t.Errorf("foreign key: %v", got)
	}
	// Relaxed queries keep the boost.
	if got := find(t, ix, "foreign key constrains nothing"); len(got) == 0 || got[0] != together.URL {
		t.Errorf("relaxed: %v", got)
	}
}

// A page with a heading that holds the query's words ranks above a page
// that has them only in its text, and a heading holding one of two words
// does not count.
func TestHeadingsRank(t *testing.T) {
	ix := openIndex(t)
	text := "Maximum database size. The largest database file is about 281 terabytes, with the maximum page size and page count."
	head := upsert(1, "head", "http://sql.example/limits.html", "Limits", text, 1)
	head.Doc.Sections = []webtable.Section{{ID: "max_page_count", Heading: "Maximum database size", At: 0}}
	mention := upsert(1, "mention", "http://sql.example/storage.html", "Storage", text, 1.2)
	one := upsert(1, "one", "http://sql.example/pages.html", "Pages", text, 1.2)
	one.Doc.Sections = []webtable.Section{{ID: "size", Heading: "Size", At: 0}}
	apply(t, ix, head, mention, one)
	if got := find(t, ix, "database size"); len(got) != 3 || got[0] != head.URL {
		t.Errorf("database size: %v, want %s first", got, head.URL)
	}
	// One word of two in a heading: no lift, PageRank orders.
	if got := find(t, ix, "file size"); len(got) != 3 || got[2] != head.URL {
		t.Errorf("file size: %v, want %s last", got, head.URL)
	}
	if got := find(t, ix, "headings:maximum"); len(got) != 1 || got[0] != head.URL {
		t.Errorf("headings:maximum: %v", got)
	}
}

// A page that declares a language its text is not (an untranslated copy
// under a site's cs-CZ/ tree) ranks below the page it copies, by
// MismatchFactor, though it has a little more PageRank.
func TestLangMismatchRanksLower(t *testing.T) {
	ix := openIndex(t)
	en := upsert(1, "en", "http://handbook.example/en-US/sect.backup.html", "Backup", "Backups are made with rsync; restoring a machine without a backup takes longer.", 1)
	cs := upsert(1, "cs", "http://handbook.example/cs-CZ/sect.backup.html", "Backup", "Backups are made with rsync; restoring a machine without a backup takes longer.", 1)
	cs.Doc.LangMismatch = true
	en.Doc.Anchors = []webtable.Anchor{{From: "http://handbook.example/en-US/index.html", Text: "Backup"}}
	cs.Doc.Anchors = []webtable.Anchor{{From: "http://handbook.example/cs-CZ/index.html", Text: "Backup"}}
	cs.Doc.PageRank = en.Doc.PageRank * 1.1
	apply(t, ix, en, cs)
	r, err := ix.Search(t.Context(), Query{Q: "backup", N: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 2 || r.Results[0].URL != en.URL {
		t.Fatalf("results %v, want the en-US page first", r.Results)
	}
	if f := MismatchFactor(1); !(f < 1 && f > 0.5) || MismatchFactor(0) != 1 {
		t.Errorf("MismatchFactor(1) = %g, MismatchFactor(0) = %g", f, MismatchFactor(0))
	}
}
