package crawl

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// When the held rows are full and one busy host has the rest of the index,
// a pass can neither dispatch nor hold what it reads: the dispatcher must
// not read the index again and again while the host works through what is
// held (a million-page host made that a tenth of a bulk crawl's CPU).
func TestSkipOnlyPassesWait(t *testing.T) {
	const pages = 300
	s := newSite(t)
	var index strings.Builder
	index.WriteString("<html><body>")
	for i := range pages {
		fmt.Fprintf(&index, `<a href="/p%d">p%d</a> `, i, i)
		path := fmt.Sprintf("/p%d", i)
		s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(5 * time.Millisecond)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html><body>page</body></html>"))
		})
	}
	s.page("/", index.String())
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.Parallel, opt.Workers = 1, 8 // free workers, one busy host
	c, err := New(tb.db, opt)
	if err != nil {
		t.Fatal(err)
	}
	c.heldMax = 20
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.Stats().Fetched; n != pages+1 {
		t.Fatalf("fetched %d pages, want %d", n, pages+1)
	}
	// Each pass reads what is left, 150 rows on average. Passes begin
	// once half the held rows are gone, about 30 of them: 15 rows read a
	// page. Passes back to back read 130 a page.
	read := c.indexRead.Load()
	t.Logf("%d index rows read for %d pages", read, pages+1)
	if read > 30*(pages+1) {
		t.Errorf("the dispatcher read %d index rows for %d pages, want at most 30 a page", read, pages+1)
	}
}
