package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkLangQuery compares 1- and 2-word queries over the corpus
// copies (≥ 10,000 documents) indexed as English pages (langs=en) and
// with two thirds of the copies labelled German and French (langs=3),
// so that every query word is analysed three ways (langs.go) and a word
// whose analyses differ loses the fast path (topk.go). The pages' text
// is the same English in both: only the analysis differs.
func BenchmarkLangQuery(b *testing.B) {
	es := corpusExports(b)
	build := func(labelled bool) *Index {
		ix, err := OpenIndex(filepath.Join(b.TempDir(), "index"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ix.Close() })
		us := make([]Update, len(es))
		for i, u := range es {
			d := *u.Doc
			if labelled {
				d.Lang = []string{"en", "de", "fr"}[i/(len(es)/benchCopies)%3]
			}
			u.Doc = &d
			us[i] = u
		}
		for chunk := range slices.Chunk(us, 500) {
			if _, err := ix.Apply(chunk); err != nil {
				b.Fatal(err)
			}
		}
		return ix
	}
	ixs := map[string]*Index{"en": build(false), "3": build(true)}
	vocab := titleWords(es[:len(es)/benchCopies])
	for words := 1; words <= 2; words++ {
		for _, langs := range []string{"en", "3"} {
			b.Run(fmt.Sprintf("words=%d/langs=%s", words, langs), func(b *testing.B) {
				ix := ixs[langs]
				rng := rand.New(rand.NewPCG(uint64(words), 7))
				lat := make([]float64, 0, b.N)
				b.ResetTimer()
				for range b.N {
					q := make([]string, words)
					for i := range q {
						q[i] = vocab[rng.IntN(len(vocab))]
					}
					t := time.Now()
					if _, err := ix.Search(context.Background(), Query{Q: strings.Join(q, " "), N: 10}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t).Seconds())
				}
				s := summarize(lat)
				b.ReportMetric(s.P50*1e3, "p50_ms")
				b.ReportMetric(s.P99*1e3, "p99_ms")
			})
		}
	}
}
