package extract

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkCut checks that got is want, or want cut within limit bytes at a
// rune boundary and marked.
func checkCut(t *testing.T, what, got, want string, limit int) {
	t.Helper()
	if !utf8.ValidString(got) {
		t.Errorf("%s is not valid UTF-8", what)
	}
	if len(want) <= limit {
		if got != want {
			t.Errorf("%s = %.40q…, want it whole (%d bytes, limit %d)", what, got, len(want), limit)
		}
		return
	}
	body, ok := strings.CutSuffix(got, Ellipsis)
	if !ok || len(got) > limit || len(got) < limit-utf8.UTFMax-len(Ellipsis) || !strings.HasPrefix(want, body) {
		t.Errorf("%s: %d bytes ending %q; want %d bytes cut within %d and marked %q", what, len(got), got[max(0, len(got)-12):], len(want), limit, Ellipsis)
	}
}

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
	}{
		{"1 MB ascii", strings.Repeat("abcdefghi ", 100_000)},
		{"1 MB of 3-byte runes", strings.Repeat("€", 350_000)},
		{"4-byte runes", strings.Repeat("😀", 3000)},
		{"at the title limit", strings.Repeat("a", MaxTitleBytes)},
		{"one past the title limit", strings.Repeat("a", MaxTitleBytes+1)},
		{"at the description limit", strings.Repeat("a", MaxDescriptionBytes)},
		{"short", "a title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`<html><head><title>%s</title><meta name=description content="%s"></head><body><p>text</p></body></html>`, tc.text, tc.text)
			p := mustHTML(t, body)
			checkPage(t, p, DefaultMaxTextBytes)
			checkCut(t, "Title", p.Title, tc.text, MaxTitleBytes)
			checkCut(t, "Description", p.Description, tc.text, MaxDescriptionBytes)
		})
	}
}

func TestAnchorLimits(t *testing.T) {
	long := strings.Repeat("word ", 200_000)
	p := mustHTML(t, `<a href="/text">`+long+`</a>`+
		`<a href="/alt"><img alt="`+long+`"></a>`+
		`<a href="/title" title="`+long+`"></a>`+
		`<map><area href="/area" alt="`+long+`"></map>`+
		`<a href="/exact">`+strings.Repeat("é", MaxAnchorRunes)+`</a>`)
	if len(p.Links) != 5 {
		t.Fatalf("%d links, want 5: %q", len(p.Links), linkURLs(p.Links))
	}
	for _, l := range p.Links[:4] {
		if !strings.HasSuffix(l.Anchor, Ellipsis) || utf8.RuneCountInString(l.Anchor) != MaxAnchorRunes || !strings.HasPrefix(long, strings.TrimSuffix(l.Anchor, Ellipsis)) {
			t.Errorf("%s: anchor of %d runes ending %q, want %d ending %q", l.URL, utf8.RuneCountInString(l.Anchor), l.Anchor[len(l.Anchor)-8:], MaxAnchorRunes, Ellipsis)
		}
	}
	if a := p.Links[4].Anchor; a != strings.Repeat("é", MaxAnchorRunes) {
		t.Errorf("an anchor at the limit: %d runes %.12q…, want it whole", utf8.RuneCountInString(a), a)
	}
}

func TestLinkLimits(t *testing.T) {
	t.Run("many links", func(t *testing.T) {
		var b strings.Builder
		for i := range MaxLinks + 5000 {
			fmt.Fprintf(&b, `<a href="/p%d">%d</a>`, i, i)
		}
		p := mustHTML(t, b.String())
		if len(p.Links) != MaxLinks {
			t.Fatalf("%d links, want MaxLinks (%d)", len(p.Links), MaxLinks)
		}
		if first, last := p.Links[0], p.Links[MaxLinks-1]; first.URL != "http://example.com/p0" || last.URL != fmt.Sprintf("http://example.com/p%d", MaxLinks-1) {
			t.Errorf("links %q .. %q, want the first in document order", first.URL, last.URL)
		}
	})
	t.Run("one link repeated", func(t *testing.T) {
		p := mustHTML(t, strings.Repeat(`<a href="/same">same</a><a href="/other">`, 100_000))
		if got := linkURLs(p.Links); len(got) != 2 {
			t.Errorf("links %q, want /same and /other", got)
		}
	})
	t.Run("long URLs", func(t *testing.T) {
		keep := "/" + strings.Repeat("k", MaxURLBytes-len("http://example.com/"))
		drop := keep + "x"
		p := mustHTML(t, `<link rel=canonical href="`+drop+`"><a href="`+keep+`">keep</a><a href="`+drop+`">drop</a><a href="/`+strings.Repeat("y", 1<<20)+`">huge</a>`)
		if got := linkURLs(p.Links); len(got) != 1 || len(got[0]) != MaxURLBytes {
			t.Errorf("links of %d bytes, want the one of MaxURLBytes (%d)", len(strings.Join(got, "")), MaxURLBytes)
		}
		if p.Canonical != "" {
			t.Errorf("Canonical of %d bytes kept, past MaxURLBytes", len(p.Canonical))
		}
	})
}
