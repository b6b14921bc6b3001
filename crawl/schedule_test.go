package crawl

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestNextInterval(t *testing.T) {
	const (
		min = time.Minute
		max = 365 * 24 * time.Hour
		day = 24 * time.Hour
	)
	tests := []struct {
		name    string
		cur     time.Duration
		changed bool
		lo, hi  time.Duration
		want    time.Duration
	}{
		{"unchanged grows 1.4x", 10 * day, false, min, max, 14 * day},
		{"changed shrinks 0.8x", 10 * day, true, min, max, 8 * day},
		{"clamped at max", 300 * day, false, min, max, max},
		{"clamped at min", 70 * time.Second, true, min, max, min},
		{"never fetched starts at min", 0, false, min, max, 84 * time.Second},
		{"negative is never fetched", -time.Hour, true, min, max, min},
		{"at max stays", max, false, min, max, max},
		{"narrow range", 5 * time.Second, false, 2 * time.Second, 6 * time.Second, 6 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NextInterval(tc.cur, tc.changed, tc.lo, tc.hi); got != tc.want {
				t.Errorf("NextInterval(%v, %v) = %v, want %v", tc.cur, tc.changed, got, tc.want)
			}
		})
	}
	// Ten unchanged fetches from 30 days: 30 × 1.4^10 ≈ 868 days → max.
	iv := 30 * day
	for range 10 {
		iv = NextInterval(iv, false, min, max)
	}
	if iv != max {
		t.Errorf("after 10 unchanged: %v", iv)
	}
}

func ExampleNextInterval() {
	iv := 30 * 24 * time.Hour
	iv = NextInterval(iv, false, time.Minute, 365*24*time.Hour) // unchanged
	fmt.Println(iv)
	iv = NextInterval(iv, true, time.Minute, 365*24*time.Hour) // changed
	fmt.Println(iv)
	// Output:
	// 1008h0m0s
	// 806h24m0s
}

func TestTextSum(t *testing.T) {
	sum := func(s string) string {
		r := result{status: http.StatusOK, header: http.Header{"Content-Type": {"text/html"}}, body: []byte(s)}
		r.extract("http://example.com/")
		if !r.html || r.textSum == "" {
			t.Fatalf("%q: html %v, text sum %q", s, r.html, r.textSum)
		}
		return r.textSum
	}
	base := sum(`<html><body><p>Hello   world</p><script>var t=1</script></body></html>`)
	for name, tc := range map[string]struct {
		doc  string
		same bool
	}{
		"whitespace":  {"<html><body><p>Hello\n\tworld </p></body></html>", true},
		"attributes":  {`<html><body><p class="x" id="y">Hello world</p></body></html>`, true},
		"script":      {`<html><body><p>Hello world</p><script>var t=2</script></body></html>`, true},
		"comment":     {`<html><body><!-- built 12:00 --><p>Hello world</p></body></html>`, true},
		"letter case": {`<html><body><p>HELLO World</p></body></html>`, true},
		"text change": {`<html><body><p>Hello there</p></body></html>`, false},
		"words split": {`<html><body><p>Hello</p><p>world</p></body></html>`, true},
		"words join":  {`<html><body><p>Hello<b>world</b></p></body></html>`, false},
	} {
		if got := sum(tc.doc) == base; got != tc.same {
			t.Errorf("%s: same = %v, want %v", name, got, tc.same)
		}
	}
}

func TestFirstInterval(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	const lo, hi, initial = time.Minute, 30 * 24 * time.Hour, 7 * 24 * time.Hour
	tests := []struct {
		lastMod string
		want    time.Duration
	}{
		{"", initial},
		{"garbage", initial},
		{"Sun, 22 Nov 2026 11:00:00 GMT", time.Hour},
		{"Sun, 22 Nov 2026 11:59:50 GMT", lo},             // seconds ago: clamped up
		{"Mon, 01 Jan 2024 00:00:00 GMT", hi},             // years ago: clamped down
		{"Sun, 22 Nov 2026 13:00:00 GMT", initial},        // in the future: not believed
		{"Sunday, 22-Nov-26 10:00:00 GMT", 2 * time.Hour}, // RFC 850, as HTTP allows
		{"Sun Nov 22 09:00:00 2026", 3 * time.Hour},       // asctime
	}
	for _, tc := range tests {
		if got := FirstInterval(tc.lastMod, now, initial, lo, hi); got != tc.want {
			t.Errorf("FirstInterval(%q) = %v, want %v", tc.lastMod, got, tc.want)
		}
	}
}

