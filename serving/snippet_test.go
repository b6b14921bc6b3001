package serving

import (
	"fmt"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/corpus"
)

// Analyzing only the text near possible matches gives the pages of the
// PostgreSQL manual the snippet that analyzing all of it gives.
func TestSnippetNearIsExact(t *testing.T) {
	an, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		t.Fatal(err)
	}
	all := func(an analysis.Analyzer, text string, _ map[string]bool) analysis.TokenStream {
		return an.Analyze([]byte(text))
	}
	queries := [][]string{{"vacuum"}, {"replies"}, {"happy"}, {"index", "concurrently"}, {"analyze"}, {"generalization"},
		{"table", "partitioning"}, {"Ü"}, {"the"}, {"json", "operators"}, {"WAL"}, {"zzzz"}}
	pages := corpus.Pages(t)
	for i, p := range pages {
		if i%5 != 0 {
			continue // a fifth of the manual: every kind of page, in seconds
		}
		pg, err := extract.HTML("http://pg.test/"+p.Path, p.Body, "text/html", extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			terms := analyzeTerms(an, q)
			want := fmt.Sprint(snippetBy(an, pg.Text, terms, all))
			if got := fmt.Sprint(snippet(an, pg.Text, terms)); got != want {
				t.Fatalf("%s, %v:\n got %s\nwant %s", p.Path, q, got, want)
			}
		}
	}
}
