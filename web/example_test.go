package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/web"
)

// tiny is a Backend with one page.
type tiny struct{}

func (tiny) Search(ctx context.Context, q serving.Query) (*serving.Results, error) {
	return &serving.Results{Total: 1, Took: 2 * time.Millisecond, Results: []serving.Result{{
		URL:       "https://example.com/",
		Title:     "Example <Domain>",
		Snippet:   []serving.Span{{Text: "This domain is for use in "}, {Text: "examples", Mark: true}},
		FetchedAt: time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC),
		IndexedAt: time.Date(2026, 5, 14, 12, 0, 2, 0, time.UTC),
	}}}, nil
}

func (tiny) Doc(ctx context.Context, url string) (*feed.DocInfo, error) {
	return nil, fmt.Errorf("%w: %s", serving.ErrNotFound, url)
}

func (tiny) Top(ctx context.Context, host string, n int) (*serving.Top, error) {
	return &serving.Top{}, nil
}

func (tiny) Stats(ctx context.Context) (*web.Stats, error) { return &web.Stats{}, nil }
func (tiny) History() []web.Sample                         { return nil }

func ExampleNew() {
	srv := httptest.NewServer(web.New(tiny{}, web.Options{QueryTimeout: time.Second}))
	defer srv.Close()

	for _, path := range []string{"/api/search?q=examples&n=1", "/api/search?q=examples&n=1000", "/api/doc?url=https://nowhere.example/"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		fmt.Print(res.StatusCode, " ", string(body))
	}
	// Output:
	// 200 {"total":1,"took_ms":2,"relaxed":false,"suggestion":"","results":[{"url":"https://example.com/","title":"Example \u003cDomain\u003e","snippet":"This domain is for use in examples","snippet_html":"This domain is for use in \u003cmark\u003eexamples\u003c/mark\u003e","score":0,"pagerank":0,"fetched_at":"2026-05-14T12:00:00Z","indexed_at":"2026-05-14T12:00:02Z","duplicates":[],"similar":[],"similar_count":0,"anchors":[],"cluster_size":0}]}
	// 400 {"error":"n must be from 1 to 100, not 1000"}
	// 404 {"error":"not found: https://nowhere.example/"}
}
