package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestSitemaps(t *testing.T) {
	s := newSite(t)
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nDisallow:\nSitemap: %s/sitemap-index.xml\n", s.URL)
	})
	s.mux.HandleFunc("/sitemap-index.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>%[1]s/sm-a.xml</loc><lastmod>2024-01-01</lastmod></sitemap>
  <sitemap><loc>%[1]s/sm-b.xml.gz</loc></sitemap>
</sitemapindex>`, s.URL)
	})
	s.mux.HandleFunc("/sm-a.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>%[1]s/orphan-a</loc><lastmod>2024-03-05T10:00:00+00:00</lastmod></url>
  <url><loc>http://elsewhere.example.com/x</loc></url>
</urlset>`, s.URL)
	})
	s.mux.HandleFunc("/sm-b.xml.gz", func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		fmt.Fprintf(zw, `<urlset><url><loc>%s/orphan-b</loc></url></urlset>`, s.URL)
		zw.Close()
		w.Header().Set("Content-Type", "application/x-gzip")
		w.Write(b.Bytes())
	})
	s.mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<urlset><url><loc>%s/orphan-c</loc><lastmod>2023-12</lastmod></url></urlset>`, s.URL)
	})
	s.page("/", "no links")
	for _, p := range []string{"/orphan-a", "/orphan-b", "/orphan-c"} {
		s.page(p, "orphan")
	}
	tb := openTable(t, "")
	tb.crawl(testOptions(s.URL + "/"))

	for _, p := range []string{"/orphan-a", "/orphan-b", "/orphan-c"} {
		if s.count(p) != 1 || tb.get(s.URL+p, webtable.Body) == nil {
			t.Errorf("%s not crawled from the sitemaps", p)
		}
	}
	want := time.Date(2024, 3, 5, 10, 0, 0, 0, time.UTC).UnixMilli()
	if got := atoi(tb.get(s.URL+"/orphan-a", webtable.Hint)); got != want {
		t.Errorf("hint %d, want %d (lastmod)", got, want)
	}
	if tb.get(s.URL+"/orphan-b", webtable.Hint) != nil {
		t.Error("hint without lastmod")
	}
	if tb.get("http://elsewhere.example.com/x", webtable.Depth) != nil {
		t.Error("out-of-scope sitemap URL added")
	}
}

func TestParseSitemap(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		kind    sitemapKind
		locs    []string
		wantErr string
	}{
		{"urlset", `<urlset><url><loc> http://a/1 </loc></url><url><loc>http://a/2</loc></url></urlset>`, sitemapURLs, []string{"http://a/1", "http://a/2"}, ""},
		{"index", `<sitemapindex><sitemap><loc>http://a/s.xml</loc></sitemap></sitemapindex>`, sitemapIndex, []string{"http://a/s.xml"}, ""},
		{"BOM and declaration", "\ufeff\n <?xml version=\"1.0\" encoding=\"UTF-8\"?><urlset><url><loc>http://a/1</loc></url></urlset>", sitemapURLs, []string{"http://a/1"}, ""},
		{"not a sitemap", `<html><body>hi</body></html>`, 0, nil, "not a sitemap: <html>"},
		{"truncated keeps entries", `<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/`, sitemapURLs, []string{"http://a/1"}, "malformed sitemap after 1 entries: XML syntax error on line 1: unexpected EOF"},
		{"malformed keeps entries", "<urlset>\n<url><loc>http://a/1</loc></url>\n<url><loc>http://a/2</loc></url>\n<url><loc>http://a/3</url></loc>\n<url><loc>http://a/4</loc></url></urlset>", sitemapURLs, []string{"http://a/1", "http://a/2", "http://a/3"}, "malformed sitemap after 3 entries: XML syntax error on line 4: unexpected end element </loc>"},
		{"empty loc skipped", `<urlset><url><lastmod>2024-01-01</lastmod></url></urlset>`, sitemapURLs, nil, ""},
		{"text", "http://a/1\n\n  http://a/2  \r\nnot a url\n/relative\nftp://a/f\nhttp://a/\xff\xfe\nhttps://a/3", sitemapText, []string{"http://a/1", "http://a/2", "https://a/3"}, ""},
		{"text long line skipped", "http://a/" + strings.Repeat("x", 5000) + "\nhttp://a/" + strings.Repeat("y", 20000) + "\nhttp://a/2\n", sitemapText, []string{"http://a/" + strings.Repeat("x", 5000), "http://a/2"}, ""},
		{"empty", " \n", 0, nil, "empty sitemap"},
		{"text run", "<urlset><url><loc>http://a/1</loc></url>" + strings.Repeat(" ", maxSitemapRun+10), sitemapURLs, []string{"http://a/1"}, "more than 1048576 bytes without markup"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var kind sitemapKind
			var locs []string
			n, err := readSitemap(strings.NewReader(tc.doc), 100, func(k sitemapKind, e sitemapEntry) error {
				kind = k
				locs = append(locs, e.loc)
				return nil
			})
			if msg := fmt.Sprint(err); (err != nil || tc.wantErr != "") && !strings.Contains(msg, tc.wantErr) || (err == nil) != (tc.wantErr == "") {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if n != len(locs) || (len(locs) > 0 && kind != tc.kind) || fmt.Sprint(locs) != fmt.Sprint(tc.locs) {
				t.Errorf("got %d, kind %v %q; want kind %v %q", n, kind, locs, tc.kind, tc.locs)
			}
		})
	}
}

