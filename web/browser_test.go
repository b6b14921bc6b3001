package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caffeine-go/caffeine/web/webtest"
)

// TestBrowser drives the UI in headless Chromium: search by typing into the
// box, follow a result, expand duplicates without script, and load pages
// whose data is full of XSS payloads. The DOM checks of
// webtest.NoScriptRan do not rely on the Content-Security-Policy: they
// find injected elements even where the policy stops them from running.
func TestBrowser(t *testing.T) {
	ctx := webtest.Browser(t)
	s, _ := newTestServer(t, canned(), Options{})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)

	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	texts := func(selector string) []string {
		t.Helper()
		got, err := webtest.Texts(ctx, selector)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// navigateBy runs an action that loads a new page and checks its status.
	navigateBy := func(a chromedp.Action[chromedp.Void], status int) {
		t.Helper()
		res, err := chromedp.RunResponse(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if res == nil || int(res.Status) != status {
			t.Fatalf("response %+v, want status %d", res, status)
		}
	}
	box := chromedp.CSS(`input[name="q"]`)
	button := chromedp.CSS(`form[role="search"] button`)

	run(webtest.TrapScripts())

	// Type a query into the box on the home page and submit it.
	navigateBy(chromedp.Navigate(srv.URL+"/"), http.StatusOK)
	run(chromedp.WaitVisible(box), chromedp.SendKeys(box, "percolator"))
	webtest.Screenshot(t, ctx, "home")
	navigateBy(chromedp.Click(button), http.StatusOK)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(loc); u.Path != "/search" || u.Query().Get("q") != "percolator" {
		t.Errorf("location %s", loc)
	}
	if got, want := texts(".result h2"), []string{"Percolator: incremental processing", "Bigtable"}; !slices.Equal(got, want) {
		t.Errorf("result titles %q, want %q", got, want)
	}
	if got, want := texts(".result mark"), []string{"Percolator", "percolator"}; !slices.Equal(got, want) {
		t.Errorf("highlighted %q, want %q", got, want)
	}
	if got := texts(".result .meta summary span"); len(got) < 2 || got[0] != "crawled 3 minutes ago" {
		t.Errorf("meta %q", got)
	}
	// PageRank and score are in the closed details, not the main line.
	visible, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(".result details.meta dd").checkVisibility()`))
	if err != nil || visible {
		t.Errorf("the ranking details are visible before a click (%v)", err)
	}
	if got := texts(".result .meta dd"); len(got) < 2 || got[0] != "2.5" || got[1] != "3.25" {
		t.Errorf("ranking details %q", got)
	}
	// The duplicates open without script.
	open := func() bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("details.dups").open`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if open() {
		t.Error("duplicates open before a click")
	}
	run(chromedp.Click(chromedp.CSS("details.dups summary")))
	if !open() {
		t.Error("duplicates closed after a click")
	}
	webtest.NoScriptRan(t, ctx)
	webtest.Screenshot(t, ctx, "search")

	// Follow the first result's document link.
	navigateBy(chromedp.Click(chromedp.CSS(".result a.more")), http.StatusOK)
	if got := texts("h1"); !slices.Equal(got, []string{"Percolator: incremental processing"}) {
		t.Errorf("document page h1 %q", got)
	}
	if got := texts("pre.cached"); len(got) != 1 || !strings.Contains(got[0], "incremental processing") {
		t.Errorf("cached copy %q", got)
	}
	webtest.Screenshot(t, ctx, "doc")

	// A syntax error: a friendly page with the query kept in the box.
	run(chromedp.Clear(box), chromedp.SendKeys(box, "(percolator"))
	navigateBy(chromedp.Click(button), http.StatusBadRequest)
	if got := texts(".error .message"); len(got) != 1 || !strings.Contains(got[0], "unclosed parenthesis") {
		t.Errorf("error message %q", got)
	}
	if v, _ := chromedp.Run(ctx, chromedp.Value(box)); v != "(percolator" {
		t.Errorf("the box holds %q", v)
	}
	webtest.Screenshot(t, ctx, "syntax-error")

	// Pages full of payloads: shown as text, nothing runs.
	navigateBy(chromedp.Navigate(srv.URL+"/search?q=evil"), http.StatusOK)
	webtest.NoScriptRan(t, ctx)
	if got := texts(".result h2"); len(got) != 2 || got[0] != xss || got[1] != xssImg {
		t.Errorf("evil titles %q", got)
	}
	if got := texts(".result .snippet mark"); len(got) != 2 || got[0] != xssScript {
		t.Errorf("evil marks %q", got)
	}
	webtest.Screenshot(t, ctx, "xss-search")

	for _, target := range []string{
		"/doc?url=" + url.QueryEscape(evilPage),
		"/doc?url=" + url.QueryEscape(xssURL),
		"/top",
		"/status?refresh=0",
	} {
		navigateBy(chromedp.Navigate(srv.URL+target), http.StatusOK)
		webtest.NoScriptRan(t, ctx)
	}
	navigateBy(chromedp.Navigate(srv.URL+"/doc?url="+url.QueryEscape(evilPage)), http.StatusOK)
	if got := texts("h1"); !slices.Equal(got, []string{xss}) {
		t.Errorf("evil document h1 %q", got)
	}
	if got := texts("pre.cached"); len(got) != 1 || got[0] != "before "+xss+" after" {
		t.Errorf("evil cached copy %q", got)
	}
	webtest.Screenshot(t, ctx, "xss-doc")

	// The status page draws its charts without script.
	navigateBy(chromedp.Navigate(srv.URL+"/status?refresh=0"), http.StatusOK)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("figure.chart svg[role=img] polyline").length`))
	if err != nil || n != 8 {
		t.Errorf("%d chart lines, %v", n, err)
	}
	webtest.Screenshot(t, ctx, "status")
	navigateBy(chromedp.Navigate(srv.URL+"/top"), http.StatusOK)
	webtest.Screenshot(t, ctx, "top")
}

// TestNoScriptRanCatches checks the checker: on a page that lets markup
// through, webtest.NoScriptRan must complain.
func TestNoScriptRanCatches(t *testing.T) {
	ctx := webtest.Browser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><title>bad</title><p>" + strings.Join(webtest.Payloads, " ") + "</p>"))
	}))
	t.Cleanup(srv.Close)
	if err := chromedp.Do(ctx, webtest.TrapScripts(), chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	webtest.NoScriptRan(rec, ctx)
	joined := strings.Join(rec.errors, "\n")
	for _, want := range []string{"window.__xss is set", "dialog called: alert", "script element", "foreign element: <img", "handler attribute"} {
		if !strings.Contains(joined, want) {
			t.Errorf("NoScriptRan missed %q; it said:\n%s", want, joined)
		}
	}
}

// recorder is a testing.TB that keeps Errorf calls instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (r *recorder) Helper() {}
