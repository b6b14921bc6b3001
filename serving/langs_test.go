package serving

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/caffeine-go/caffeine/extract"
)

// handbookIndex indexes the pages of testdata/handbook (two sections of
// the Debian handbook in German, French and English, extracted as the
// crawler does), each at http://handbook.example/LANG/PAGE.
func handbookIndex(t *testing.T) *Index {
	t.Helper()
	ix := openIndex(t)
	files, err := filepath.Glob("testdata/handbook/*/*.html")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/handbook: %v, %d files", err, len(files))
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.ToSlash(strings.TrimPrefix(f, "testdata/handbook/"))
		u := "http://handbook.example/" + rel
		p, _, err := extract.Document(u, b, "text/html", extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := upsert(uint64(i+1), "example.handbook/"+rel, u, p.Title, p.Text, 1)
		e.Doc.Lang = p.Lang
		apply(t, ix, e)
	}
	return ix
}

// TestLangStemming: a page is analysed by its language's analyzer, and a
// query word by the analyzers of the languages the index holds. A
// German plural finds the singular of a German page (Festplatten →
// Festplatte), a German singular its plural (Oberfläche → Oberflächen), a
// French plural in -x its singular (bureaux → bureau): the English
// analyzer stems none of them alike. A German stop word does not keep
// the German page from matching a query of all-required words.
func TestLangStemming(t *testing.T) {
	ix := handbookIndex(t)
	for _, c := range []struct {
		q    string
		want string
	}{
		{"Festplatten", "http://handbook.example/de-DE/sect.knoppix.html"},
		{"Oberfläche", "http://handbook.example/de-DE/sect.linux-mint.html"},
		{"bureaux", "http://handbook.example/fr-FR/sect.knoppix.html"},
		{"die Festplatten", "http://handbook.example/de-DE/sect.knoppix.html"},
		{"les bureaux graphiques", "http://handbook.example/fr-FR/sect.knoppix.html"},
	} {
		res, err := ix.Search(context.Background(), Query{Q: c.q, N: 10, Verbatim: true})
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		var got []string
		for _, r := range res.Results {
			got = append(got, r.URL)
		}
		if len(got) == 0 || got[0] != c.want || res.AllWords != 1 {
			t.Errorf("%s: %v (%d with all the words), want %s first and alone with all the words", c.q, got, res.AllWords, c.want)
		}
		if len(res.Results) > 0 && !marked(res.Results[0].Snippet) {
			t.Errorf("%s: nothing marked in the snippet of %s", c.q, res.Results[0].URL)
		}
	}
	// English pages keep the English analysis ("installer" finds
	// "installation").
	if got := find(t, ix, "installer lang:en"); len(got) != 2 {
		t.Errorf("installer lang:en: %v, want the two English pages", got)
	}
}

func marked(s []Span) bool {
	return slices.ContainsFunc(s, func(sp Span) bool { return sp.Mark })
}

// TestLangAnalyses: a word's distinct analyses each name their analyzer
// and are boosted by their count, so that a page matching one of them
// scores what it would if its analysis were the only one; a language that
// drops the word matches its pages with a negligible score. In an index
// of English pages alone, the word is the one match query it always was.
func TestLangAnalyses(t *testing.T) {
	m := indexMapping()
	match := func(text string) *query.MatchQuery {
		q := query.NewMatchQuery(text)
		q.SetField(fText)
		return q
	}
	d, ok := inLangs(m, []string{"de", "fr"}, match("Festplatten"), true).(*query.DisjunctionQuery)
	if !ok || len(d.Disjuncts) != 3 {
		t.Fatalf("Festplatten in en, de, fr: %#v, want three analyses", d)
	}
	for i, want := range []string{"en", "de", "fr"} {
		// Another language's analysis matches the pages of that
		// language alone.
		c := d.Disjuncts[i]
		if want != "en" {
			cq, ok := c.(*query.ConjunctionQuery)
			if !ok || len(cq.Conjuncts) != 2 {
				t.Fatalf("analysis %d: %#v, want it and lang:%s", i, c, want)
			}
			l, ok := cq.Conjuncts[1].(*query.DisjunctionQuery)
			if !ok || len(l.Disjuncts) != 1 || l.Disjuncts[0].(*query.TermQuery).Term != want {
				t.Errorf("analysis %d: pages of %#v, want lang:%s", i, cq.Conjuncts[1], want)
			}
			c = cq.Conjuncts[0]
		}
		mq := c.(*query.MatchQuery)
		if mq.Analyzer != want || mq.Boost() != 3 {
			t.Errorf("analysis %d: analyzer %q boost %g, want %q boost 3", i, mq.Analyzer, mq.Boost(), want)
		}
	}
	d, ok = inLangs(m, []string{"de"}, match("die"), true).(*query.DisjunctionQuery)
	if !ok || len(d.Disjuncts) != 2 {
		t.Fatalf("die in en, de: %#v, want the English analysis and German pages", d)
	}
	if tq, ok := d.Disjuncts[1].(*query.TermQuery); !ok || tq.Term != "de" || tq.FieldVal != fLang || tq.Boost() > 0.01 {
		t.Errorf("die: %#v, want lang:de with a negligible boost", d.Disjuncts[1])
	}
	if mq, ok := inLangs(m, nil, match("Festplatten"), true).(*query.MatchQuery); !ok || mq.Analyzer != analyzer || mq.Boost() != 1 {
		t.Errorf("an English-only index: %#v, want the match query with the English analyzer", mq)
	}
}
