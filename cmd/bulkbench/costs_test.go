package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCostRows(t *testing.T) {
	r := Result{Mode: modeEngine, Pages: 200, Links: 8000, ExportRuns: 300, BleveWrites: 250, CPUSeconds: 4,
		Observers: []ObserverCost{{Name: "links", Runs: 400, Commits: 380, Conflicts: 20, RunSec: 2},
			{Name: "export", Runs: 300, Commits: 300}},
		Store: StoreOps{Gets: 16000, Puts: 40000, Scans: 100, BytesWritten: 8 << 20}}
	want := map[string][3]float64{ // total, a page, a link
		"links runs":                   {400, 2, 0.05},
		"links conflicts":              {20, 0.1, 0.0025},
		"links run time":               {2000, 10, 0.25},
		"transactions (observer runs)": {700, 3.5, 0.0875},
		"store puts (rows written)":    {40000, 200, 5},
		"store bytes written":          {8 << 20, 41943.04, 1048.576},
		"export runs":                  {300, 1.5, 0.0375},
		"Bleve writes":                 {250, 1.25, 0.03125},
		"CPU":                          {4000, 20, 0.5},
	}
	got := map[string]costRow{}
	for _, c := range costRows(r) {
		got[c.What] = c
	}
	for what, w := range want {
		c, ok := got[what]
		if !ok {
			t.Errorf("no row %q", what)
			continue
		}
		if c.Total != w[0] || !near(c.Page, w[1]) || !near(c.Link, w[2]) {
			t.Errorf("%s: total %v, a page %v, a link %v; want %v", what, c.Total, c.Page, c.Link, w)
		}
	}

	// No pages, no links: zeros, not infinities.
	for _, c := range costRows(Result{Observers: r.Observers}) {
		if c.Page != 0 || c.Link != 0 {
			t.Errorf("%s: a page %v, a link %v of nothing", c.What, c.Page, c.Link)
		}
	}

	var b bytes.Buffer
	printCosts(&b, r)
	if out := b.String(); !strings.Contains(out, "200 pages, 8000 links (40.0 a page)") || !strings.Contains(out, "| CPU | 4000 ms | 20 | 0.5 |") ||
		!strings.Contains(out, "| links | 400 | 2 | 1.90 | 0.1 | 10 | 0.25 |") {
		t.Errorf("printCosts:\n%s", out)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestFixtureOptionsLinks(t *testing.T) {
	if opt := fixtureOptions(1000, 0); opt.LinksPerPage != 0 || opt.Hubs != 0 || opt.Section != 0 {
		t.Errorf("default fixture: %+v, want the default links", opt)
	}
	opt := fixtureOptions(10000, 80)
	if opt.LinksPerPage != 80 || opt.Hubs != 50 || opt.Section != 10000 || opt.Duplicates != 200 {
		t.Errorf("-links 80: %+v", opt)
	}
	w, err := newFixture(400, 80)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.Links(5)); n != 81 {
		t.Errorf("-fixture 400 -links 80: page 5 has %d links, want 81", n)
	}
	if opt := fixtureOptions(3, 80); opt.Hubs < 1 || opt.Hubs >= 3 {
		t.Errorf("-fixture 3 -links 80: %d hubs", opt.Hubs)
	}
}

func TestLinksFlagNeedsFixture(t *testing.T) {
	for _, args := range [][]string{{"-corpus", t.TempDir(), "-links", "80"}, {"-fixture", "10", "-links", "-1"}} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-links") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
