package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// TestSections: the headings a link can point to, with the fragment each
// generator gives them, at their place in the text.
func TestSections(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // "id|heading"
	}{
		{"own id (asciidoc, Qt, SQLite)",
			`<h1>Page</h1><p>intro</p><h2 id="_synopsis">SYNOPSIS</h2><p>a</p><h3 id="x">Sub <code>y</code></h3><p>b</p>`,
			[]string{"_synopsis|SYNOPSIS", "x|Sub y"}},
		{"a section's div id (DocBook)",
			`<div class="sect1" id="ROUTINE-VACUUMING"><div class="titlepage"><div><div><h2 class="title">25.1. Routine Vacuuming</h2></div></div></div><p>text</p></div>`,
			[]string{"ROUTINE-VACUUMING|25.1. Routine Vacuuming"}},
		{"an anchor inside (Publican, Doxygen)",
			`<p>intro</p><h2 class="title"><a xmlns="" id="sect.apt-get"></a>6.2. apt-get</h2><p>a</p><h3><a name="toc">Contents</a></h3><p>b</p>`,
			[]string{"sect.apt-get|6.2. apt-get", "toc|Contents"}},
		{"an empty anchor before",
			`<p>intro</p><a id="notes"></a><h2>Notes</h2><p>a</p>`,
			[]string{"notes|Notes"}},
		{"an id with text between is not the heading's",
			`<div id="sidebar"><p>menu text</p></div><h2>Alone</h2><p>a</p><div id="empty"></div><h2>Also alone</h2><p>b</p>`,
			nil},
		{"headings in navigation are left out with it",
			`<nav><h2 id="nav">Navigation</h2><a href="/a">a</a> <a href="/b">b</a></nav><p>text</p><h2 id="real">Real</h2><p>c</p>`,
			[]string{"real|Real"}},
		{"an id with a space is no fragment",
			`<p>x</p><h2 id="a b">Spaced</h2><p>y</p>`,
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := HTML("http://example.com/", []byte("<html><body>"+tc.body+"</body></html>"), "text/html", Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range p.Sections {
				got = append(got, s.ID+"|"+s.Heading)
				checkSectionAt(t, p.Text, s)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("sections %q, want %q (text %q)", got, tc.want, p.Text)
			}
		})
	}
}

// checkSectionAt checks that s's heading is where At says in text.
func checkSectionAt(t *testing.T, text string, s webtable.Section) {
	t.Helper()
	if s.At < 0 || s.At > len(text) || !strings.HasPrefix(strings.TrimLeft(text[s.At:], " "), strings.TrimSuffix(s.Heading, Ellipsis)) {
		t.Errorf("section %q at %d: the text there is %q", s.Heading, s.At, text[min(max(s.At, 0), len(text)):min(max(s.At, 0)+40, len(text))])
	}
}

// TestSectionsLimits: at most MaxSections, headings cut at
// MaxSectionHeadingBytes, none past the text's limit.
func TestSectionsLimits(t *testing.T) {
	var b strings.Builder
	for i := range MaxSections + 10 {
		fmt.Fprintf(&b, `<h3 id="s%d">Section %d %s</h3><p>words of section %d</p>`, i, i, strings.Repeat("long ", i%2*100), i)
	}
	p, err := HTML("http://example.com/", []byte(b.String()), "text/html", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sections) != MaxSections {
		t.Fatalf("%d sections, want %d", len(p.Sections), MaxSections)
	}
	for _, s := range p.Sections {
		if len(s.Heading) > MaxSectionHeadingBytes {
			t.Fatalf("heading of %d bytes: %q", len(s.Heading), s.Heading)
		}
		checkSectionAt(t, p.Text, s)
	}
	if h := p.Sections[1].Heading; !strings.HasSuffix(h, Ellipsis) {
		t.Errorf("a long heading is not marked cut: %q", h)
	}
	short, err := HTML("http://example.com/", []byte(b.String()), "text/html", Options{MaxTextBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range short.Sections {
		if s.At >= len(short.Text) {
			t.Fatalf("section %q at %d, past the %d bytes of text", s.Heading, s.At, len(short.Text))
		}
	}
}
