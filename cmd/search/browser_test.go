package main

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caffeine-go/caffeine/web/webtest"
)

// TestBrowserEndToEnd crawls a small site, one of whose pages carries
// script payloads in its title, text and the anchor text of a link to it,
// then uses the UI in Chromium as a user would: type a query, read the
// results, open the document pages. Nothing from the crawled pages runs.
func TestBrowserEndToEnd(t *testing.T) {
	ctx := webtest.Browser(t)
	payload := strings.Join(webtest.Payloads, " ")
	evilLink := `<a href="/evil.html">` + html.EscapeString(webtest.Payloads[1]) + ` pangolin</a>`
	s := &site{pages: map[string]string{
		"/":           page("Home", "a page about the okapi and its relatives "+evilLink, "/okapi.html"),
		"/okapi.html": page("Okapi", "the okapi is a giraffid of the Congo", "/"),
		"/evil.html": "<!doctype html><html><head><title>" + html.EscapeString(payload) + "</title></head><body><p>" +
			html.EscapeString(payload) + " pangolin scales</p><script>window.__xss=1</script></body></html>",
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	d := start(t, "-data", t.TempDir(), "-seeds", srv.URL+"/", "-allow-private", "-delay", "0", "-no-sitemaps")
	d.waitIdleWith(60*time.Second, func(s stats) bool { return s.Indexed == 3 })

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
	box := chromedp.CSS(`input[name="q"]`)
	run(webtest.TrapScripts(), chromedp.Navigate(d.base+"/"), chromedp.WaitVisible(box), chromedp.SendKeys(box, "okapi giraffid"))
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`form[role="search"] button`))); err != nil {
		t.Fatal(err)
	}
	// The page with both words first (the home page, with one, may follow).
	if got := texts(".result h2"); len(got) == 0 || got[0] != "Okapi" {
		t.Errorf("result titles %q", got)
	}
	if got := texts(".result mark"); !slices.Contains(got, "giraffid") {
		t.Errorf("marks %q", got)
	}
	webtest.Screenshot(t, ctx, "e2e-search")

	for _, target := range []string{
		"/search?q=pangolin",
		"/doc?url=" + url.QueryEscape(srv.URL+"/evil.html"),
		"/doc?url=" + url.QueryEscape(srv.URL+"/"),
		"/top",
		"/status?refresh=0",
	} {
		res, err := chromedp.RunResponse(ctx, chromedp.Navigate(d.base+target))
		if err != nil {
			t.Fatal(err)
		}
		if res == nil || res.Status != http.StatusOK {
			t.Fatalf("%s: %+v", target, res)
		}
		webtest.NoScriptRan(t, ctx)
		if target == "/search?q=pangolin" {
			if got := texts(".result h2"); len(got) == 0 || got[0] != payload {
				t.Errorf("the payload title should show as text: %q", got)
			}
			webtest.Screenshot(t, ctx, "e2e-xss-search")
		}
	}
}
