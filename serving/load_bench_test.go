package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/caffeine-go/caffeine/internal/loadgen"
)

// BenchmarkQueryLoad is the search load benchmark: clients goroutines
// search at once, each one-word query after the other (a word of the
// corpus's titles, 10 results with snippets), over the ≥ 10,000 documents
// of BenchmarkQuery. b.N is the number of queries in all. It reports
// queries/s and the latency p50/p99 each query saw, waiting for a search
// slot (Options.MaxSearches) included.
func BenchmarkQueryLoad(b *testing.B) {
	ix, vocab := benchIndex(b)
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			b.ResetTimer()
			r, err := loadgen.Run(clients, b.N, func(rng *rand.Rand) error {
				_, err := ix.Search(context.Background(), Query{Q: vocab[rng.IntN(len(vocab))], N: 10})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.P50.Seconds()*1e3, "p50_ms")
			b.ReportMetric(r.P99.Seconds()*1e3, "p99_ms")
			b.ReportMetric(r.PerSecond(), "queries/s")
		})
	}
}

// titleWords returns the words of the titles of es (loadgen.Words).
func titleWords(es []Update) []string {
	titles := make([]string, len(es))
	for i, e := range es {
		titles[i] = e.Doc.Title
	}
	return loadgen.Words(titles)
}
