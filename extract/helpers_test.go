package extract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/caffeine-go/caffeine/webtable"
)

const testURL = "http://example.com/dir/page.html"

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustHTML runs HTML on a UTF-8 page at testURL and checks its invariants.
func mustHTML(t testing.TB, body string) Page {
	t.Helper()
	p, err := HTML(testURL, []byte(body), "text/html; charset=utf-8", Options{})
	if err != nil {
		t.Fatalf("HTML: %v", err)
	}
	checkPage(t, p, DefaultMaxTextBytes)
	return p
}

// checkPage checks what must hold for every Page HTML returns, whatever
// the input.
func checkPage(t testing.TB, p Page, maxText int) {
	t.Helper()
	for name, s := range map[string]string{
		"Title": p.Title, "Text": p.Text, "Description": p.Description, "Lang": p.Lang,
		"Canonical": p.Canonical, "Hash": p.Hash, "Charset": p.Charset,
	} {
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8: %q", name, s)
		}
	}
	for _, s := range []string{p.Title, p.Text, p.Description} {
		if s != strings.TrimSpace(s) || strings.Contains(s, "  ") {
			t.Errorf("whitespace not collapsed: %q", s)
		}
	}
	if maxText > 0 && len(p.Text) > maxText {
		t.Errorf("len(Text) = %d > %d", len(p.Text), maxText)
	}
	if len(p.Title) > MaxTitleBytes || len(p.Description) > MaxDescriptionBytes || len(p.Links) > MaxLinks || len(p.Canonical) > MaxURLBytes {
		t.Errorf("Title of %d bytes, Description of %d, %d links, Canonical of %d: past the limits", len(p.Title), len(p.Description), len(p.Links), len(p.Canonical))
	}
	if p.Hash == "" && p.Text != "" {
		t.Errorf("no Hash for Text %q", p.Text) // boilerplate only: a Hash and no Text
	}
	if p.LinkDensity < 0 || p.LinkDensity > 1 || p.Hash == "" && p.LinkDensity != 0 {
		t.Errorf("LinkDensity %g (Hash %q)", p.LinkDensity, p.Hash)
	}
	if p.TitleCore != "" && (len(p.TitleCore) >= len(p.Title) || !strings.Contains(strings.ToLower(p.Title), strings.ToLower(p.TitleCore))) {
		t.Errorf("TitleCore %q of Title %q", p.TitleCore, p.Title)
	}
	if len(p.Sections) > MaxSections {
		t.Errorf("%d sections, past MaxSections", len(p.Sections))
	}
	for i, sec := range p.Sections {
		if sec.ID == "" || sec.Heading == "" || !utf8.ValidString(sec.ID) || !utf8.ValidString(sec.Heading) || len(sec.Heading) > MaxSectionHeadingBytes ||
			sec.At < 0 || sec.At >= len(p.Text) || i > 0 && sec.At < p.Sections[i-1].At {
			t.Errorf("section %d of %d: %+v (text of %d bytes)", i, len(p.Sections), sec, len(p.Text))
		}
	}
	if p.NoFollow && len(p.Links) > 0 {
		t.Errorf("NoFollow page has %d links", len(p.Links))
	}
	if p.Canonical != "" {
		checkNormal(t, p.Canonical)
	}
	seen := make(map[string]bool)
	for _, l := range p.Links {
		checkNormal(t, l.URL)
		if len(l.URL) > MaxURLBytes {
			t.Errorf("link URL of %d bytes > MaxURLBytes", len(l.URL))
		}
		if seen[l.URL] {
			t.Errorf("duplicate link %q", l.URL)
		}
		seen[l.URL] = true
		if !utf8.ValidString(l.Anchor) {
			t.Errorf("anchor of %q is not valid UTF-8: %q", l.URL, l.Anchor)
		}
		parts := strings.Split(l.Anchor, anchorSep)
		if len(parts) > maxAnchors {
			t.Errorf("%d anchors for %q", len(parts), l.URL)
		}
		for _, a := range parts {
			if utf8.RuneCountInString(a) > maxAnchorRunes {
				t.Errorf("anchor of %d runes for %q", utf8.RuneCountInString(a), l.URL)
			}
		}
	}
}

func checkNormal(t testing.TB, u string) {
	t.Helper()
	if !utf8.ValidString(u) {
		t.Errorf("URL is not valid UTF-8: %q", u)
	}
	n, err := webtable.Normalize(u)
	if err != nil || n != u {
		t.Errorf("Normalize(%q) = %q, %v; want it unchanged", u, n, err)
	}
}

func linkURLs(ls []Link) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.URL)
	}
	return out
}
