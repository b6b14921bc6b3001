package observers

import (
	"fmt"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// TestNearStanding: the folding rule on fingerprints a known number of
// bits apart, chains (A~B, B~C, A!~C) included: a page is folded under
// its lead only when that lead is the best of its own neighbourhood, so
// every folded page is listed by exactly one shown page.
func TestNearStanding(t *testing.T) {
	// Fingerprints: a is 0; b is 3 bits from a; c is 3 bits from b and 6
	// from a; d is 3 bits from c only; e is far from all.
	const (
		a = uint64(0)
		b = uint64(0b111)
		c = uint64(0b111111)
		d = uint64(0b111111111)
		e = ^uint64(0)
	)
	row := func(path string) string {
		r, err := webtable.Row("http://near.test/" + path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	url := func(path string) string { return "http://near.test/" + path }
	for _, tc := range []struct {
		name  string
		nodes map[string]uint64 // path → fingerprint; shorter paths lead
		want  map[string]string // path → "hidden" or the similar URLs shown
	}{
		{"pair", map[string]uint64{"a": a, "bb": b}, map[string]string{"a": "[" + url("bb") + "]", "bb": "hidden"}},
		{"too far", map[string]uint64{"a": a, "cc": c}, map[string]string{"a": "[]", "cc": "[]"}},
		{"star", map[string]uint64{"bb": b, "a": a, "cc": c}, map[string]string{"a": "[" + url("bb") + "]", "bb": "hidden", "cc": "[]"}},
		{"middle best", map[string]uint64{"b": b, "aa": a, "cc": c}, map[string]string{"b": "[" + url("aa") + " " + url("cc") + "]", "aa": "hidden", "cc": "hidden"}},
		{"chain", map[string]uint64{"a": a, "bbb": b, "cc": c, "ddd": d}, map[string]string{"a": "[" + url("bbb") + "]", "bbb": "hidden", "cc": "[" + url("ddd") + "]", "ddd": "hidden"}},
		{"chain shown", map[string]uint64{"a": a, "bb": b, "ccc": c, "dd": d}, map[string]string{"a": "[" + url("bb") + "]", "bb": "hidden", "ccc": "[]", "dd": "[]"}},
		{"alone", map[string]uint64{"a": a, "e": e}, map[string]string{"a": "[]", "e": "[]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := make(map[string]uint64)
			for p, fp := range tc.nodes {
				nodes[row(p)] = fp
			}
			g := mapNearGraph(nodes, nil)
			got := make(map[string]string)
			for p := range tc.nodes {
				hidden, similar, err := nearStanding(g, row(p))
				if err != nil {
					t.Fatal(err)
				}
				if hidden {
					got[p] = "hidden"
				} else {
					got[p] = fmt.Sprint(append([]string{}, similar...))
				}
			}
			for p, w := range tc.want {
				if got[p] != w {
					t.Errorf("%s: %s, want %s", p, got[p], w)
				}
			}
			// Every hidden page is listed exactly once.
			listed := 0
			for p := range tc.nodes {
				_, similar, _ := nearStanding(g, row(p))
				listed += len(similar)
			}
			if hidden := countHidden(got); listed != hidden {
				t.Errorf("%d listed, %d hidden", listed, hidden)
			}
		})
	}
}

// TestNearLeadLanguage: of near-copies, a page whose text belies the
// language it claims does not lead while one whose text does not is
// there, however short its URL; among pages that all belie it, the
// shortest URL leads.
func TestNearLeadLanguage(t *testing.T) {
	row := func(path string) string {
		r, err := webtable.Row("http://near.test/" + path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	nodes := map[string]uint64{row("a"): 0, row("bb"): 0b1, row("ccc"): 0b11}
	for _, c := range []struct {
		mismatch []string
		lead     string
	}{
		{nil, "a"},
		{[]string{"a"}, "bb"},
		{[]string{"a", "bb"}, "ccc"},
		{[]string{"a", "bb", "ccc"}, "a"},
	} {
		mis := map[string]bool{}
		for _, p := range c.mismatch {
			mis[row(p)] = true
		}
		g := mapNearGraph(nodes, mis)
		n, err := g.near(row("a"))
		if err != nil {
			t.Fatal(err)
		}
		if lead, err := g.lead(n); err != nil || lead != row(c.lead) {
			t.Errorf("mismatched %v: lead %s (%v), want %s", c.mismatch, lead, err, row(c.lead))
		}
		hidden, _, err := nearStanding(g, row(c.lead))
		if err != nil || hidden {
			t.Errorf("mismatched %v: the lead is folded (%v)", c.mismatch, err)
		}
	}
}

func countHidden(m map[string]string) int {
	n := 0
	for _, v := range m {
		if v == "hidden" {
			n++
		}
	}
	return n
}

// TestMapNearGraph: the batch's graph finds every pair within NearBits
// through the blocks, and none further.
func TestMapNearGraph(t *testing.T) {
	nodes := map[string]uint64{"x": 0}
	for i := range 64 {
		nodes[fmt.Sprint("one", i)] = 1 << i
		nodes[fmt.Sprint("three", i)] = 0b111 << (i % 62)
		nodes[fmt.Sprint("four", i)] = 0b1111 << (i % 61)
	}
	n, err := mapNearGraph(nodes, nil).near("x")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range n {
		if r != "x" && r[:4] == "four" {
			t.Errorf("%s is 4 bits away", r)
		}
	}
	for i := range 62 {
		if !slices.Contains(n, fmt.Sprint("one", i)) || !slices.Contains(n, fmt.Sprint("three", i)) {
			t.Errorf("%d: missing one or three", i)
		}
	}
}
