// Package loadgen runs a fixed number of operations from concurrent
// clients and measures them: the search load benchmarks (serving's
// BenchmarkQueryLoad, bulkbench -searches) share it.
package loadgen

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Result is what Run measured.
type Result struct {
	Ops      int           // operations done, failed ones included
	Errors   int           // operations that returned an error
	Took     time.Duration // wall time of the whole run
	P50, P99 time.Duration // latency of one operation, failed ones included
}

// PerSecond is operations a second.
func (r Result) PerSecond() float64 {
	if r.Took <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Took.Seconds()
}

// Run does n operations from clients goroutines at once, each client with
// a random source of its own (seeded by its number, so runs repeat), and
// returns their latencies. An operation's error stops nothing: every one
// of the n operations runs, a failed one counts in Errors and its latency
// in the percentiles (a query that timed out took its time as a client
// sees it), and the first error is returned with the Result once all are
// done.
func Run(clients, n int, op func(rng *rand.Rand) error) (Result, error) {
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	var (
		mu    sync.Mutex
		lat   []time.Duration
		errs  int
		first error
		wg    sync.WaitGroup
	)
	began := time.Now()
	for c := range max(clients, 1) {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 11))
			var (
				mine   []time.Duration
				failed int
				err    error
			)
			for range next {
				t := time.Now()
				if e := op(rng); e != nil {
					failed++
					if err == nil {
						err = e
					}
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += failed
			if first == nil {
				first = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	r := Result{Ops: len(lat), Errors: errs, Took: time.Since(began)}
	if len(lat) > 0 {
		slices.Sort(lat)
		q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		r.P50, r.P99 = q(0.50), q(0.99)
	}
	return r, first
}

// Words returns the distinct words of more than three letters a–z in
// titles, lower-cased and sorted: one-word queries that find something.
func Words(titles []string) []string {
	seen := make(map[string]bool)
	var words []string
	for _, t := range titles {
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if len(w) > 3 && !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	slices.Sort(words)
	return words
}
