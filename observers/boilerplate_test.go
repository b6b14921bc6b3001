package observers_test

import (
	"testing"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/webtable"
)

// The exported document carries the page's own text (no navigation), its
// title without the site's affix and its link density, as the batch
// recomputation has them; a page that changes only its navigation keeps
// its document's text.
func TestDocTextFeatures(t *testing.T) {
	e := newEnv(t)
	const h = "http://docs.test"
	nav := `<div class="navheader"><a href="/a">Prev</a> <a href="/b">Up</a> <a href="/c">Next</a></div>`
	e.fetch(h+"/a", 200, `<title>Vacuum — Example docs</title>`+nav+`<h1>Vacuum</h1><p>Vacuum reclaims storage.</p>`)
	e.fetch(h+"/b", 200, `<title>Contents</title><ul><li><a href="/a">Vacuum</a><li><a href="/c">Analyze</a><li><a href="/a#x">Vacuum full</a></ul>`)
	e.fetch(h+"/c", 200, `<title>Analyze</title><p>Analyze collects statistics.</p>`)
	e.idle()
	docs := e.index()
	a, b := docs[h+"/a"], docs[h+"/b"]
	if a == nil || b == nil {
		t.Fatalf("documents %v", keys(docs))
	}
	if a.Text != "Vacuum Vacuum reclaims storage." || a.TitleCore != "Vacuum" || a.Title != "Vacuum — Example docs" {
		t.Errorf("a: text %q, title %q, core %q", a.Text, a.Title, a.TitleCore)
	}
	if a.LinkDensity > 0.5 || b.LinkDensity < 0.9 || b.Text != "" {
		t.Errorf("link density a %g, b %g; b text %q", a.LinkDensity, b.LinkDensity, b.Text)
	}
	if got := e.get(h+"/a", webtable.LinkDensity); got != "0.27" {
		t.Errorf("a's page:linkdensity %q", got)
	}
	diffs, _, err := observers.Verify(bg, e.db, 0.01, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}
