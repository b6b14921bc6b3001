package crawl

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// A crawl that fetched pages says so in webtable.StatsChanged, so that the
// process counting the pages counts them again; a crawl that changed
// nothing leaves the mark as it was.
func TestCrawlMarksChange(t *testing.T) {
	tb := openTable(t, t.TempDir())
	s := newSite(t)
	s.page("/", `<a href="/a">a</a>`)
	s.page("/a", "a")
	mark := func() int64 {
		t.Helper()
		var v []byte
		err := tb.db.View(context.Background(), func(tx *percolator.Tx) error {
			var err error
			v, err = tx.Get(context.Background(), webtable.StatsRow, webtable.StatsChanged)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if v == nil {
			return 0
		}
		ms, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			t.Fatalf("%s = %q: %v", webtable.StatsChanged, v, err)
		}
		return ms
	}
	began := time.Now().UnixMilli()
	tb.crawl(testOptions(s.URL + "/"))
	first := mark()
	if first < began {
		t.Fatalf("%s = %d after a crawl that began at %d", webtable.StatsChanged, first, began)
	}
	tb.crawl(testOptions(s.URL + "/")) // nothing is due
	if m := mark(); m != first {
		t.Errorf("%s moved from %d to %d after a crawl that fetched nothing", webtable.StatsChanged, first, m)
	}
}
