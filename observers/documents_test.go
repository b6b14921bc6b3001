package observers_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// TestDocumentKinds: a PDF and a text file are parsed and exported with
// their kind, a broken PDF is unparsed with its error recorded, an image is
// unparsed without one, and the batch recomputation agrees.
func TestDocumentKinds(t *testing.T) {
	pdf, err := os.ReadFile("../extract/testdata/pdf/handbook-virtual-package.pdf")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	const h = "https://docs.example"
	for i := range 10 {
		e.fetch(fmt.Sprintf("%s/p%d", h, i), 200, page(fmt.Sprintf("Page %d", i), fmt.Sprintf("page number %d of the site", i), h+"/v.pdf", "the pdf", h+"/notes.txt", "notes"))
	}
	e.fetch(h+"/v.pdf", 200, string(pdf), webtable.Type, "application/pdf")
	e.fetch(h+"/notes.txt", 200, "Release notes\n\nThe notes of the release.\n", webtable.Type, "text/plain; charset=utf-8")
	e.fetch(h+"/broken.pdf", 200, string(pdf[:len(pdf)/3]), webtable.Type, "application/pdf")
	e.fetch(h+"/logo.png", 200, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", webtable.Type, "image/png")
	e.idle()

	idx := e.index()
	if d := idx[h+"/v.pdf"]; d == nil || d.Kind != "pdf" || d.Title != "libdigest-md5-perl" || !strings.Contains(d.Text, "Virtuell pakke") {
		t.Errorf("pdf document: %+v", d)
	}
	if d := idx[h+"/notes.txt"]; d == nil || d.Kind != "txt" || d.Title != "Release notes" {
		t.Errorf("text document: %+v", d)
	}
	if d := idx[h+"/p1"]; d == nil || d.Kind != "" {
		t.Errorf("html document: %+v", d)
	}
	for _, u := range []string{h + "/broken.pdf", h + "/logo.png"} {
		if idx[u] != nil || e.get(u, webtable.State) != webtable.StateUnparsed {
			t.Errorf("%s: exported %v, state %q", u, idx[u] != nil, e.get(u, webtable.State))
		}
	}
	if msg := e.get(h+"/broken.pdf", webtable.ParseError); !strings.Contains(msg, "PDF") {
		t.Errorf("broken.pdf: page:error %q", msg)
	}
	if msg := e.get(h+"/logo.png", webtable.ParseError); msg != "" {
		t.Errorf("logo.png: page:error %q", msg)
	}
	verify(t, e)

	// A repaired PDF loses its error.
	e.fetch(h+"/broken.pdf", 200, string(pdf), webtable.Type, "application/pdf")
	e.idle()
	if msg := e.get(h+"/broken.pdf", webtable.ParseError); msg != "" || e.get(h+"/broken.pdf", webtable.Kind) != "pdf" {
		t.Errorf("repaired broken.pdf: page:error %q, kind %q", msg, e.get(h+"/broken.pdf", webtable.Kind))
	}
	verify(t, e)
}
