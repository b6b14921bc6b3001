package observers_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestParseLimits: a page with a 1 MB title, description and anchor text
// leaves the table and the exported documents their cut, marked values.
func TestParseLimits(t *testing.T) {
	e := newEnv(t)
	const h = "http://huge.test"
	huge := strings.Repeat("huge ", 200_000)
	e.fetch(h+"/", 200, `<title>`+huge+`</title><meta name=description content="`+huge+`"><p>text</p><a href="/b">`+huge+`</a>`)
	e.fetch(h+"/b", 200, page("B", "the target"))
	e.idle()
	for _, c := range []struct {
		col   string
		limit int
	}{{webtable.Title, extract.MaxTitleBytes}, {webtable.Description, extract.MaxDescriptionBytes}} {
		v := e.get(h+"/", c.col)
		if len(v) > c.limit || !strings.HasSuffix(v, extract.Ellipsis) || !strings.HasPrefix(huge, strings.TrimSuffix(v, extract.Ellipsis)) {
			t.Errorf("%s: %d bytes ending %q, want at most %d ending %q", c.col, len(v), v[max(0, len(v)-8):], c.limit, extract.Ellipsis)
		}
	}
	if links := e.get(h+"/", webtable.Links); len(links) > 2*extract.MaxAnchorRunes*utf8.UTFMax {
		t.Errorf("links cell of %d bytes", len(links))
	}
	idx := e.index()
	d := idx[h+"/b"]
	if d == nil || len(d.Anchors) != 1 {
		t.Fatalf("the target's document: %+v", d)
	}
	if a := d.Anchors[0].Text; utf8.RuneCountInString(a) > extract.MaxAnchorRunes || !strings.HasSuffix(a, extract.Ellipsis) {
		t.Errorf("anchor of %d runes ending %q", utf8.RuneCountInString(a), a[max(0, len(a)-8):])
	}
	if d := idx[h+"/"]; d == nil || len(d.Title) > extract.MaxTitleBytes {
		t.Errorf("the page's document: %+v", d)
	}
}
