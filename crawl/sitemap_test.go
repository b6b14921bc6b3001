package crawl

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
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
		index   bool
		locs    []string
		wantErr bool
	}{
		{"urlset", `<urlset><url><loc> http://a/1 </loc></url><url><loc>http://a/2</loc></url></urlset>`, false, []string{"http://a/1", "http://a/2"}, false},
		{"index", `<sitemapindex><sitemap><loc>http://a/s.xml</loc></sitemap></sitemapindex>`, true, []string{"http://a/s.xml"}, false},
		{"not a sitemap", `<html><body>hi</body></html>`, false, nil, true},
		{"truncated keeps entries", `<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/`, false, []string{"http://a/1"}, false},
		{"empty loc skipped", `<urlset><url><lastmod>2024-01-01</lastmod></url></urlset>`, false, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			index, entries, err := parseSitemap(strings.NewReader(tc.doc), 100)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			var locs []string
			for _, e := range entries {
				locs = append(locs, e.loc)
			}
			if index != tc.index || fmt.Sprint(locs) != fmt.Sprint(tc.locs) {
				t.Errorf("got index=%v %q, want %v %q", index, locs, tc.index, tc.locs)
			}
		})
	}
}

func FuzzParseSitemap(f *testing.F) {
	f.Add(`<urlset><url><loc>http://a/1</loc><lastmod>2024-01-01</lastmod></url></urlset>`)
	f.Add(`<sitemapindex><sitemap><loc>x</loc></sitemap></sitemapindex>`)
	f.Fuzz(func(t *testing.T, doc string) {
		_, entries, _ := parseSitemap(strings.NewReader(doc), 10)
		if len(entries) > 10 {
			t.Fatalf("%d entries past the limit", len(entries))
		}
	})
}
