package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/web/webtest"
)

// showcase is the fixture of the README's screenshots: canned without the
// XSS payloads, and a query with more than one page of results.
func showcase() *fake {
	f := canned()
	f.stats.Observers = slices.DeleteFunc(f.stats.Observers, func(o ObserverCount) bool { return o.Name == xss })
	f.stats.Observers = append(f.stats.Observers,
		ObserverCount{Name: "cluster", Column: "page:hash", Runs: 1169, Commits: 1169, RunTimeS: 28.5},
		ObserverCount{Name: "pagerank", Column: "links:out", Pending: 3, Runs: 1180, Commits: 1175, Conflicts: 5, RunTimeS: 41.2})
	f.top[""] = &serving.Top{
		Pages: []serving.TopPage{
			{URL: "https://www.example.com/", Title: "Example home", PageRank: 12.75, Inbound: 1234, InboundHost: 1168},
			{URL: "https://www.example.com/percolator", Title: "Percolator: incremental processing", PageRank: 2.5, Inbound: 3, InboundHost: 41},
			{URL: "https://www.example.com/bigtable", Title: "Bigtable", PageRank: 1.9, Inbound: 2, InboundHost: 17},
			{URL: "https://blog.example.org/caffeine", Title: "Caffeine, a year later", PageRank: 1.2, Inbound: 0, InboundHost: 6},
		},
		Hosts: []serving.HostCount{{Host: "www.example.com", Pages: 1169}, {Host: "blog.example.org", Pages: 42}, {Host: "mirror.example.com", Pages: 7}},
	}
	q := "percolatr transactions"
	f.results[q] = append(slices.Clone(f.results["percolator"]), f.results["many"]...)
	f.suggest[q] = "percolator transactions"
	f.relaxed[q] = true
	for i, r := range f.results[q] {
		if i >= 2 {
			r.Title = fmt.Sprintf("Transactions, part %d", i-1)
			// As long as a snippet can be: 240 characters.
			r.Snippet = []serving.Span{{Text: "…Snapshot isolation keeps each "}, {Text: "transaction", Mark: true},
				{Text: " on a consistent view of the table; writes commit in two phases, the primary lock first, then the secondaries, so that a reader that finds a lock can tell whether its writer…"}}
			r.Anchors = []string{"next", fmt.Sprintf("Transactions, part %d", i-1), "[3]", fmt.Sprintf("snapshot isolation (%d)", i-1)}
			f.results[q][i] = r
		}
	}
	return f
}

// brokenWords lists the words of table cells that the page breaks across
// lines: a word in one text node whose range has more than one box.
const brokenWords = `(() => {
	const bad = [];
	for (const c of document.querySelectorAll("th, td")) {
		const w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode()) {
			const re = /\S+/g;
			let m;
			while ((m = re.exec(n.data))) {
				if (m[0].length > 20) continue;
				const r = document.createRange();
				r.setStart(n, m.index);
				r.setEnd(n, m.index + m[0].length);
				if (r.getClientRects().length > 1) bad.push(m[0]);
			}
		}
	}
	return bad;
})()`

// visibleResults counts the results whose box ends inside the viewport.
const visibleResults = `[...document.querySelectorAll(".result")].filter(r => r.getBoundingClientRect().bottom <= window.innerHeight).length`

// TestScreenshots loads every page (home, results, document, top, status)
// at 1280 and 390 CSS pixels wide, light and dark, checks that none is
// wider than the screen and that the status page's tables keep their
// words whole, and saves a screenshot of each: into
// $CAFFEINE_SCREENSHOTS when set (docs/screenshots for the README),
// else into the test's artifacts.
func TestScreenshots(t *testing.T) {
	ctx := webtest.Browser(t)
	s, _ := newTestServer(t, showcase(), Options{})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	dir := os.Getenv("CAFFEINE_SCREENSHOTS")
	if dir == "" {
		dir = webtest.ArtifactDir(t)
	}
	pages := []struct{ name, target string }{
		{"home", "/"},
		{"results", "/search?q=" + url.QueryEscape("percolatr transactions")},
		{"document", "/doc?url=" + url.QueryEscape("https://www.example.com/percolator")},
		{"top", "/top"},
		{"status", "/status?refresh=0"},
	}
	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{1280, 390} {
			height := int64(900)
			if width < 500 {
				height = 844
			}
			if _, err := chromedp.Run(ctx, webtest.Viewport(width, height)); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(ctx, webtest.ColorScheme(scheme)); err != nil {
				t.Fatal(err)
			}
			for _, p := range pages {
				if scheme == "dark" && p.name != "results" && p.name != "status" {
					continue
				}
				res, err := chromedp.RunResponse(ctx, chromedp.Navigate(srv.URL+p.target))
				if err != nil || res == nil || res.Status != http.StatusOK {
					t.Fatalf("%s: %v %v", p.target, res, err)
				}
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
				if err != nil || wide > width {
					t.Errorf("%s at %d px: the page is %d px wide (%v)", p.name, width, wide, err)
				}
				// No table cell breaks a word (URLs and other words over
				// 20 characters may break).
				broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](brokenWords))
				if err != nil || len(broken) > 0 {
					t.Errorf("%s at %d px: words broken across lines: %q (%v)", p.name, width, broken, err)
				}
				if p.name == "results" && width == 1280 {
					// A dense list: six whole results on a 1280×900 screen.
					n, err := chromedp.Run(ctx, chromedp.Evaluate[int64](visibleResults))
					if err != nil || n < 6 {
						t.Errorf("%s %s at %d×%d px: %d results wholly visible, want 6 (%v)", p.name, scheme, width, height, n, err)
					}
				}
				if p.name == "results" {
					// Open the first result's ranking details.
					if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS("details.meta summary"))); err != nil {
						t.Fatal(err)
					}
				}
				file := fmt.Sprintf("%s-%d.png", p.name, width)
				if scheme == "dark" {
					file = fmt.Sprintf("%s-%d-dark.png", p.name, width)
				}
				t.Logf("screenshot: %s", webtest.ScreenshotTo(t, ctx, dir, file))
			}
		}
	}
}
