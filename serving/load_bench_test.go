package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
			var (
				mu   sync.Mutex
				lat  = make([]float64, 0, b.N)
				next = make(chan int, b.N)
				wg   sync.WaitGroup
			)
			for i := range b.N {
				next <- i
			}
			close(next)
			b.ResetTimer()
			began := time.Now()
			for c := range clients {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 11))
					var mine []float64
					for range next {
						q := vocab[rng.IntN(len(vocab))]
						t := time.Now()
						if _, err := ix.Search(context.Background(), Query{Q: q, N: 10}); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(t).Seconds())
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			took := time.Since(began)
			s := summarize(lat)
			b.ReportMetric(s.P50*1e3, "p50_ms")
			b.ReportMetric(s.P99*1e3, "p99_ms")
			b.ReportMetric(float64(len(lat))/took.Seconds(), "queries/s")
		})
	}
}

// titleWords returns the distinct words of more than three letters in the
// titles of es, sorted.
func titleWords(es []Update) []string {
	var vocab []string
	seen := make(map[string]bool)
	for _, e := range es {
		for _, w := range strings.FieldsFunc(strings.ToLower(e.Doc.Title), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if len(w) > 3 && !seen[w] {
				seen[w] = true
				vocab = append(vocab, w)
			}
		}
	}
	slices.Sort(vocab)
	return vocab
}
