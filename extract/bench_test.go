package extract

import (
	"bytes"
	"testing"

	"golang.org/x/net/html"
)

// BenchmarkHTML extracts every page of the PostgreSQL corpus; one op is one
// page (pages taken in turn), and MB/s counts their HTML.
func BenchmarkHTML(b *testing.B) {
	pages := loadCorpus(b)
	benchPages(b, pages, func(cp corpusPage) {
		if _, err := HTML(cp.url, cp.body, "text/html", Options{}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkParseTree is the baseline: building the html.Node tree alone,
// which is what goquery.NewDocumentFromReader spends its time on.
func BenchmarkParseTree(b *testing.B) {
	pages := loadCorpus(b)
	benchPages(b, pages, func(cp corpusPage) {
		if _, err := html.Parse(bytes.NewReader(cp.body)); err != nil {
			b.Fatal(err)
		}
	})
}

func benchPages(b *testing.B, pages []corpusPage, f func(corpusPage)) {
	total := 0
	for _, p := range pages {
		total += len(p.body)
	}
	b.SetBytes(int64(total / len(pages))) // the mean page
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		f(pages[i%len(pages)])
		i++
	}
}

// BenchmarkSimHash fingerprints the text of every page of the PostgreSQL
// corpus (extracted before the timer starts); one op is one page, and MB/s
// counts its text.
func BenchmarkSimHash(b *testing.B) {
	var texts []corpusPage
	for _, cp := range loadCorpus(b) {
		p, err := HTML(cp.url, cp.body, "text/html", Options{})
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, corpusPage{url: cp.url, body: []byte(p.Text)})
	}
	benchPages(b, texts, func(cp corpusPage) { SimHash(string(cp.body)) })
}