// bomb is a gzip stream of size zero bytes (or spaces after an XML
// start) made of repeated members, each a megabyte: a few hundred
// kilobytes on the wire.
func bomb(t testing.TB, size int, prefix string, fill byte) []byte {
	t.Helper()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte{fill}, 1<<20))
	zw.Close()
	out := gzipped(t, []byte(prefix))
	for range size >> 20 {
		out = append(out, member.Bytes()...)
	}
	return out
}

// A gzip bomb (a small file that inflates past the protocol's 50 MB) is
// read to the limit and no further, in bounded memory: as a text file
// (zeros: one endless line) and as XML (spaces after <urlset>).
func TestSitemapGzipBomb(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prefix  string
		fill    byte
		wantErr error
	}{
		{"text", "", 0, errSitemapTooLarge},
		{"xml", "<urlset><url><loc>http://a/1</loc></url>", ' ', nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := bomb(t, 1<<30, tc.prefix, tc.fill)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			r := &countingReader{r: bytes.NewReader(z)}
			n, err := readSitemap(r, maxSitemapEntries, func(sitemapKind, sitemapEntry) error { return nil })
			runtime.ReadMemStats(&after)
			t.Logf("%d bytes compressed, %d read: %d entries, %v; %d bytes allocated", len(z), r.n, n, err, after.TotalAlloc-before.TotalAlloc)
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			if r.n >= int64(len(z)) {
				t.Errorf("read the whole bomb (%d bytes), want a stop at the limit", r.n)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("%d bytes allocated reading a bomb, want under 16 MiB", alloc)
			}
		})
	}
}

func FuzzParseSitemap(f *testing.F) {
	f.Add(`<urlset><url><loc>http://a/1</loc><lastmod>2024-01-01</lastmod></url></urlset>`)
	f.Add(`<sitemapindex><sitemap><loc>x</loc></sitemap></sitemapindex>`)
	f.Add("http://a/1\nhttp://a/2\n")
	f.Fuzz(func(t *testing.T, doc string) {
		calls := 0
		n, _ := readSitemap(strings.NewReader(doc), 10, func(sitemapKind, sitemapEntry) error {
			calls++
			return nil
		})
		if n > 10 || n != calls {
			t.Fatalf("%d entries (%d calls) past the limit", n, calls)
		}
	})
}

