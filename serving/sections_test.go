package serving

import (
	"context"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
)

// TestResultSection: a result links to the section whose heading has the
// query's words, else to the one its snippet comes from, and to none when
// the page as a whole answers (its first heading) or has no sections.
func TestResultSection(t *testing.T) {
	const body = `<html><head><title>Routine Vacuuming</title></head><body>
<div id="top"><h1>Routine Vacuuming</h1><p>Databases require periodic maintenance known as vacuuming.</p>
<div id="basics"><h2>Vacuuming Basics</h2><p>The command has to process each table on a regular basis.</p></div>
<div id="wraparound"><h2>Preventing Transaction ID Wraparound Failures</h2><p>Transaction IDs have limited size; a cluster that runs for a long time must freeze old rows.</p></div>
<div id="multixact"><h2>Multixacts</h2><p>Multixact IDs support row locking by several transactions at once.</p></div>
</div></body></html>`
	p, err := extract.HTML("http://example.com/vacuum.html", []byte(body), "text/html", extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sections) != 4 {
		t.Fatalf("sections %+v, want 4", p.Sections)
	}
	ix := openIndex(t)
	e := upsert(1, "com.example/vacuum.html", "http://example.com/vacuum.html", p.Title, p.Text, 1)
	e.Doc.Sections = p.Sections
	plain := upsert(2, "com.example/plain.html", "http://example.com/plain.html", "Plain", "a page about wraparound failures and row locking without sections", 0.5)
	jp, err := extract.HTML("http://example.com/json.html", []byte(`<html><head><title>JSON Functions</title></head><body>
<h1>JSON Functions</h1><p>SQLite stores JSON as text.</p><h2 id="overview">Overview</h2><p>Most functions take JSON text.</p>
<h2 id="json">The json() function</h2><p>The json function verifies its argument.</p>
<h2 id="each">Table-valued functions</h2><p>The json_each table walks an array.</p></body></html>`), "text/html", extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := upsert(3, "com.example/json.html", "http://example.com/json.html", jp.Title, jp.Text, 1)
	j.Doc.Sections = jp.Sections
	apply(t, ix, e, plain, j)

	for _, tc := range []struct {
		q, url, section, snippet string
	}{
		{"wraparound failures", "http://example.com/vacuum.html", "wraparound", "limited size"},
		{"row locking", "http://example.com/vacuum.html", "multixact", "row locking"},
		{"routine vacuuming", "http://example.com/vacuum.html", "", ""},
		// The title has the words: the page answers, not a heading.
		{"json function", "http://example.com/json.html", "", ""},
		{"json_each", "http://example.com/json.html", "each", "json_each"},
		{"wraparound failures", "http://example.com/plain.html", "", ""},
	} {
		res, err := ix.Search(context.Background(), Query{Q: tc.q, N: 10})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range res.Results {
			if r.URL != tc.url {
				continue
			}
			found = true
			if r.Section != tc.section {
				t.Errorf("%q: %s links section %q (%q), want %q", tc.q, r.URL, r.Section, r.SectionHeading, tc.section)
			}
			var snip strings.Builder
			for _, s := range r.Snippet {
				snip.WriteString(s.Text)
			}
			if !strings.Contains(snip.String(), tc.snippet) {
				t.Errorf("%q: snippet %q, want it to hold %q", tc.q, snip.String(), tc.snippet)
			}
		}
		if !found {
			t.Errorf("%q: %s not found", tc.q, tc.url)
		}
	}
}

// TestResultSectionRealPage: on pages of the PostgreSQL manual, a query
// for one of their sections links to it.
func TestResultSectionRealPage(t *testing.T) {
	cases := map[string]map[string]string{ // page, query, section
		"routine-vacuuming.html": {
			"transaction id wraparound": "VACUUM-FOR-WRAPAROUND",
			"visibility map":            "VACUUM-FOR-VISIBILITY-MAP",
			"planner statistics":        "VACUUM-FOR-STATISTICS",
			"routine vacuuming":         "",
		},
		// The Notes hold the words as often; the section's heading has two.
		"sql-createindex.html": {"how do I create an index concurrently": "SQL-CREATEINDEX-CONCURRENTLY"},
	}
	bodies := map[string][]byte{}
	for _, pg := range corpus.Pages(t) {
		if cases[pg.Path] != nil {
			bodies[pg.Path] = pg.Body
		}
	}
	for path, queries := range cases {
		if bodies[path] == nil {
			t.Fatalf("%s is not in the corpus", path)
		}
		u := "https://www.postgresql.org/docs/15/" + path
		p, err := extract.HTML(u, bodies[path], "text/html", extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ix := openIndex(t)
		e := upsert(1, "org.postgresql.www/docs/15/"+path, u, p.Title, p.Text, 1)
		e.Doc.Sections = p.Sections
		apply(t, ix, e)
		for q, want := range queries {
			res, err := ix.Search(context.Background(), Query{Q: q, N: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Results) != 1 || res.Results[0].Section != want {
				t.Errorf("%s, %q: %+v, want section %q", path, q, res.Results, want)
				continue
			}
			// The snippet is the section's own text.
			for i, sec := range p.Sections {
				if sec.ID != want {
					continue
				}
				end := len(p.Text)
				if i+1 < len(p.Sections) {
					end = p.Sections[i+1].At
				}
				for _, span := range res.Results[0].Snippet {
					if span.Text != "…" && !strings.Contains(p.Text[sec.At:end], span.Text) {
						t.Errorf("%s, %q: snippet %q is not in section %q", path, q, span.Text, sec.Heading)
					}
				}
			}
		}
	}
}
