package feed

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

func openIndex(t testing.TB) *serving.Index {
	t.Helper()
	ix, err := serving.OpenIndex(filepath.Join(t.TempDir(), "index"), serving.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func upsert(version uint64, row, url, title, text string, pr float64, anchors ...string) webtable.Export {
	d := &webtable.Doc{URL: url, Host: webtable.HostOf(url), Title: title, Text: text, PageRank: pr,
		FetchedAt: time.UnixMilli(int64(version)).UTC(), ClusterSize: 1}
	for _, a := range anchors {
		d.Anchors = append(d.Anchors, webtable.Anchor{From: "http://other.example/", Text: a})
	}
	return webtable.Export{Op: webtable.OpUpsert, Version: version, Row: row, URL: url, Doc: d}
}

func find(t *testing.T, ix *serving.Index, q string) []string {
	t.Helper()
	res, err := ix.Search(context.Background(), serving.Query{Q: q, N: 10})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var urls []string
	for _, r := range res.Results {
		urls = append(urls, r.URL)
	}
	return urls
}
