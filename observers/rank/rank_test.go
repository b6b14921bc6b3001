package rank_test

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/observers/rank"
)

// Small graphs whose edges are known by hand: the model's graph must be
// the expected one, the batch must solve it, and the observer must agree
// with the batch within 1%.
func TestHandGraphs(t *testing.T) {
	cases := []struct {
		name  string
		pages map[string]page
		edges map[string][]string // by page name; every ok page listed
		exact map[string]float64  // solved by hand, by page name
	}{{
		name:  "chain",
		pages: map[string]page{"a": ok("b"), "b": ok("c"), "c": ok("d"), "d": ok()},
		edges: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"d"}, "d": {}},
	}, {
		name:  "cycle",
		pages: map[string]page{"a": ok("b"), "b": ok("c"), "c": ok("a")},
		edges: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}},
	}, {
		name: "star",
		pages: map[string]page{
			"hub": ok("s1", "s2", "s3", "s4", "s5"),
			"s1":  ok("hub"), "s2": ok("hub"), "s3": ok("hub"), "s4": ok("hub"), "s5": ok("hub"),
		},
		edges: map[string][]string{"hub": {"s1", "s2", "s3", "s4", "s5"}, "s1": {"hub"}, "s2": {"hub"}, "s3": {"hub"}, "s4": {"hub"}, "s5": {"hub"}},
	}, {
		name:  "dangling",
		pages: map[string]page{"a": ok("b", "c"), "b": ok(), "c": ok("a")},
		edges: map[string][]string{"a": {"b", "c"}, "b": {}, "c": {"a"}},
	}, {
		name:  "self-link",
		pages: map[string]page{"a": ok("a", "b"), "b": ok("a", "b")},
		edges: map[string][]string{"a": {"b"}, "b": {"a"}},
	}, {
		name:  "duplicate links",
		pages: map[string]page{"a": ok("b", "b", "c", "b"), "b": ok("a"), "c": ok("a", "a")},
		edges: map[string][]string{"a": {"b", "c"}, "b": {"a"}, "c": {"a"}},
	}, {
		name: "uncrawled and gone targets",
		pages: map[string]page{
			"a": ok("b", "nowhere", "https://elsewhere.example/x", "g"),
			"b": ok("a", "g"),
			"g": gone(),
		},
		edges: map[string][]string{"a": {"b"}, "b": {"a"}},
	}, {
		name: "redirect alias",
		pages: map[string]page{
			"a":  ok("r", "r1", "loop1"),
			"r":  redirect("b"),
			"r1": redirect("r2"), "r2": redirect("c"),
			"loop1": redirect("loop2"), "loop2": redirect("loop1"),
			"b": ok("a", "b"),
			"c": ok("r"), // c → r → b
		},
		edges: map[string][]string{"a": {"b", "c"}, "b": {"a"}, "c": {"b"}},
	}, {
		name:  "hand-computed",
		pages: map[string]page{"a": ok("b", "c"), "b": ok("c"), "c": ok("a")},
		edges: map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": {"a"}},
		// a = .15 + .85c, b = .15 + .425a, c = .15 + .425a + .85b
		exact: map[string]float64{"a": 1.163369135104579, "b": 0.644431882419446, "c": 1.1921989824759753},
	}}
	// All cases live in one table, each under its own host names, so the
	// worker converges them at once.
	db := openDB(t)
	w := startWorker(t, db)
	m, changes := web{}, web{}
	name := func(c, p string) string {
		if strings.Contains(p, "://") {
			return p // an external URL
		}
		return u(strings.ReplaceAll(c, " ", "-") + "-" + p)
	}
	for _, c := range cases {
		for n, p := range c.pages {
			for i, l := range p.links {
				p.links[i] = name(c.name, l)
			}
			if p.alias != "" {
				p.alias = name(c.name, p.alias)
			}
			changes[name(c.name, n)] = p
		}
	}
	m.write(t, db, changes)
	waitIdle(t, w)
	all := m.edges(t)
	inc, b := values(t, db), batch(t, db)
	t.Logf("%d pages, %d runs", len(all), stats(w).Commits)

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := make(map[string][]string)
			for n, out := range c.edges {
				rows := []string{}
				for _, v := range out {
					rows = append(rows, row(t, name(c.name, v)))
				}
				slices.Sort(rows)
				want[row(t, name(c.name, n))] = rows
			}
			got := make(map[string][]string)
			for r := range want {
				got[r] = all[r]
			}
			if !maps.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("test model edges %v, want %v", got, want)
			}
			exact := pagerank(want)
			for n, x := range c.exact {
				if r := row(t, name(c.name, n)); math.Abs(exact[r]-x) > 1e-9 {
					t.Fatalf("power iteration gives %s = %.9f, by hand %.9f", n, exact[r], x)
				}
			}
			caseB, caseInc := make(map[string]float64), make(map[string]float64)
			for r := range want {
				caseB[r] = b[r]
				if x, ok := inc[r]; ok {
					caseInc[r] = x
				}
			}
			if e, r := maxRelErr(caseB, exact); e > 1e-6 {
				t.Fatalf("batch off by %.2g at %s:%s\nwant:%s", e, r, show(caseB), show(exact))
			}
			if d := rank.Compare(caseInc, caseB, 0.01); len(d) > 0 {
				t.Fatalf("incremental vs batch: %v\nincremental:%s\nbatch:%s", d, show(caseInc), show(caseB))
			}
			e, r := maxRelErr(caseInc, exact)
			if e > 0.01 {
				t.Fatalf("incremental off by %.2g at %s", e, r)
			}
			t.Logf("max relative error %.2g", e)
		})
	}
	// Nothing else is a node.
	if len(b) != len(all) || len(inc) != len(all) {
		t.Fatalf("%d nodes in the model, %d in the batch, %d incremental", len(all), len(b), len(inc))
	}
}
