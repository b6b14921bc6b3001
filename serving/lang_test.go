package serving

import (
	"context"
	"slices"
	"testing"
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
