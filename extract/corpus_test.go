package extract

import (
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/internal/corpus"
)

// corpusPage is one page of the shared PostgreSQL manual corpus.
type corpusPage struct {
	url  string
	body []byte
}

// loadCorpus reads the HTML pages of the PostgreSQL corpus, or skips when
// the corpus is not there.
func loadCorpus(tb testing.TB) []corpusPage {
	tb.Helper()
	var pages []corpusPage
	for _, p := range corpus.Pages(tb) {
		pages = append(pages, corpusPage{url: "https://www.postgresql.org/docs/15/" + p.Path, body: p.Body})
	}
	return pages
}

// TestCorpus runs every page of a real site through HTML.
func TestCorpus(t *testing.T) {
	pages := loadCorpus(t)
	hashes := make(map[string]string)
	links, external, sectioned := 0, 0, 0
	for _, cp := range pages {
		p, err := HTML(cp.url, cp.body, "text/html", Options{})
		if err != nil {
			t.Fatalf("%s: %v", cp.url, err)
		}
		checkPage(t, p, DefaultMaxTextBytes)
		for _, s := range p.Sections {
			checkSectionAt(t, p.Text, s)
		}
		if len(p.Sections) > 0 {
			sectioned++
		}
		if p.Title == "" || p.Text == "" || p.Charset != "utf-8" {
			t.Errorf("%s: Title %q, %d bytes of text, charset %q", cp.url, p.Title, len(p.Text), p.Charset)
		}
		if strings.HasSuffix(cp.url, "/sql-set.html") {
			checkSQLSet(t, p)
		}
		if other, ok := hashes[p.Hash]; ok {
			t.Errorf("%s and %s hash alike; the corpus has no duplicates", cp.url, other)
		}
		hashes[p.Hash] = cp.url
		for _, l := range p.Links {
			links++
			if !strings.HasPrefix(l.URL, "https://www.postgresql.org/docs/15/") {
				external++
			}
		}
	}
	t.Logf("%d pages, %d links (%d external), %d with sections", len(pages), links, external, sectioned)
	// Every page of the manual but its few index pages heads its parts
	// with a section's id.
	if sectioned < len(pages)*9/10 {
		t.Errorf("%d of %d pages have sections", sectioned, len(pages))
	}
}

// checkSQLSet checks one corpus page in detail.
func checkSQLSet(t *testing.T, p Page) {
	t.Helper()
	if p.Title != "SET" || !strings.HasPrefix(p.Text, "SET SET — change a run-time parameter Synopsis") || strings.Contains(p.Text, "Prev") {
		t.Errorf("sql-set.html: Title %q, Text %.100q", p.Title, p.Text)
	}
	want := map[string]string{
		"https://www.postgresql.org/docs/15/sql-selectinto.html": "Prev",
		"https://www.postgresql.org/docs/15/sql-commands.html":   "Up",
		"https://www.postgresql.org/docs/15/index.html":          "Home",
	}
	for _, l := range p.Links {
		if a, ok := want[l.URL]; ok {
			if !strings.HasPrefix(l.Anchor, a) {
				t.Errorf("sql-set.html: anchor %q for %s, want %q first", l.Anchor, l.URL, a)
			}
			delete(want, l.URL)
		}
	}
	if len(want) > 0 {
		t.Errorf("sql-set.html: links missing: %v", want)
	}
}
