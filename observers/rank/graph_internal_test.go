package rank

import (
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// decodeStanding reads what decodeGraph reads of a cell's state and alias.
func TestDecodeStanding(t *testing.T) {
	const key = "com.example:http/docs"
	cells := []graphCell{
		{state: webtable.StateOK},
		{state: webtable.StateOK, targets: []string{key + "/a.html", "org.other:http/b", key + "/c.html"}},
		{state: webtable.StateRedirect, alias: key + "/new.html"},
		{state: webtable.StateRedirect, alias: "org.other:http/x"},
		{state: webtable.StateRedirect},
	}
	for _, c := range cells {
		b := c.encode(key)
		want, got := decodeGraph(key, b), decodeStanding(key, b)
		if got.state != want.state || got.alias != want.alias || got.targets != nil {
			t.Errorf("%q: decodeStanding = %+v, decodeGraph = %+v", b, got, want)
		}
	}
	// An older cell: a hash after a tab.
	for _, b := range []string{"ok\tabc\n/a.html", "redirect\tabc\n/n.html", "ok\tabc"} {
		want, got := decodeGraph(key, []byte(b)), decodeStanding(key, []byte(b))
		if got.state != want.state || got.alias != want.alias {
			t.Errorf("%q: decodeStanding = %+v, decodeGraph = %+v", b, got, want)
		}
	}
}

func FuzzDecodeStanding(f *testing.F) {
	f.Add("ok\n/a.html\norg.other:http/b")
	f.Add("redirect\n/n.html")
	f.Add("redirect\tabc")
	f.Fuzz(func(t *testing.T, b string) {
		want, got := decodeGraph("k", []byte(b)), decodeStanding("k", []byte(b))
		if got.state != want.state || got.alias != want.alias {
			t.Errorf("%q: decodeStanding = %+v, decodeGraph = %+v", b, got, want)
		}
	})
}
