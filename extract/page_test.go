package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestContent(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		body                    string
		title, text, desc, lang string
	}{
		{
			name:  "basic",
			body:  `<html lang="en"><head><title>Hello</title><meta name="description" content="A  page."></head><body><p>Hello, world.</p></body></html>`,
			title: "Hello", text: "Hello, world.", desc: "A page.", lang: "en",
		},
		{
			name: "scripts and styles removed",
			body: `<head><style>p{color:red}</style><script>alert("x")</script></head>` +
				`<body>before<script>document.write("<p>no</p>")</script>after<noscript>enable js</noscript>` +
				`<style>.a{}</style><template><p>template</p></template><iframe>frame</iframe> end</body>`,
			text: "beforeafter end",
		},
		{
			name: "whitespace collapsed",
			body: "<body>\n\t  lots\u00a0\u00a0 of \r\n\n  space\u2003here  \f</body>",
			text: "lots of space here",
		},
		{
			name: "blocks separate words, inline elements do not",
			body: `<p>one</p><p>two</p><div>three<br>four</div><ul><li>five</li><li>six</li></ul><table><tr><td>a</td><td>b</td></tr></table>x<b>y</b>z<span>w</span>`,
			text: "one two three four five six a b xyzw",
		},
		{
			name:  "entities decoded",
			body:  `<title>Fish &amp; Chips &lt;3</title><p>caf&eacute; &#x263A; &nbsp;x</p>`,
			title: "Fish & Chips <3", text: "café ☺ x",
		},
		{
			name:  "title whitespace collapsed, first title wins, svg title ignored",
			body:  "<svg><title>icon</title><desc>an icon</desc><text>drawn</text></svg><title>\n  Real\n  Title </title><title>Second</title><p>body</p>",
			title: "Real Title", text: "drawn body",
		},
		{
			name: "svg left open ends at an html block",
			body: `<svg><desc>hidden</desc><p>shown</p>`,
			text: "shown",
		},
		{
			name: "lang from content-language",
			body: `<meta http-equiv="Content-Language" content="de-DE, en"><p>Hallo</p>`,
			text: "Hallo", lang: "de-de",
		},
		{
			name: "html lang beats content-language",
			body: `<html lang="EN_us"><meta http-equiv="content-language" content="fr"><p>x</p>`,
			text: "x", lang: "en-us",
		},
		{
			name: "bogus lang ignored",
			body: `<html lang="{{lang}}"><p>x</p>`,
			text: "x",
		},
		{
			name: "description case-insensitive name, first wins",
			body: `<meta NAME="Description" content=" first
			   one "><meta name="description" content="second">`,
			desc: "first one",
		},
		{
			name: "textarea and pre shown",
			body: `<textarea>typed &amp; text</textarea><pre>  code
  block</pre>`,
			text: "typed & text code block",
		},
		{
			name:  "head text is hidden, stray text after head shown",
			body:  `<head><title>T</title>  </head>visible`,
			title: "T", text: "visible",
		},
		{
			name: "empty",
			body: ``,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustHTML(t, tc.body)
			if p.Title != tc.title {
				t.Errorf("Title = %q, want %q", p.Title, tc.title)
			}
			if p.Text != tc.text {
				t.Errorf("Text = %q, want %q", p.Text, tc.text)
			}
			if p.Description != tc.desc {
				t.Errorf("Description = %q, want %q", p.Description, tc.desc)
			}
			if p.Lang != tc.lang {
				t.Errorf("Lang = %q, want %q", p.Lang, tc.lang)
			}
		})
	}
}

