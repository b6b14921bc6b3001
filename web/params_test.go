package web

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestQueryLanguages: a search takes the searcher's languages from
// Accept-Language, best first; a header that does not parse, or one too
// long, is ignored (it only orders results).
func TestQueryLanguages(t *testing.T) {
	for _, c := range []struct {
		header string
		want   []string
	}{
		{"de-DE,de;q=0.9,en;q=0.8", []string{"de-DE", "de", "en"}},
		{"en;q=0.5, fr", []string{"fr", "en"}},
		{"", nil},
		{"not a header;;;q=x", nil},
		{strings.Repeat("en,", 300), nil},
	} {
		r := httptest.NewRequest("GET", "/api/search?q=installation", nil)
		if c.header != "" {
			r.Header.Set("Accept-Language", c.header)
		}
		q, err := queryParams(r)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(q.Langs, c.want) {
			t.Errorf("Accept-Language %.40q: languages %v, want %v", c.header, q.Langs, c.want)
		}
	}
}
