package crawl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// table is a real Badger-backed table on a test directory.
type table struct {
	t   testing.TB
	dir string
	st  *badger.Store
	db  *percolator.DB
}

// openTable opens the table in dir (a new temp dir if empty). Cleanup
// checks the frontier's invariants, then closes the DB before the store.
func openTable(t testing.TB, dir string) *table {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := percolator.Open(context.Background(), st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	tb := &table{t: t, dir: dir, st: st, db: db}
	t.Cleanup(tb.close)
	if n := testSpread(t); n > 1 {
		if _, err := webtable.InitSpread(context.Background(), db, n); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

// testSpread is the spread of the tests' new tables: $CRAWL_TEST_SPREAD
// (1 to webtable.MaxSpread; the suite passes with 16, Bigtable's), else
// 1, the Badger default.
func testSpread(t testing.TB) int {
	v := os.Getenv("CRAWL_TEST_SPREAD")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > webtable.MaxSpread {
		t.Fatalf("CRAWL_TEST_SPREAD=%q: want 1 to %d", v, webtable.MaxSpread)
	}
	return n
}

func (tb *table) close() {
	if tb.db == nil {
		return
	}
	if !tb.t.Failed() {
		tb.checkFrontier()
		if err := percolatortest.Check(context.Background(), tb.db); err != nil {
			tb.t.Error(err)
		}
	}
	if err := tb.db.Close(); err != nil {
		tb.t.Errorf("close db: %v", err)
	}
	if err := tb.st.Close(); err != nil {
		tb.t.Errorf("close store: %v", err)
	}
	tb.db = nil
}

// checkFrontier asserts that every page row's crawl:due has its index row
// and vice versa, and that no lease is left behind.
func (tb *table) checkFrontier() {
	tb.t.Helper()
	due := map[string]string{}   // page row → crawl:due
	index := map[string]string{} // page row → due ms in its index row
	spread, err := webtable.Spread(context.Background(), tb.db)
	if err != nil {
		tb.t.Fatal(err)
	}
	err = tb.db.View(context.Background(), func(tx *percolator.Tx) error {
		return tx.Scan(context.Background(), "", "", "crawl:", func(row, col string, v []byte) bool {
			switch {
			case col == webtable.DuePage:
				ms, page, ok := webtable.ParseDueRow(row)
				if !ok || page != string(v) || row != webtable.SpreadDueRow(spread, ms, page) {
					tb.t.Errorf("bad index row %q = %q (spread %d)", row, v, spread)
				}
				if old, dup := index[page]; dup {
					tb.t.Errorf("page %q has two index rows (%s, %d)", page, old, ms)
				}
				index[page] = string(itoa(ms))
			case col == webtable.Due:
				due[row] = string(v)
			case col == webtable.Lease:
				tb.t.Errorf("lease left on %q: %s", row, v)
			}
			return true
		})
	})
	if err != nil {
		tb.t.Fatal(err)
	}
	for row, ms := range due {
		if index[row] != ms {
			tb.t.Errorf("page %q due %s, index row at %q", row, ms, index[row])
		}
	}
	for row := range index {
		if _, ok := due[row]; !ok {
			tb.t.Errorf("index row for %q without a page row", row)
		}
	}
}

// get returns the cell (url, col), nil if absent.
func (tb *table) get(u, col string) []byte {
	tb.t.Helper()
	row := rowOf(tb.t, u)
	var v []byte
	err := tb.db.View(context.Background(), func(tx *percolator.Tx) error {
		var err error
		v, err = tx.Get(context.Background(), row, col)
		return err
	})
	if err != nil {
		tb.t.Fatal(err)
	}
	return v
}

// pages returns the URLs of all page rows.
func (tb *table) pages() []string {
	tb.t.Helper()
	var out []string
	err := tb.db.View(context.Background(), func(tx *percolator.Tx) error {
		return tx.Scan(context.Background(), "", "", webtable.Depth, func(row, _ string, _ []byte) bool {
			if strings.HasPrefix(row, "!") {
				return true
			}
			u, err := webtable.URL(row)
			if err != nil {
				tb.t.Errorf("row %q: %v", row, err)
			}
			out = append(out, u)
			return true
		})
	})
	if err != nil {
		tb.t.Fatal(err)
	}
	return out
}

func rowOf(t testing.TB, u string) string {
	t.Helper()
	n, err := webtable.Normalize(u)
	if err != nil {
		t.Fatal(err)
	}
	row, err := webtable.Row(n)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// testOptions are fast, local defaults for tests.
func testOptions(seeds ...string) Options {
	return Options{
		Seeds:        seeds,
		Once:         true,
		AllowPrivate: true,
		Delay:        -1,
		Parallel:     4,
		Workers:      8,
		Timeout:      5 * time.Second,
		RetryBackoff: 10 * time.Millisecond,
	}
}

// crawl runs a crawler with opt on tb to completion.
func (tb *table) crawl(opt Options) *Crawler {
	tb.t.Helper()
	c, err := New(tb.db, opt)
	if err != nil {
		tb.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		tb.t.Fatalf("Run: %v", err)
	}
	return c
}

// site is a test web server that counts requests per path.
type site struct {
	*httptest.Server
	mux *http.ServeMux

	mu    sync.Mutex // guards hits and times
	hits  map[string]int
	times map[string][]time.Time
	reqs  map[string][]*http.Request
}

func newSite(t testing.TB) *site {
	s := &site{mux: http.NewServeMux(), hits: map[string]int{}, times: map[string][]time.Time{}, reqs: map[string][]*http.Request{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		key := r.URL.RequestURI()
		s.hits[key]++
		s.times[key] = append(s.times[key], time.Now())
		s.reqs[key] = append(s.reqs[key], r.Clone(context.Background()))
		s.mu.Unlock()
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// page serves body as text/html at path.
func (s *site) page(path, body string) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(body))
	})
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *site) requests(path string) []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[path]
}

func (s *site) startTimes(path string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times[path]...)
}