// A first fetch starts the revisit interval from the page's Last-Modified:
// a page that changed a few seconds ago is revisited soon, one unchanged
// for a month after the longest interval.
func TestFirstIntervalFromLastModified(t *testing.T) {
	s := newSite(t)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<a href="/old">old</a> <a href="/new">new</a>`))
	})
	s.mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Last-Modified", time.Now().Add(-30*24*time.Hour).UTC().Format(http.TimeFormat))
		w.Write([]byte("<p>old</p>"))
	})
	s.mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Last-Modified", time.Now().Add(-20*time.Second).UTC().Format(http.TimeFormat))
		w.Write([]byte("<p>new</p>"))
	})
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.NoSitemaps = true
	opt.MinInterval, opt.InitialInterval, opt.MaxInterval = time.Second, time.Hour, 24*time.Hour
	opt.MaxPages = 3
	tb.crawl(opt)
	iv := func(path string) time.Duration {
		return time.Duration(atoi(tb.get(s.URL+path, webtable.Interval))) * time.Millisecond
	}
	if got := iv("/"); got != time.Hour {
		t.Errorf("no Last-Modified: first interval %v, want the initial 1h", got)
	}
	if got := iv("/old"); got != 24*time.Hour {
		t.Errorf("unchanged for a month: first interval %v, want the longest, 24h", got)
	}
	if got := iv("/new"); got < 19*time.Second || got > 23*time.Second {
		t.Errorf("changed 20 s ago: first interval %v, want about 20 s", got)
	}
}

// Recrawls send validators; a 304 leaves the body alone and grows the
// interval; a markup-only change is "unchanged"; a text change shrinks it.
func TestConditionalGETAndAdaptiveInterval(t *testing.T) {
	s := newSite(t)
	var version atomic.Int32
	bodies := []string{
		"<p>one</p>",
		"<p>one</p>",             // served as 304
		`<p class="new">one</p>`, // new bytes, same text
		"<p>two</p>",             // new text
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		v := int(version.Load())
		etag := fmt.Sprintf(`"v%d"`, v)
		if v == 1 && r.Header.Get("If-None-Match") == `"v0"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if v == 1 {
			etag = `"v0"`
		}
		w.Header().Set("ETag", etag)
		// In the future, so not believed: the first interval is the
		// initial one (TestFirstIntervalFromLastModified has the rest).
		w.Header().Set("Last-Modified", "Mon, 01 Jan 2120 00:00:00 GMT")
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(bodies[v]))
	})
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.NoSitemaps = true
	opt.MinInterval, opt.InitialInterval, opt.MaxInterval = time.Millisecond, 100*time.Millisecond, time.Hour
	opt.MaxPages = 1
	interval := func() int64 { return atoi(tb.get(s.URL+"/", webtable.Interval)) }

	tb.crawl(opt)
	if got := interval(); got != 100 {
		t.Fatalf("first interval %d ms, want the initial 100", got)
	}
	waitDue := func() { time.Sleep(time.Until(time.UnixMilli(atoi(tb.get(s.URL+"/", webtable.Due))))) }

	version.Store(1)
	waitDue()
	c := tb.crawl(opt)
	reqs := s.requests("/")
	last := reqs[len(reqs)-1]
	if last.Header.Get("If-None-Match") != `"v0"` || last.Header.Get("If-Modified-Since") == "" {
		t.Errorf("recrawl headers %v: want validators", last.Header)
	}
	if c.Stats().NotModified != 1 {
		t.Errorf("stats %+v: want a 304", c.Stats())
	}
	if got := string(tb.get(s.URL+"/", webtable.Body)); got != bodies[0] {
		t.Errorf("body after 304: %q", got)
	}
	if got := interval(); got != 140 {
		t.Errorf("interval after 304: %d, want 140", got)
	}

	version.Store(2)
	waitDue()
	tb.crawl(opt)
	if got := string(tb.get(s.URL+"/", webtable.Body)); got != bodies[2] {
		t.Errorf("body %q, want the new bytes", got)
	}
	if got := interval(); got != 196 {
		t.Errorf("interval after a markup change: %d, want 196 (unchanged text)", got)
	}

	version.Store(3)
	waitDue()
	tb.crawl(opt)
	if got := interval(); got != 156 {
		t.Errorf("interval after a text change: %d, want 156 (196×0.8)", got)
	}
}
