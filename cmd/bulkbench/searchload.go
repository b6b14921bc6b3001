package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/web"
)

// searchLoad is the search phase of the engine mode: once idle, clients
// goroutines ask the JSON API (web.Server, over loopback HTTP as a user's
// client would) n one-word queries in all, words of the indexed titles.
// It returns queries/s and the latency percentiles in seconds.
func searchLoad(ctx context.Context, e *engine.Engine, clients, n int) (qps, p50, p99 float64, err error) {
	words, err := titleWords(ctx, e)
	if err != nil {
		return 0, 0, 0, err
	}
	if len(words) == 0 {
		return 0, 0, 0, fmt.Errorf("search load: no title words in the index")
	}
	srv := httptest.NewServer(web.New(e, web.Options{}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var (
		mu    sync.Mutex
		lat   []float64
		first error
		wg    sync.WaitGroup
	)
	began := time.Now()
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 5))
			var mine []float64
			for range next {
				q := words[rng.IntN(len(words))]
				t := time.Now()
				err := get(ctx, client, srv.URL+"/api/search?q="+url.QueryEscape(q))
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
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
	if first != nil {
		return 0, 0, 0, first
	}
	took := time.Since(began)
	slices.Sort(lat)
	q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	return float64(len(lat)) / took.Seconds(), q(0.50), q(0.99), nil
}

func get(ctx context.Context, c *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("search load: %s: %s", u, resp.Status)
	}
	return nil
}

// titleWords returns the distinct words of more than three letters of the
// titles of the index's documents (the first thousand by PageRank).
func titleWords(ctx context.Context, e *engine.Engine) ([]string, error) {
	seen := make(map[string]bool)
	var words []string
	for start := 0; start < 1000; start += 100 {
		res, err := e.Search(ctx, serving.Query{Q: "*", N: 100, Start: start})
		if err != nil {
			return nil, err
		}
		for _, r := range res.Results {
			for _, w := range strings.FieldsFunc(strings.ToLower(r.Title), func(r rune) bool { return r < 'a' || r > 'z' }) {
				if len(w) > 3 && !seen[w] {
					seen[w] = true
					words = append(words, w)
				}
			}
		}
		if len(res.Results) < 100 {
			break
		}
	}
	slices.Sort(words)
	return words, nil
}
