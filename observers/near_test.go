package observers_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/webtable"
)

// Articles long enough to fingerprint, on different subjects.
var nearArticles = []string{
	"Vacuum reclaims storage occupied by dead tuples. In normal operation, tuples that are deleted or obsoleted by an update are not physically removed from their table; they remain present until a vacuum is done. Therefore it is necessary to do vacuum periodically, especially on frequently updated tables.",
	"The installer asks for the keyboard layout, the network configuration and the partitioning scheme, then installs a minimal system and offers to choose further tasks such as a desktop environment, a web server or an SSH server before it installs the boot loader.",
	"Each index type uses a different algorithm that is best suited to different types of queries. By default the create index command creates B-tree indexes, which fit the most common situations, and hash indexes store only a 32-bit hash code derived from the value.",
}

// nearPage is an article page: a site's navigation (left out of the
// fingerprint as boilerplate), the article and a footer line.
func nearPage(title, body, footer string, links ...string) string {
	var nav strings.Builder
	nav.WriteString(`<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/docs">Documentation</a> <a href="/about">About this site and its many contributors</a>`)
	for i := 0; i+1 < len(links); i += 2 {
		fmt.Fprintf(&nav, ` <a href="%s">%s</a>`, links[i], links[i+1])
	}
	nav.WriteString(`</nav>`)
	return fmt.Sprintf(`<html><head><title>%s</title></head><body>%s<h1>%s</h1><p>%s</p><p>%s</p></body></html>`, title, nav.String(), title, body, footer)
}

// Pages that differ only by a date, a visitor counter or a session id (in
// their links and in a line of text) are near-copies: one document, the
// shortest URL's, lists the others; different pages sharing the site's
// navigation each keep their own; and a near-copy edited into a different
// page gets its own document back.
func TestNearCopiesFolded(t *testing.T) {
	e := newEnv(t)
	const h = "http://near.test"
	e.fetch(h+"/news/vacuum", 200, nearPage("Vacuum", nearArticles[0], "Last updated 2026-11-28."))
	e.fetch(h+"/news/vacuum-2026-11-29", 200, nearPage("Vacuum", nearArticles[0], "Last updated 2026-11-29."))
	e.fetch(h+"/install", 200, nearPage("Installing", nearArticles[1], "You are visitor 1234 of this page."))
	e.fetch(h+"/install?from=feed", 200, nearPage("Installing", nearArticles[1], "You are visitor 1235 of this page."))
	e.fetch(h+"/install?from=home", 200, nearPage("Installing", nearArticles[1], "You are visitor 1301 of this page."))
	e.fetch(h+"/indexes?sid=8f3a", 200, nearPage("Indexes", nearArticles[2], "Session 8f3a91c2.", "/docs?sid=8f3a", "Your documents"))
	e.fetch(h+"/indexes?sid=77b0", 200, nearPage("Indexes", nearArticles[2], "Session 77b0d4e6.", "/docs?sid=77b0", "Your documents"))
	// Different pages, same navigation, each long enough to fingerprint.
	for i, s := range []string{"Backups", "Replication", "Monitoring", "Upgrades"} {
		e.fetch(fmt.Sprintf("%s/docs/%d", h, i), 200, nearPage(s, fmt.Sprintf("%s is covered on this page: what %s needs, how to set %s up, and which mistakes to avoid with %s on a busy server.", s, s, s, s), "Part of the documentation."))
	}
	e.idle()
	docs := e.index()
	want := map[string][]string{
		h + "/news/vacuum":      {h + "/news/vacuum-2026-11-29"},
		h + "/install":          {h + "/install?from=feed", h + "/install?from=home"},
		h + "/indexes?sid=77b0": {h + "/indexes?sid=8f3a"},
		h + "/docs/0":           nil, h + "/docs/1": nil, h + "/docs/2": nil, h + "/docs/3": nil,
	}
	check := func() {
		t.Helper()
		if got := keys(docs); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
			t.Fatalf("documents %v, want %v", got, slices.Sorted(maps.Keys(want)))
		}
		for u, sim := range want {
			if got := docs[u].Similar; !slices.Equal(got, sim) {
				t.Errorf("%s: similar %v, want %v", u, got, sim)
			}
			if docs[u].ClusterSize != 1 || len(docs[u].Duplicates) != 0 {
				t.Errorf("%s: near-copies counted as exact duplicates: %d %v", u, docs[u].ClusterSize, docs[u].Duplicates)
			}
		}
		diffs, _, err := observers.Verify(bg, e.db, 0.01, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Error(d)
		}
	}
	check()
	if fp := e.get(h+"/install", webtable.SimHash); len(fp) != 16 || e.get(h+"/install", webtable.NearFP) != fp {
		t.Errorf("fingerprint %q, band rows under %q", fp, e.get(h+"/install", webtable.NearFP))
	}

	// The head turns into another page: its near-copies fold under the
	// best of them.
	e.fetch(h+"/install", 200, nearPage("Installing", nearArticles[2]+" "+nearArticles[0], "Rewritten."))
	e.idle()
	docs = e.index()
	want[h+"/install"] = nil
	want[h+"/install?from=feed"] = []string{h + "/install?from=home"}
	check()

	// A page gone leaves its near-copy alone.
	e.fetch(h+"/news/vacuum", 404, "")
	e.idle()
	docs = e.index()
	delete(want, h+"/news/vacuum")
	want[h+"/news/vacuum-2026-11-29"] = nil
	check()
}

// The Debian handbook's section 6.4 in six languages: the translations
// (de-DE, es-ES) are documents of their own; the English text under the
// Czech, French and Korean navigation (cs-CZ, fr-FR, ko-KR: not
// translated) is folded under the en-US page, the only one of the four
// whose URL names the language of its text (cs-CZ has the smallest URL).
func TestNearCopiesHandbookLanguages(t *testing.T) {
	e := newEnv(t)
	const h = "http://handbook.test"
	langs := []string{"en-US", "de-DE", "es-ES", "fr-FR", "ko-KR", "cs-CZ"}
	for _, l := range langs {
		b, err := os.ReadFile("testdata/handbook/" + l + "/sect.apt-file.html")
		if err != nil {
			t.Fatal(err)
		}
		e.fetch(h+"/"+l+"/sect.apt-file.html", 200, string(b))
	}
	e.idle()
	docs := e.index()
	u := func(l string) string { return h + "/" + l + "/sect.apt-file.html" }
	want := map[string][]string{
		u("en-US"): {u("cs-CZ"), u("fr-FR"), u("ko-KR")},
		u("de-DE"): nil,
		u("es-ES"): nil,
	}
	if got := keys(docs); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("documents %v", got)
	}
	for d, sim := range want {
		if got := docs[d].Similar; !slices.Equal(got, sim) || len(docs[d].Duplicates) != 0 {
			t.Errorf("%s: similar %v, duplicates %v; want similar %v", d, got, docs[d].Duplicates, sim)
		}
	}
	diffs, _, err := observers.Verify(bg, e.db, 0.01, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}
