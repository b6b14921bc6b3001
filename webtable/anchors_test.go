package webtable

import (
	"fmt"
	"slices"
	"testing"
)

// CutAnchors keeps every text once before any twice, the most linked
// texts first, counts what it leaves out, and keeps the order it found.
func TestCutAnchors(t *testing.T) {
	d := &Doc{Host: "docs.test"}
	add := func(from, text string) { d.Anchors = append(d.Anchors, Anchor{From: from, Text: text}) }
	for i := range 5 {
		add(fmt.Sprintf("http://docs.test/a%d", i), "home")
	}
	add("http://other.test/x", "manual")
	add("http://docs.test/b1", "manual")
	add("http://other.test/y", "zebra")
	add("http://other.test/z", "home")
	all := slices.Clone(d.Anchors)

	d.CutAnchors(len(all))
	if !slices.Equal(d.Anchors, all) || d.MoreAnchors != 0 {
		t.Fatalf("nothing to cut: got %v, %d more", d.Anchors, d.MoreAnchors)
	}
	if n := d.CrossHostAnchors(); n != 3 {
		t.Errorf("CrossHostAnchors = %d, want 3", n)
	}

	d.CutAnchors(5)
	want := []Anchor{all[0], all[1], all[5], all[6], all[7]} // home, manual, zebra, then home and manual again
	if !slices.Equal(d.Anchors, want) {
		t.Errorf("kept %v, want %v", d.Anchors, want)
	}
	if d.MoreAnchors != 4 || d.MoreCrossHost != 1 {
		t.Errorf("more %d, from other hosts %d; want 4 and 1", d.MoreAnchors, d.MoreCrossHost)
	}
	if n, c := d.AnchorCount(), d.CrossHostAnchors(); n != len(all) || c != 3 {
		t.Errorf("AnchorCount %d, CrossHostAnchors %d after the cut; want %d and 3", n, c, len(all))
	}
}
