package extract

import (
	"errors"
	"html"
	"os"
	"path/filepath"
	"testing"
)

// FuzzHTML: no input panics, and every Page keeps its invariants (valid
// UTF-8 everywhere, collapsed whitespace, links normalized to themselves,
// see checkPage).
func FuzzHTML(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.html"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(testURL, b, "text/html", "")
	}
	for _, s := range []string{
		`<base href="//other.example/a/"><a href="../b">b</a><a href="/%2e%2e/x">x</a>`,
		`<a href="http://[::1]:80/">v6</a><a href="http://%25/">pct host</a><a href="http://a..">dots</a>`,
		`<meta name=robots content=none><a href=x>x</a>`,
		`<meta name=caffeine-crawler content=nofollow><a href=x rel=ugc>x</a><a href=y>y</a>`,
		`<svg><title>t<a href=y>y</a></svg><template><a href=z>`,
		"<a href=\"/q?\xff\">\xfe</a><title>\x00</title>",
		`<meta charset="utf-16"><p>x`,
	} {
		f.Add(testURL, []byte(s), "", "noindex")
	}
	f.Add("https://Example.com:443/a/../b?x#y", []byte(`<a href="c">c</a>`), "application/xhtml+xml", "")
	f.Add(testURL, []byte(`<a href="c">c</a>`), "text/html", "caffeine-crawler: none, otherbot: noindex")
	f.Fuzz(func(t *testing.T, pageURL string, body []byte, contentType, xrobots string) {
		p, err := HTML(pageURL, body, contentType, Options{MaxTextBytes: 4096, XRobotsTag: xrobots})
		if err != nil {
			return
		}
		checkPage(t, p, 4096)
	})
}

// FuzzLinks aims FuzzHTML's URL checks at hrefs: a fuzzed link resolved
// against a fuzzed <base>.
func FuzzLinks(f *testing.F) {
	for _, s := range [][2]string{
		{"/%2e%2e/x", ""},
		{"http://%25/", ""},
		{"http://a../b", ""},
		{"http://[::1]:80/a", ""},
		{"?q=x\u00a0", "http://b.example/p?r"},
		{"//h%C3%A9.example/%7e", "https://x/"},
		{"a/./b/../../../c", "/d/e/"},
		{"http://a:0080/", "x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, href, base string) {
		body := "<base href='" + html.EscapeString(base) + "'><link rel=canonical href='" + html.EscapeString(href) +
			"'><a href='" + html.EscapeString(href) + "'>x</a><area href=\"" + html.EscapeString(href) + "\">"
		p, err := HTML(testURL, []byte(body), "text/html", Options{})
		if errors.Is(err, ErrNotHTML) {
			t.Skip("too many control bytes for text") // see looksBinary
		}
		if err != nil {
			t.Fatal(err)
		}
		checkPage(t, p, DefaultMaxTextBytes)
	})
}
