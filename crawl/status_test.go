package crawl

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestStatuses(t *testing.T) {
	s := newSite(t)
	s.page("/", `<a href="/404">a</a> <a href="/410">b</a> <a href="/500">c</a> <a href="/429">d</a> <a href="/503-long">e</a>`)
	s.mux.HandleFunc("/404", http.NotFound)
	s.mux.HandleFunc("/410", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) })
	s.mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
	var n429 atomic.Int32
	s.mux.HandleFunc("/429", func(w http.ResponseWriter, r *http.Request) {
		if n429.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		w.Write([]byte("finally"))
	})
	s.mux.HandleFunc("/503-long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	})

	tb := openTable(t, "")
	start := time.Now()
	c := tb.crawl(testOptions(s.URL + "/"))

	for p, code := range map[string]string{"/404": "404", "/410": "410", "/500": "500", "/429": "200", "/503-long": "503"} {
		if got := string(tb.get(s.URL+p, webtable.Status)); got != code {
			t.Errorf("%s status %q, want %s", p, got, code)
		}
	}
	for _, p := range []string{"/404", "/410", "/500", "/503-long"} {
		if tb.get(s.URL+p, webtable.Body) != nil {
			t.Errorf("%s has a body", p)
		}
	}
	if n := s.count("/500"); n != 3 {
		t.Errorf("/500 requested %d times, want 3 (2 retries)", n)
	}
	if e := string(tb.get(s.URL+"/500", webtable.Error)); !strings.Contains(e, "500") {
		t.Errorf("/500 error %q", e)
	}
	if got := string(tb.get(s.URL+"/429", webtable.Body)); got != "finally" {
		t.Errorf("/429 body %q", got)
	}
	if ts := s.startTimes("/429"); len(ts) != 2 || ts[1].Sub(ts[0]) < time.Second {
		t.Errorf("/429 requests at %v: want 2, 1s apart (Retry-After)", ts)
	}
	if n := s.count("/503-long"); n != 1 {
		t.Errorf("/503-long requested %d times: a long Retry-After reschedules", n)
	}
	if due := atoi(tb.get(s.URL+"/503-long", webtable.Due)); time.UnixMilli(due).Before(start.Add(time.Hour)) {
		t.Errorf("/503-long due at %v, want after Retry-After", time.UnixMilli(due))
	}
	if st := c.Stats(); st.Errors != 2 || st.Fetched != 6 {
		t.Errorf("stats %+v: want 6 fetched, 2 errors (/500, /503-long)", st)
	}
}

// On recrawl a non-2xx response takes the page out of the index (its body
// is deleted, which notifies the parse observer); no response keeps it.
func TestRecrawlFailure(t *testing.T) {
	tests := []struct {
		name     string
		serve    func(w http.ResponseWriter, r *http.Request)
		status   string
		keepBody bool
	}{
		{"404", http.NotFound, "404", false},
		{"410", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) }, "410", false},
		{"503 after retries", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }, "503", false},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		}, "0", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t)
			var broken atomic.Bool
			s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/" {
					http.NotFound(w, r) // robots.txt, sitemap.xml
					return
				}
				if broken.Load() {
					tc.serve(w, r)
					return
				}
				w.Write([]byte("<p>here</p>"))
			})
			tb := openTable(t, "")
			opt := testOptions(s.URL + "/")
			opt.Timeout = 300 * time.Millisecond
			opt.MinInterval, opt.InitialInterval = time.Millisecond, time.Millisecond
			opt.MaxPages = 1 // always due again: stop after one fetch
			tb.crawl(opt)
			if tb.get(s.URL+"/", webtable.Body) == nil {
				t.Fatal("no body after the first fetch")
			}
			broken.Store(true)
			time.Sleep(time.Until(time.UnixMilli(atoi(tb.get(s.URL+"/", webtable.Due)))))
			tb.crawl(opt)
			if got := tb.get(s.URL+"/", webtable.Body) != nil; got != tc.keepBody {
				t.Errorf("body kept = %v, want %v", got, tc.keepBody)
			}
			if got := tb.get(s.URL+"/", webtable.BodySum) != nil; got != tc.keepBody {
				t.Errorf("body sum kept = %v, want %v", got, tc.keepBody)
			}
			if got := string(tb.get(s.URL+"/", webtable.Status)); got != tc.status {
				t.Errorf("status %q, want %s", got, tc.status)
			}
		})
	}
}

// Stats tell how far behind schedule the crawl runs: with one request
// every 200 ms to one host, the five pages found on the first are due at
// once and claimed 0.2 to 1 s late, 0.5 s on average counting the first.
func TestStatsLate(t *testing.T) {
	s := newSite(t)
	s.page("/", `<a href="/1">1</a> <a href="/2">2</a> <a href="/3">3</a> <a href="/4">4</a> <a href="/5">5</a>`)
	for i := 1; i <= 5; i++ {
		s.page(fmt.Sprint("/", i), "leaf")
	}
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.Delay, opt.Parallel = 200*time.Millisecond, 1
	st := tb.crawl(opt).Stats()
	if st.Claimed != 6 || st.Fetched != 6 {
		t.Fatalf("claimed %d, fetched %d pages, want 6", st.Claimed, st.Fetched)
	}
	if late := st.MeanLate(); late < 300*time.Millisecond || late > 2*time.Second {
		t.Errorf("mean lateness %v, want about 0.5 s", late)
	}
}
