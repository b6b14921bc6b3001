package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/loadgen"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/web"
)

// searchLoad is the search phase of the engine mode: once idle, clients
// goroutines ask the JSON API (web.Server, over loopback HTTP as a user's
// client would) n one-word queries in all: words, or if none, words of
// the indexed titles. It returns what loadgen measured: queries/s, the
// latency percentiles and the queries that failed (a timeout's 503, say),
// which count in the percentiles with the time they took; and the first
// failure, if any.
func searchLoad(ctx context.Context, e *engine.Engine, clients, n int, words []string) (loadgen.Result, error) {
	if len(words) == 0 {
		var err error
		if words, err = titleWords(ctx, e); err != nil {
			return loadgen.Result{}, err
		}
	}
	if len(words) == 0 {
		return loadgen.Result{}, fmt.Errorf("search load: no title words in the index")
	}
	// The words are the index's own or given: the first one must find
	// something, or the load would measure empty answers.
	if res, err := e.Search(ctx, serving.Query{Q: words[0], N: 10}); err != nil {
		return loadgen.Result{}, err
	} else if res.Total == 0 {
		return loadgen.Result{}, fmt.Errorf("search load: %q finds nothing", words[0])
	}
	srv := httptest.NewServer(web.New(e, web.Options{}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	return loadgen.Run(clients, n, func(rng *rand.Rand) error {
		return get(ctx, client, srv.URL+"/api/search?q="+url.QueryEscape(words[rng.IntN(len(words))]))
	})
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

// titleWords returns the words of the titles of the index's documents
// (the first thousand by PageRank; loadgen.Words).
func titleWords(ctx context.Context, e *engine.Engine) ([]string, error) {
	var titles []string
	for start := 0; start < 1000; start += 100 {
		res, err := e.Search(ctx, serving.Query{Q: "*", N: 100, Start: start})
		if err != nil {
			return nil, err
		}
		for _, r := range res.Results {
			titles = append(titles, r.Title)
		}
		if len(res.Results) < 100 {
			break
		}
	}
	return loadgen.Words(titles), nil
}
