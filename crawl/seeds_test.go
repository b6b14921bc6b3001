package crawl

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

// A table crawled with AllowPrivate is not recrawled without it: every page
// would be refused and leave the index. Seeds given again are the caller's
// choice, and are refused page by page.
func TestRememberedPrivateSeeds(t *testing.T) {
	s := newSite(t)
	s.page("/", `<a href="/a">a</a>`)
	s.page("/a", "a")
	tb := openTable(t, "")
	tb.crawl(testOptions(s.URL + "/"))
	if n := s.count("/a"); n != 1 {
		t.Fatalf("/a fetched %d times", n)
	}
	seeds, err := Seeds(context.Background(), tb.db)
	if err != nil || len(seeds) != 1 || seeds[0] != s.URL+"/" {
		t.Fatalf("Seeds = %q, %v", seeds, err)
	}

	opt := testOptions()
	opt.AllowPrivate = false
	opt.MinInterval, opt.InitialInterval = time.Millisecond, time.Millisecond
	c, err := New(tb.db, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); !errors.Is(err, ErrPrivateSeeds) {
		t.Fatalf("Run = %v, want ErrPrivateSeeds", err)
	}
	if e := tb.get(s.URL+"/a", webtable.Error); e != nil {
		t.Errorf("/a error %q: it was refetched", e)
	}
	if tb.get(s.URL+"/a", webtable.Body) == nil {
		t.Error("/a lost its body")
	}
}