// logBuffer is a logger whose records a test reads.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// sitemapSite serves "/" and any page under /p/, with robots.txt listing
// the given sitemaps (paths).
func sitemapSite(t *testing.T, sitemaps ...string) *site {
	s := newSite(t)
	s.mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "User-agent: *\nDisallow:")
		for _, p := range sitemaps {
			fmt.Fprintf(w, "Sitemap: %s%s\n", s.URL, p)
		}
	})
	s.page("/", "no links")
	s.mux.HandleFunc("/p/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "a page")
	})
	return s
}

// urlset writes a sitemap of the URLs base/p/<pad>i for i in [from, to).
func urlset(w io.Writer, base, pad string, from, to int) {
	bw := bufio.NewWriter(w)
	bw.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := from; i < to; i++ {
		fmt.Fprintf(bw, "  <url><loc>%s/p/%s%d</loc><lastmod>2024-03-05T10:00:00+00:00</lastmod><changefreq>daily</changefreq></url>\n", base, pad, i)
	}
	bw.WriteString("</urlset>\n")
	bw.Flush()
}

// crawlLong is tb.crawl for crawls that add tens of thousands of pages
// to the frontier (a minute under -race on a loaded machine).
func crawlLong(tb *table, opt Options) {
	tb.t.Helper()
	c, err := New(tb.db, opt)
	if err != nil {
		tb.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		tb.t.Fatalf("Run: %v", err)
	}
}

// sitemapPages counts the frontier's pages from sitemaps (under /p/).
func sitemapPages(tb *table) int {
	n := 0
	for _, u := range tb.pages() {
		if strings.Contains(u, "/p/") {
			n++
		}
	}
	return n
}

// A sitemap of the protocol's 50,000 URLs, 11.8 MB, past -max-body, and
// the same gzipped, served as application/octet-stream under a name
// without .gz: the crawler's fetch reads every URL of both. (Into the
// frontier: TestSitemapIndexCap.)
func TestSitemapProtocolLimits(t *testing.T) {
	s := sitemapSite(t)
	pad := strings.Repeat("long-path-segment/", 6) // 108 bytes: 11.8 MB in all
	var big bytes.Buffer
	urlset(&big, s.URL, pad, 0, maxSitemapEntries)
	if big.Len() <= 10<<20 {
		t.Fatalf("sitemap of %d bytes, want past the 10 MiB of -max-body", big.Len())
	}
	z := gzipped(t, big.Bytes())
	s.mux.HandleFunc("/big.xml", func(w http.ResponseWriter, r *http.Request) { w.Write(big.Bytes()) })
	s.mux.HandleFunc("/big.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(z)
	})
	opt := testOptions(s.URL + "/")
	opt.Timeout = 2 * time.Minute // 11.8 MB parsed under -race on a loaded machine
	c, err := New(openTable(t, "").db, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/big.xml", "/big.bin"} {
		kind, entries, err := c.fetchSitemap(context.Background(), s.URL+p)
		if err != nil || kind != sitemapURLs || len(entries) != maxSitemapEntries {
			t.Fatalf("%s: %d entries, %v; want %d", p, len(entries), err, maxSitemapEntries)
		}
		if last := entries[len(entries)-1]; last.loc != s.URL+"/p/"+pad+"49999" || last.lastmod == 0 {
			t.Errorf("%s: last entry %+v", p, last)
		}
	}
}

