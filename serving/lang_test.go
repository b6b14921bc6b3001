package serving

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestLangField: lang:xx matches a page's primary language subtag,
// whatever its region, and each result says its language.
func TestLangField(t *testing.T) {
	ix := openIndex(t)
	fr := upsert(1, "com.example/fr", "http://example.com/fr/install.html", "Installation", "installation du système", 0)
	fr.Doc.Lang = "fr-fr"
	en := upsert(2, "com.example/en", "http://example.com/en/install.html", "Installation", "installation of the system", 0)
	en.Doc.Lang = "en-us"
	none := upsert(3, "com.example/x", "http://example.com/x/install.html", "Installation", "installation", 0)
	apply(t, ix, fr, en, none)

	if got := find(t, ix, "lang:fr installation"); !slices.Equal(got, []string{"http://example.com/fr/install.html"}) {
		t.Errorf("lang:fr installation: %v, want the French page alone", got)
	}
	if got := find(t, ix, "lang:en installation"); !slices.Equal(got, []string{"http://example.com/en/install.html"}) {
		t.Errorf("lang:en installation: %v, want the en-us page alone", got)
	}
	res, err := ix.Search(context.Background(), Query{Q: "installation", N: 10})
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]string{}
	for _, r := range res.Results {
		langs[r.URL] = r.Lang
	}
	want := map[string]string{"http://example.com/fr/install.html": "fr", "http://example.com/en/install.html": "en", "http://example.com/x/install.html": ""}
	for u, l := range want {
		if got, ok := langs[u]; !ok || got != l {
			t.Errorf("%s: lang %q (found %v), want %q", u, got, ok, l)
		}
	}
}

// TestLangPreference: the same page in three languages; a search ranks
// the searcher's language first (Accept-Language, best first), the
// query's own when it is clearly of one language, and PageRank's order
// without either. The preference is asked with a word all the analyzers
// keep as it is: "installation" is "instal" in English and French pages
// and "installation" in German ones, which makes the German term rarer in
// a small index (a higher IDF). Pages of other words make the index big
// enough for the query language to outweigh that.
func TestLangPreference(t *testing.T) {
	ix := openIndex(t)
	page := func(v uint64, lang, pr string, rank float64) webtable.Export {
		u := "http://example.com/" + lang + "/install.html"
		e := upsert(v, "com.example/"+lang, u, "Installation", "installation "+pr, rank)
		e.Doc.Lang = lang
		return e
	}
	es := []webtable.Export{page(1, "fr", "debian", 3), page(2, "de", "debian", 2), page(3, "en", "debian", 1)}
	for i := range 30 {
		u := fmt.Sprintf("http://example.com/other/%d.html", i)
		es = append(es, upsert(uint64(4+i), fmt.Sprintf("com.example/other/%d", i), u, "Other", "another page", 0))
	}
	apply(t, ix, es...)
	first := func(q Query) string {
		t.Helper()
		res, err := ix.Search(context.Background(), q)
		if err != nil || len(res.Results) == 0 {
			t.Fatalf("search %+v: %v, %d results", q, err, len(res.Results))
		}
		return res.Results[0].Lang
	}
	for _, c := range []struct {
		langs []string
		want  string
	}{
		{nil, "fr"},                     // the highest PageRank
		{[]string{"de-DE", "en"}, "de"}, // Accept-Language: de-DE, en
		{[]string{"en-GB"}, "en"},
		{[]string{"*"}, "fr"},
	} {
		if got := first(Query{Q: "debian", N: 3, Langs: c.langs}); got != c.want {
			t.Errorf("debian, languages %v: first result in %q, want %q", c.langs, got, c.want)
		}
	}
	if l, ok := extract.DetectLang("installation et configuration du système de fichiers"); !ok || l != "fr" {
		t.Skipf("the detector reads the French query as %q (%v)", l, ok)
	}
	if got := first(Query{Q: "installation et configuration du système de fichiers", N: 3, Langs: []string{"de"}}); got != "fr" {
		t.Errorf("a French query asked with Accept-Language de: first result in %q, want fr", got)
	}
}

// TestLangAnalysisOwnPages: a word that another language's stemmer makes
// into an English page's term does not find that page: "handlr" (a typo)
// is "handl" to the French stemmer, which is "handles" in English pages.
// The French analysis still finds French pages.
func TestLangAnalysisOwnPages(t *testing.T) {
	ix := openIndex(t)
	fr := upsert(1, "com.example/fr", "http://example.com/fr/a.html", "Gestionnaires", "les gestionnaires handles du système", 0)
	fr.Doc.Lang = "fr"
	en := upsert(2, "com.example/en", "http://example.com/en/a.html", "Handles", "the handles of the system", 0)
	en.Doc.Lang = "en"
	apply(t, ix, fr, en)
	res, err := ix.Search(context.Background(), Query{Q: "handlr", N: 10, Verbatim: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := urls(res); !slices.Equal(got, []string{"http://example.com/fr/a.html"}) {
		t.Errorf("handlr: %v, want the French page alone (its stemmer's handl), not the English one", got)
	}
	if got := find(t, ix, "handles"); len(got) != 2 {
		t.Errorf("handles: %v, want both pages", got)
	}
}
