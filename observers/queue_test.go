package observers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// queued returns the entries of q as "VERSION ROW".
func (e *env) queued(q webtable.Queue) []string {
	e.t.Helper()
	var got []string
	err := e.db.View(bg, func(tx *percolator.Tx) error {
		got = got[:0]
		return tx.Scan(bg, q.Prefix, q.End(), webtable.ExportDoc, func(row, _ string, _ []byte) bool {
			got = append(got, fmt.Sprint(q.Version(row), " ", row[len(q.From(0, q.Version(row))):]))
			return true
		})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// TestExportFansOut: with no index registered every export goes to the
// default queue alone; with names registered (webtable.RegistryTTL ago),
// one entry per name, the same in every queue, upserts and deletes alike.
func TestExportFansOut(t *testing.T) {
	e := newEnv(t)
	const h = "http://site.test"
	main, r2, r3 := webtable.QueueOf("main"), webtable.QueueOf("r2"), webtable.QueueOf("r3")
	e.fetch(h+"/", 200, page("Home", "welcome home", "/a", "Alpha"))
	e.idle()
	if n := len(e.queued(main)); n == 0 || len(e.queued(r2)) != 0 {
		t.Fatalf("unregistered: %d entries in main's queue, %v in r2's", n, e.queued(r2))
	}
	before := len(e.queued(main))

	err := e.db.Update(bg, func(tx *percolator.Tx) error {
		for _, name := range []string{"main", "r2", "r3"} {
			if err := tx.Set(webtable.IndexRow(name), webtable.IndexState, []byte(webtable.IndexLive)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The export observers may use a registry read that much older than
	// their transactions (a feeder's backfill covers the exports between).
	time.Sleep(webtable.RegistryTTL)
	e.fetch(h+"/a", 200, page("Alpha", "alpha page text", "/", "Back home"))
	e.fetch(h+"/", 404, "") // a delete
	e.idle()
	m := e.queued(main)[before:]
	if len(m) < 2 {
		t.Fatalf("main's queue got %v", m)
	}
	for _, q := range []webtable.Queue{r2, r3} {
		if got := e.queued(q); !slices.Equal(got, m) {
			t.Errorf("%s's queue has %v, main's got %v", q.Name, got, m)
		}
	}
	home, _ := webtable.Row(h + "/")
	if !slices.ContainsFunc(m, func(s string) bool { return strings.HasSuffix(s, " "+home) }) {
		t.Errorf("no delete of %s queued: %v", home, m)
	}
}
