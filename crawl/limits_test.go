package crawl

import (
	"bytes"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestSlowResponse(t *testing.T) {
	s := newSite(t)
	s.page("/", `<a href="/slow">slow</a>`)
	s.mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.Timeout = 300 * time.Millisecond
	start := time.Now()
	tb.crawl(opt)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("crawl took %v: timeout not applied", d)
	}
	if e := strings.ToLower(string(tb.get(s.URL+"/slow", webtable.Error))); !strings.Contains(e, "timeout") && !strings.Contains(e, "deadline") {
		t.Errorf("error %q, want a timeout", e)
	}
	if got := string(tb.get(s.URL+"/slow", webtable.Status)); got != "0" {
		t.Errorf("status %q, want 0", got)
	}
}

// A 50 MB body is cut at MaxBodySize, marked truncated, and streamed: the
// server gets to write little more than the limit.
func TestHugeBody(t *testing.T) {
	s := newSite(t)
	s.page("/", `<a href="/huge">huge</a>`)
	const total = 50 << 20
	var written atomic.Int64
	s.mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		chunk := bytes.Repeat([]byte("<p>lorem ipsum</p>\n"), 3449) // ~64 KiB
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.MaxBodySize = 1 << 20
	tb.crawl(opt)
	body := tb.get(s.URL+"/huge", webtable.Body)
	if len(body) != 1<<20 {
		t.Errorf("body %d bytes, want %d", len(body), 1<<20)
	}
	if string(tb.get(s.URL+"/huge", webtable.Truncated)) != "1" {
		t.Error("not marked truncated")
	}
	if tb.get(s.URL+"/", webtable.Truncated) != nil {
		t.Error("small page marked truncated")
	}
	if w := written.Load(); w > 16<<20 {
		t.Errorf("server wrote %d MB: the body was not streamed", w>>20)
	}
}

func TestBinaryAndInvalidUTF8(t *testing.T) {
	s := newSite(t)
	s.page("/", `<a href="/img.png">img</a> <a href="/bad.html">bad</a>`)
	bin := append([]byte("\x89PNG\r\n\x1a\n\x00\x00<a href=\"/from-binary\">x</a>"), bytes.Repeat([]byte{0, 0xff, 0xfe}, 100)...)
	s.mux.HandleFunc("/img.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(bin)
	})
	bad := []byte("<html><body>caf\xe9 \xff\xfe <a href=\"/after-bad\">ok</a></body></html>")
	s.mux.HandleFunc("/bad.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(bad)
	})
	s.page("/after-bad", "fine")
	tb := openTable(t, "")
	tb.crawl(testOptions(s.URL + "/"))
	if got := tb.get(s.URL+"/img.png", webtable.Body); !bytes.Equal(got, bin) {
		t.Errorf("binary body changed: %d bytes", len(got))
	}
	if got := string(tb.get(s.URL+"/img.png", webtable.Type)); got != "image/png" {
		t.Errorf("type %q", got)
	}
	if s.count("/from-binary") != 0 {
		t.Error("link parsed out of a binary")
	}
	if got := tb.get(s.URL+"/bad.html", webtable.Body); !bytes.Equal(got, bad) {
		t.Errorf("invalid UTF-8 body not kept byte for byte: %q", got)
	}
	if s.count("/after-bad") != 1 {
		t.Error("link after invalid UTF-8 not followed")
	}
}

// An infinite calendar is cut by MaxDepth, and by MaxPages.
func TestCrawlerTrap(t *testing.T) {
	s := newSite(t)
	s.mux.HandleFunc("/cal", func(w http.ResponseWriter, r *http.Request) {
		d, _ := time.Parse("2006-01-02", r.URL.Query().Get("d"))
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<a href="/cal?d=` + d.AddDate(0, 0, 1).Format("2006-01-02") + `">next</a>` +
			`<a href="/cal?d=` + d.AddDate(0, 0, -1).Format("2006-01-02") + `">prev</a>`))
	})
	seed := s.URL + "/cal?d=2024-01-01"

	t.Run("depth", func(t *testing.T) {
		tb := openTable(t, "")
		opt := testOptions(seed)
		opt.MaxDepth = 5
		c := tb.crawl(opt)
		// Depth 0..5, each depth two new days but the one behind: 1 + 2×5.
		if n := len(tb.pages()); n != 11 {
			t.Errorf("%d pages, want 11", n)
		}
		if st := c.Stats(); st.Fetched != 11 {
			t.Errorf("fetched %d", st.Fetched)
		}
	})
	t.Run("pages", func(t *testing.T) {
		tb := openTable(t, "")
		opt := testOptions(seed)
		opt.MaxPages = 20
		c := tb.crawl(opt)
		if st := c.Stats(); st.Fetched != 20 {
			t.Errorf("fetched %d, want 20", st.Fetched)
		}
	})
}
