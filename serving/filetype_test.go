package serving

import (
	"context"
	"fmt"
	"testing"
)

// TestFileType: filetype:pdf, txt and html select documents by kind (HTML
// pages have none in the table), and results carry their type.
func TestFileType(t *testing.T) {
	ix := openIndex(t)
	h := upsert(1, "r1", "https://a.example/manual.html", "Manual", "the manual of the tool", 0.1)
	p := upsert(2, "r2", "https://a.example/manual.pdf", "Manual", "the manual of the tool", 0.1)
	p.Doc.Kind = "pdf"
	x := upsert(3, "r3", "https://a.example/manual.txt", "Manual", "the manual of the tool", 0.1)
	x.Doc.Kind = "txt"
	apply(t, ix, h, p, x)
	for q, want := range map[string]string{
		"manual filetype:pdf":                "[https://a.example/manual.pdf]",
		"manual filetype:txt":                "[https://a.example/manual.txt]",
		"manual filetype:html":               "[https://a.example/manual.html]",
		"manual -filetype:pdf -filetype:txt": "[https://a.example/manual.html]",
	} {
		if got := fmt.Sprint(find(t, ix, q)); got != want {
			t.Errorf("%q: %s, want %s", q, got, want)
		}
	}
	res, err := ix.Search(context.Background(), Query{Q: "manual", N: 10})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, r := range res.Results {
		types[r.URL] = r.FileType
	}
	if types["https://a.example/manual.pdf"] != "pdf" || types["https://a.example/manual.html"] != "html" || types["https://a.example/manual.txt"] != "txt" {
		t.Errorf("result types %v", types)
	}
}