// An index of two sitemaps of 30,000 URLs each: -sitemap-max-urls 60000
// takes them all; a cap of 100 takes 100, and the next robots.txt read
// takes the next 100 (known pages do not count).
func TestSitemapIndexCap(t *testing.T) {
	s := sitemapSite(t, "/index.xml")
	s.mux.HandleFunc("/index.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%[1]s/a.xml</loc></sitemap><sitemap><loc>%[1]s/b.xml</loc></sitemap></sitemapindex>`, s.URL)
	})
	// Two sitemaps of 30,000, a cap of 60,000; a tenth of that under the
	// race detector, where the 60,000 rows take two minutes.
	half := 30000
	if raceEnabled {
		half = 3000
	}
	s.mux.HandleFunc("/a.xml", func(w http.ResponseWriter, r *http.Request) { urlset(w, s.URL, "", 0, half) })
	s.mux.HandleFunc("/b.xml", func(w http.ResponseWriter, r *http.Request) { urlset(w, s.URL, "", half, 2*half) })

	cap := func(args ...string) int {
		fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
		parse := Flags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		opt, err := parse()
		if err != nil {
			t.Fatal(err)
		}
		return opt.MaxSitemapURLs
	}
	if n := cap(); n != 50000 {
		t.Errorf("default -sitemap-max-urls %d, want 50000", n)
	}
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	parse := Flags(fs)
	fs.Parse([]string{"-sitemap-max-urls", "0"})
	if _, err := parse(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("-sitemap-max-urls 0: %v, want ErrInvalidOptions", err)
	}

	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.MaxPages = 1
	opt.MaxSitemapURLs = cap("-sitemap-max-urls", strconv.Itoa(2*half))
	opt.Timeout = time.Minute
	crawlLong(tb, opt)
	if n := sitemapPages(tb); n != 2*half {
		t.Errorf("-sitemap-max-urls %d: %d pages from an index of 2 × %d", 2*half, n, half)
	}

	small := openTable(t, "")
	opt.MaxSitemapURLs = cap("-sitemap-max-urls", "100")
	small.crawl(opt)
	if n := sitemapPages(small); n != 100 {
		t.Errorf("-sitemap-max-urls 100: %d pages", n)
	}
	opt.Seeds = nil
	small.crawl(opt) // a new crawler reads robots.txt, then the sitemaps, again
	if n := sitemapPages(small); n != 200 {
		t.Errorf("-sitemap-max-urls 100, read twice: %d pages, want 200", n)
	}
}

// Sitemaps as servers send them: gzip as application/octet-stream under
// any name, a text sitemap, malformed XML (the URLs before the error are
// kept and the log says why the rest is not), a gzip bomb (read to the
// limit, then the next sitemap).
func TestSitemapFormats(t *testing.T) {
	s := sitemapSite(t, "/bomb", "/sm.bin", "/urls.txt", "/broken.xml")
	s.mux.HandleFunc("/sm.bin", func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		urlset(zw, s.URL, "gz-", 0, 3)
		zw.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b.Bytes())
	})
	s.mux.HandleFunc("/urls.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "%[1]s/p/txt-1\n\n%[1]s/p/txt-2\r\nnot a URL\n/p/relative\nhttp://elsewhere.example.com/p/x\n%[1]s/p/bad-\xff\n  %[1]s/p/txt-3  \n", s.URL)
	})
	s.mux.HandleFunc("/broken.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<urlset>\n<url><loc>%[1]s/p/ok-1</loc></url>\n<url><loc>%[1]s/p/ok-2</loc></url>\n<url><loc>%[1]s/p/ok-3</url></loc>\n<url><loc>%[1]s/p/after</loc></url>\n</urlset>", s.URL)
	})
	z := bomb(t, 256<<20, "", 0)
	s.mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(z)
	})
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.MaxPages = 1
	var logs logBuffer
	opt.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	tb.crawl(opt)

	for _, p := range []string{"gz-0", "gz-1", "gz-2", "txt-1", "txt-2", "txt-3", "ok-1", "ok-2", "ok-3"} {
		if tb.get(s.URL+"/p/"+p, webtable.Depth) == nil {
			t.Errorf("/p/%s not in the frontier", p)
		}
	}
	if n := sitemapPages(tb); n != 9 {
		t.Errorf("%d pages from the sitemaps, want 9: %q", n, tb.pages())
	}
	log := logs.String()
	for _, want := range []string{
		`msg="sitemap read in part" url=` + s.URL + `/broken.xml entries=3 err="malformed sitemap after 3 entries: XML syntax error on line 4: unexpected end element </loc>"`,
		`msg="sitemap skipped" url=` + s.URL + `/bomb entries=0 err="text sitemap after 0 entries: sitemap larger than 52428800 bytes"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}