func TestHash(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"markup only", `<p>Hello <b>world</b></p>`, `<div>Hello <i>world</i></div>`, true},
		{"whitespace only", "<p>Hello   world</p>", "<p>\n Hello\n\tworld \n</p>", true},
		{"case only", `<p>Hello World</p>`, `<p>HELLO world</p>`, true},
		{"scripts and head ignored", `<title>A</title><script>1</script><p>same</p>`, `<title>B</title><script>2</script><p>same</p>`, true},
		{"different word", `<p>Hello world</p>`, `<p>Hello word</p>`, false},
		{"word boundary", `<p>Hello</p><p>world</p>`, `<p>Helloworld</p>`, false},
		{"extra text", `<p>Hello world</p>`, `<p>Hello world!</p>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mustHTML(t, tc.a), mustHTML(t, tc.b)
			if (a.Hash == b.Hash) != tc.equal {
				t.Errorf("Hash equal = %v, want %v (texts %q, %q)", a.Hash == b.Hash, tc.equal, a.Text, b.Text)
			}
		})
	}
	t.Run("fixtures", func(t *testing.T) {
		a, err := HTML(testURL, fixture(t, "dup-a.html"), "text/html", Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := HTML("https://mirror.example.org/widgets", fixture(t, "dup-b.html"), "text/html", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Hash != b.Hash {
			t.Errorf("duplicates hash apart:\n%q\n%q", a.Text, b.Text)
		}
	})
	t.Run("is sha-256 of lower-cased text", func(t *testing.T) {
		p := mustHTML(t, `<p>Grüße   AUS <b>Köln</b></p><p>ΣΊΣΥΦΟΣ</p>`)
		sum := sha256.Sum256([]byte(strings.ToLower(p.Text)))
		if want := hex.EncodeToString(sum[:]); p.Hash != want {
			t.Errorf("Hash = %s, want %s for %q", p.Hash, want, strings.ToLower(p.Text))
		}
	})
	t.Run("covers text past MaxTextBytes", func(t *testing.T) {
		opt := Options{MaxTextBytes: 100}
		long := strings.Repeat("same words ", 100)
		a, _ := HTML(testURL, []byte("<p>"+long+"ending one"), "text/html", opt)
		b, _ := HTML(testURL, []byte("<p>"+long+"ending two"), "text/html", opt)
		c, _ := HTML(testURL, []byte("<div>"+strings.ToUpper(long)+"</div>ending\nONE"), "text/html", opt)
		if a.Text != b.Text || a.Hash == b.Hash {
			t.Errorf("texts equal %v, hashes equal %v; want true, false", a.Text == b.Text, a.Hash == b.Hash)
		}
		if a.Hash != c.Hash {
			t.Errorf("hash differs for a page that differs only in case and markup")
		}
	})
	t.Run("empty text", func(t *testing.T) {
		if p := mustHTML(t, `<title>only a title</title><script>x</script>`); p.Hash != "" {
			t.Errorf("Hash = %q for empty text", p.Hash)
		}
	})
}

func TestLinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want []Link
	}{
		{
			name: "relative, absolute, protocol-relative",
			body: `<a href="other.html">Other</a> <a href="/root">Root</a> <a href="../up/x?b=1&amp;a=2">Up</a>` +
				`<a href="HTTP://Example.COM:80/Abs#frag">Abs</a> <a href="//cdn.example.net/lib">Proto</a>`,
			want: []Link{
				{"http://example.com/dir/other.html", "Other"},
				{"http://example.com/root", "Root"},
				{"http://example.com/up/x?b=1&a=2", "Up"},
				{"http://example.com/Abs", "Abs"},
				{"http://cdn.example.net/lib", "Proto"},
			},
		},
		{
			name: "base href applies to all links, even earlier ones",
			body: `<a href="a.html">A</a><base href="https://other.example/sub/"><a href="b.html">B</a><base href="/ignored/">`,
			want: []Link{
				{"https://other.example/sub/a.html", "A"},
				{"https://other.example/sub/b.html", "B"},
			},
		},
		{
			name: "relative base",
			body: `<base href="/docs/"><a href="x">X</a>`,
			want: []Link{{"http://example.com/docs/x", "X"}},
		},
		{
			name: "unusable base ignored",
			body: `<base href="javascript:void(0)"><a href="x">X</a>`,
			want: []Link{{"http://example.com/dir/x", "X"}},
		},
		{
			name: "non-http schemes and self links skipped",
			body: `<a href="mailto:a@example.com">mail</a><a href="javascript:void(0)">js</a><a href="tel:123">tel</a>` +
				`<a href="ftp://example.com/f">ftp</a><a href="data:text/html,hi">data</a><a href="#top">top</a>` +
				`<a href="">empty</a><a href="page.html#x">self</a><a>no href</a><a href="http://">no host</a><a href="https://ok.example/">ok</a>`,
			want: []Link{{"https://ok.example/", "ok"}},
		},
		{
			name: "rel nofollow, ugc, sponsored skipped",
			body: `<a href="/a" rel="nofollow">a</a><a href="/b" rel="noopener UGC">b</a><a href="/c" rel="sponsored">c</a><a href="/d" rel="noopener">d</a>`,
			want: []Link{{"http://example.com/d", "d"}},
		},
		{
			name: "dedupe joins distinct anchors in order",
			body: `<a href="/t">First</a><a href="/other">O</a><a href="/t#x">Second</a><a href="http://example.com/t">First</a><a href="/t"><img src=i></a><a href="/t">Third</a>`,
			want: []Link{
				{"http://example.com/t", "First | Second | Third"},
				{"http://example.com/other", "O"},
			},
		},
		{
			name: "anchor from text, else img alt, else title",
			body: `<a href="/1" title="T1"> Some <b>bold</b>
			text </a><a href="/2" title="T2"><img src="x.png" alt=" Logo  alt "></a><a href="/3" title=" Title  only "><img src="y.png"></a><a href="/4"></a>`,
			want: []Link{
				{"http://example.com/1", "Some bold text"},
				{"http://example.com/2", "Logo alt"},
				{"http://example.com/3", "Title only"},
				{"http://example.com/4", ""},
			},
		},
		{
			name: "area",
			body: `<map><area href="/region" alt="Region"><area href="/t" title="Titled"><area href="/nf" rel="nofollow" alt="x"><area alt="nohref"></map>`,
			want: []Link{{"http://example.com/region", "Region"}, {"http://example.com/t", "Titled"}},
		},
		{
			name: "an a start closes an open a",
			body: `<a href="/1">one<a href="/2">two</a>`,
			want: []Link{{"http://example.com/1", "one"}, {"http://example.com/2", "two"}},
		},
		{
			name: "tabs and newlines in href removed, spaces trimmed",
			body: "<a href=\"  /pa\tth\n/x  \">x</a>",
			want: []Link{{"http://example.com/path/x", "x"}},
		},
		{
			name: "links in template ignored",
			body: `<template><a href="/tpl">t</a></template><a href="/real">r</a>`,
			want: []Link{{"http://example.com/real", "r"}},
		},
		{
			name: "escapes normalized like the crawler",
			body: `<a href="/%7euser/a%2fb/./c/../d?q=%e2%82%ac">x</a><a href="/a/%2E%2E/b">dots</a>`,
			want: []Link{{"http://example.com/~user/a%2Fb/d?q=%E2%82%AC", "x"}, {"http://example.com/b", "dots"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustHTML(t, tc.body)
			if !slices.Equal(p.Links, tc.want) {
				t.Errorf("Links =\n%q\nwant\n%q", p.Links, tc.want)
			}
		})
	}
	t.Run("long anchor cut to 200 runes", func(t *testing.T) {
		p := mustHTML(t, `<a href="/x">`+strings.Repeat("é", 500)+`</a>`)
		if len(p.Links) != 1 || p.Links[0].Anchor != strings.Repeat("é", 199)+Ellipsis {
			t.Errorf("Links = %q", p.Links)
		}
	})
	t.Run("at most 10 anchors per target", func(t *testing.T) {
		var b strings.Builder
		for i := range 20 {
			b.WriteString(`<a href="/x">anchor ` + strings.Repeat("i", i+1) + `</a>`)
		}
		p := mustHTML(t, b.String())
		if len(p.Links) != 1 || strings.Count(p.Links[0].Anchor, anchorSep) != maxAnchors-1 {
			t.Errorf("Links = %q", p.Links)
		}
	})
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"absolute", `<link rel="canonical" href="HTTPS://Example.com:443/Canon?x=1#f">`, "https://example.com/Canon?x=1"},
		{"relative", `<link rel="canonical" href="../canon">`, "http://example.com/canon"},
		{"against base", `<base href="http://b.example/x/"><link rel="canonical" href="c">`, "http://b.example/x/c"},
		{"rel with other tokens", `<link rel="Canonical alternate" href="/c">`, "http://example.com/c"},
		{"first wins", `<link rel="canonical" href="/first"><link rel="canonical" href="/second">`, "http://example.com/first"},
		{"not http", `<link rel="canonical" href="mailto:x@y">`, ""},
		{"other rel", `<link rel="stylesheet" href="/s.css">`, ""},
		{"none", `<p>x</p>`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustHTML(t, tc.body).Canonical; got != tc.want {
				t.Errorf("Canonical = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRobots(t *testing.T) {
	const links = `<a href="/a">a</a>`
	for _, tc := range []struct {
		name              string
		body, xrobots     string
		noindex, nofollow bool
	}{
		{"none", `<p>x</p>`, "", false, false},
		{"noindex", `<meta name="robots" content="noindex">`, "", true, false},
		{"nofollow", `<meta name="ROBOTS" content="NoFollow">`, "", false, true},
		{"both", `<meta name="robots" content="noindex, nofollow">`, "", true, true},
		{"space separated", `<meta name="robots" content="noindex nofollow">`, "", true, true},
		{"none directive", `<meta name="robots" content="none">`, "", true, true},
		{"index follow", `<meta name="robots" content="index, follow">`, "", false, false},
		{"other meta", `<meta name="googlebot-news" content="noindex">`, "", false, false},
		{"other bot", `<meta name="googlebot" content="noindex, nofollow">`, "", false, false},
		{"our bot", `<meta name="caffeine-crawler" content="nofollow">`, "", false, true},
		{"our bot any case", `<meta name=" Caffeine-Crawler " content="noindex">`, "", true, false},
		{"our bot none", `<meta name="caffeine-crawler" content="none">`, "", true, true},
		{"prefix of our token", `<meta name="caffeine" content="nofollow">`, "", false, false},
		{"x-robots our bot", ``, "caffeine-crawler: nofollow", false, true},
		{"x-robots our bot then other", ``, "Caffeine-Crawler: noindex, otherbot: nofollow", true, false},
		{"meta in body", `<body><p>x</p><meta name="robots" content="nofollow">`, "", false, true},
		{"x-robots noindex", ``, "noindex", true, false},
		{"x-robots none", ``, "None", true, true},
		{"x-robots list", ``, "noarchive, nofollow, unavailable_after: 25 Jun 2010 15:00:00 PST", false, true},
		{"x-robots other bot", ``, "otherbot: noindex, nofollow", false, false},
		{"x-robots all bots", ``, "*: noindex", true, false},
		{"x-robots meta combined", `<meta name="robots" content="nofollow">`, "noindex", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := HTML(testURL, []byte(tc.body+links), "text/html", Options{XRobotsTag: tc.xrobots})
			if err != nil {
				t.Fatal(err)
			}
			checkPage(t, p, DefaultMaxTextBytes)
			if p.NoIndex != tc.noindex || p.NoFollow != tc.nofollow {
				t.Errorf("NoIndex, NoFollow = %v, %v; want %v, %v", p.NoIndex, p.NoFollow, tc.noindex, tc.nofollow)
			}
			if wantLinks := !tc.nofollow; (len(p.Links) > 0) != wantLinks {
				t.Errorf("Links = %q", p.Links)
			}
		})
	}
}

func TestCharset(t *testing.T) {
	for _, tc := range []struct {
		name, file, contentType string
		charset, title, text    string
	}{
		{"content-type iso-8859-1", "latin1.html", "text/html; charset=ISO-8859-1", "windows-1252", "Café crème", "Über naïve façade - 50 EUR"},
		{"meta charset", "meta-charset.html", "text/html", "windows-1252", "Résumé", "Señor Müller's café"},
		{"http-equiv windows-1252", "windows-1252.html", "text/html", "windows-1252", "“Quotes” €5", "ok"},
		{"utf-8 bom beats meta", "bom-utf8.html", "text/html", "utf-8", "日本語のページ", "こんにちは 世界"},
		{"utf-8 bom beats content-type", "bom-utf8.html", "text/html; charset=iso-8859-1", "utf-8", "日本語のページ", "こんにちは 世界"},
		{"utf-16le bom", "bom-utf16le.html", "text/html", "utf-16le", "Grüße", "Ελληνικά κείμενο x"},
		{"shift_jis meta", "shift_jis.html", "text/html", "shift_jis", "東京", "日本語"},
		{"undeclared utf-8", "dup-a.html", "text/html", "utf-8", "Widgets", "Our widgets are the best widgets. Red widget Blue widget"}, // the nav block left out
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := HTML(testURL, fixture(t, tc.file), tc.contentType, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkPage(t, p, DefaultMaxTextBytes)
			if p.Charset != tc.charset || p.Title != tc.title || p.Text != tc.text {
				t.Errorf("Charset, Title, Text = %q, %q, %q\nwant %q, %q, %q", p.Charset, p.Title, p.Text, tc.charset, tc.title, tc.text)
			}
		})
	}
	t.Run("undeclared utf-8 past the first KiB", func(t *testing.T) {
		body := "<p>" + strings.Repeat("a", 2000) + " naïve</p>"
		p, err := HTML(testURL, []byte(body), "text/html", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Charset != "utf-8" || !strings.HasSuffix(p.Text, " naïve") {
			t.Errorf("Charset %q, Text ends %q", p.Charset, p.Text[len(p.Text)-10:])
		}
	})
}

func TestInvalidUTF8(t *testing.T) {
	p, err := HTML(testURL, fixture(t, "invalid-utf8.html"), "text/html; charset=utf-8", Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, DefaultMaxTextBytes)
	if !strings.Contains(p.Title, "Bad \uFFFD") || !strings.Contains(p.Text, "caf\uFFFD") || !strings.Contains(p.Description, "desc \uFFFD") {
		t.Errorf("replacement characters missing: %q / %q / %q", p.Title, p.Text, p.Description)
	}
	if len(p.Links) != 1 {
		t.Fatalf("Links = %q", p.Links)
	}
	if p.Lang != "en" {
		t.Errorf("Lang = %q", p.Lang)
	}
	t.Logf("link: %q", p.Links[0])
}

func TestMalformed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		text  string
		links []string
	}{
		{
			name:  "fixture",
			body:  string(fixture(t, "malformed.html")),
			text:  "first paragraph second bold both italic paragraph cell one cell two link one link two unclosed three",
			links: []string{"http://example.com/one", "http://example.com/two", "http://example.com/three"},
		},
		{name: "unclosed comment", body: `<p>before<!-- never closed <a href="/x">x</a>`, text: "before"},
		{name: "unclosed script", body: `<p>before<script>var a = "<a href='/x'>";`, text: "before"},
		{name: "unclosed attribute", body: `<p>text<a href="/x`, text: "text"},
		{name: "unclosed title", body: `<title>runaway <p>all of it`, text: ""},
		{name: "stray end tags", body: `</p></html></body></a></script>text</td></tr>`, text: "text"},
		{name: "nul bytes", body: "<title>nul</title><p>a\x00b</p><p>c\x00</p>", text: "a b c"},
		{name: "lone brackets", body: `a < b > c <<<>>> d </>`, text: "a < b > c <<<>>> d"},
		{
			name:  "deep nesting",
			body:  strings.Repeat("<div><span>", 50000) + "deep<a href='/deep'>link</a>" + strings.Repeat("</span></div>", 10),
			text:  "deeplink",
			links: []string{"http://example.com/deep"},
		},
		{
			name:  "deep unclosed anchors and formatting",
			body:  strings.Repeat(`<a href="/a"><b><i><font>x`, 5000),
			text:  strings.TrimSpace(strings.Repeat("x", 5000)),
			links: []string{"http://example.com/a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustHTML(t, tc.body)
			if p.Text != tc.text {
				t.Errorf("Text = %q, want %q", p.Text, tc.text)
			}
			if got := linkURLs(p.Links); !slices.Equal(got, tc.links) {
				t.Errorf("Links = %q, want %q", got, tc.links)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	for _, tc := range []struct {
		name, url, contentType string
		body                   []byte
		want                   error
	}{
		{"relative page URL", "/dir/page.html", "text/html", []byte("<p>x"), ErrBadURL},
		{"ftp page URL", "ftp://example.com/x", "text/html", []byte("<p>x"), ErrBadURL},
		{"garbage page URL", "http://exa mple.com/%zz", "text/html", []byte("<p>x"), ErrBadURL},
		{"png declared", testURL, "image/png", png, ErrNotHTML},
		{"png as text/html", testURL, "text/html", png, ErrNotHTML},
		{"png undeclared", testURL, "", png, ErrNotHTML},
		{"json", testURL, "application/json", []byte(`{"a":1}`), ErrNotHTML},
		{"plain text", testURL, "text/plain", []byte("<p>not html by declaration"), ErrNotHTML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := HTML(tc.url, tc.body, tc.contentType, Options{})
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if p.Text != "" || p.Links != nil {
				t.Errorf("Page not empty on error: %+v", p)
			}
		})
	}
}

func TestIsHTML(t *testing.T) {
	gz := []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\x07\x00")
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*7919 + i*i*31)
	}
	for _, tc := range []struct {
		name, contentType string
		body              []byte
		want              bool
	}{
		{"text/html", "text/html", []byte("<p>x"), true},
		{"text/html with params", "Text/HTML ; charset=utf-8", []byte("hello"), true},
		{"xhtml", "application/xhtml+xml", []byte(`<?xml version="1.0"?><html/>`), true},
		{"empty html", "text/html", nil, true},
		{"malformed content-type param", "text/html; charset", []byte("<p>x"), true},
		{"iso-2022-jp with escapes", "text/html", []byte("<p>\x1b$B$3$s$K$A$O\x1b(B</p>"), true},
		{"utf-16 declared", "text/html; charset=UTF-16LE", []byte("<\x00p\x00>\x00"), true},
		{"sniffed missing", "", []byte("  <!DOCTYPE html><html>"), true},
		{"sniffed octet-stream", "application/octet-stream", []byte("<html><body>x"), true},
		{"sniffed with bom", "", []byte("\xef\xbb\xbf<html>"), true},
		{"sniffed garbage type", "html", []byte("<html>"), true},
		{"sniffed not html", "", []byte("just some text"), false},
		{"gzip as html", "text/html", gz, false},
		{"random bytes as html", "text/html", random, false},
		{"random bytes undeclared", "", random, false},
		{"pdf", "application/pdf", []byte("%PDF-1.4"), false},
		{"pdf as html", "text/html", []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3"), false},
		{"css", "text/css", []byte("<html>"), false},
		{"xml", "application/xml", []byte("<html>"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsHTML(tc.contentType, tc.body); got != tc.want {
				t.Errorf("IsHTML(%q, %.20q) = %v, want %v", tc.contentType, tc.body, got, tc.want)
			}
		})
	}
}

func TestMaxTextBytes(t *testing.T) {
	body := "<p>" + strings.Repeat("ab€ ", 1000) + "</p>"
	for _, tc := range []struct {
		name  string
		max   int
		wantN int // len(Text) at most
	}{
		{"cut mid rune", 10, 10},
		{"cut at space", 7, 7},
		{"unlimited", -1, 5999},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := HTML(testURL, []byte(body), "text/html", Options{MaxTextBytes: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			checkPage(t, p, tc.max)
			if len(p.Text) > tc.wantN || len(p.Text) < tc.wantN-3 {
				t.Errorf("len(Text) = %d, want about %d: %q", len(p.Text), tc.wantN, p.Text[:min(len(p.Text), 40)])
			}
		})
	}
}

// TestHuge: a 10 MB page is extracted in well under a second, Text capped.
func TestHuge(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><head><title>Huge</title></head><body>")
	for i := 0; b.Len() < 10<<20; i++ {
		b.WriteString(`<div class="row"><p>Paragraph number `)
		b.WriteString(strings.Repeat("word ", 20))
		if i%10 == 0 {
			b.WriteString(`<a href="/page/` + string(rune('a'+i/10%26)) + `">link</a>`)
		}
		b.WriteString("</p></div>\n")
	}
	b.WriteString("<a href='/last'>last</a></body></html>")
	body := []byte(b.String())

	start := time.Now()
	p, err := HTML(testURL, body, "text/html", Options{})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, DefaultMaxTextBytes)
	if p.Title != "Huge" || len(p.Text) < DefaultMaxTextBytes-100 || len(p.Links) != 27 {
		t.Errorf("Title %q, len(Text) %d, %d links", p.Title, len(p.Text), len(p.Links))
	}
	t.Logf("%d bytes in %v", len(body), elapsed)
	if limit := time.Second; !raceEnabled && elapsed > limit {
		t.Errorf("took %v, want under %v", elapsed, limit)
	}
}
