package serving

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// filler returns n tokens of a ten-word vocabulary: fields long in
// tokens and poor in distinct terms, where Bleve's own estimate of the
// mean length (distinct terms ÷ documents) is furthest from the truth.
func filler(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("wa%d", i%10)
	}
	return strings.Join(w, " ")
}

// TestFieldLengthsRankLongPages: BM25 normalizes by the true mean length
// of the text, measured as the index applies documents, kept across a
// reopen: a long page that names the term 25 times ranks above a
// short one that names it once. With Bleve's estimate (a mean of one
// token here) the short page wins.
func TestFieldLengthsRankLongPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := OpenIndex(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var v uint64
	next := func() uint64 { v++; return v }
	for i := range 18 {
		apply(t, ix, upsert(next(), fmt.Sprintf("com.example/f%d", i), fmt.Sprintf("http://example.com/f%d", i), "Page", filler(1000), 0))
	}
	long := filler(975) + strings.Repeat(" okapi", 25)
	apply(t, ix,
		upsert(next(), "com.example/long", "http://example.com/long", "Page", long, 0),
		upsert(next(), "com.example/short", "http://example.com/short", "Page", filler(19)+" okapi", 0))

	want := (18*1000 + 1000 + 20) / 20.0
	if m, ok := ix.lengths.mean(fText); !ok || math.Abs(m-want) > 0.5 {
		t.Fatalf("mean text length %v (%v), want %v", m, ok, want)
	}
	if got := find(t, ix, "okapi"); !slices.Equal(got, []string{"http://example.com/long", "http://example.com/short"}) {
		t.Errorf("with the measured mean: %v, want the long page first", got)
	}
	measured := ix.lengths
	ix.lengths = newFieldLengths() // nothing measured: Bleve's estimate
	if got := find(t, ix, "okapi"); !slices.Equal(got, []string{"http://example.com/short", "http://example.com/long"}) {
		t.Errorf("with Bleve's estimate: %v, want the short page first (else this test proves nothing)", got)
	}
	ix.lengths = measured
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix, err = OpenIndex(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if m, ok := ix.lengths.mean(fText); !ok || math.Abs(m-want) > 0.5 {
		t.Fatalf("reopened: mean text length %v (%v), want %v", m, ok, want)
	}
	if got := find(t, ix, "okapi"); len(got) == 0 || got[0] != "http://example.com/long" {
		t.Errorf("reopened: %v, want the long page first", got)
	}
}

// TestFieldLengthsWindow: past lengthWindow documents the sums halve, the
// mean unchanged; a damaged kept value starts afresh.
func TestFieldLengthsWindow(t *testing.T) {
	l := newFieldLengths()
	l.docs, l.sum[fText] = lengthWindow, 100*lengthWindow
	l.add(nil)
	l.docs++
	l.sum[fText] += 100
	l.add(nil) // nothing added, nothing halved
	if l.docs <= lengthWindow {
		t.Fatalf("docs %v", l.docs)
	}
	l2 := newFieldLengths()
	l2.load(l.encode())
	if m, _ := l2.mean(fText); m != 100 {
		t.Errorf("loaded mean %v, want 100", m)
	}
	l3 := newFieldLengths()
	l3.load([]byte("{not json"))
	if _, ok := l3.mean(fText); ok {
		t.Error("a damaged value gave a mean")
	}
}
