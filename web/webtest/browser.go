// Package webtest drives a real browser in tests: Debian's headless
// Chromium through chromedp, with helpers to catch scripts that should
// never run and to save screenshots as test artifacts.
//
// Environment:
//
//	CAFFEINE_CHROMIUM          the browser binary (default /usr/bin/chromium)
//	CAFFEINE_REQUIRE_CHROMIUM  "1": a missing browser fails the test instead of skipping it
//	CAFFEINE_ARTIFACTS         a directory for screenshots (default: the test's temp dir)
package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// DefaultPath is where Debian's chromium package puts the browser.
const DefaultPath = "/usr/bin/chromium"

// Timeout bounds the life of a browser started by Browser, so a hung
// browser fails the test instead of holding it until go test's own limit.
const Timeout = 2 * time.Minute

// Payloads are markup that runs a script if a page ever renders it as HTML
// (in text, an attribute or a URL). Each one sets window.__xss and calls
// alert. Put them in fixtures' titles, text and anchors, then check the UI
// with NoScriptRan.
var Payloads = []string{
	`<script>window.__xss=1;alert(1)</script>`,
	`<img src=x onerror="window.__xss=1;alert(1)">`,
	`"><svg onload="window.__xss=1;alert(1)">`,
	`'><iframe srcdoc="<script>parent.__xss=1</script>"></iframe>`,
	`javascript:window.__xss=1;alert(1)`,
}

// Path is the browser binary: $CAFFEINE_CHROMIUM or DefaultPath.
func Path() string {
	if p := os.Getenv("CAFFEINE_CHROMIUM"); p != "" {
		return p
	}
	return DefaultPath
}

// Browser starts a headless Chromium for t and returns a chromedp context
// for one tab of it. Without the browser binary the test is skipped, or
// fails when CAFFEINE_REQUIRE_CHROMIUM=1. The browser gets a fresh
// temporary profile (chromedp creates and removes the --user-data-dir),
// no sandbox (tests run as root in containers), no GPU, QUIC, background
// networking, component updates or sync, so it talks only to the pages the
// test opens. t.Cleanup closes it; the context is done after Timeout.
//
// Actions on the returned context share one tab; derive per-action
// timeouts from it with context.WithTimeout, never give it one of its own.
func Browser(t testing.TB) context.Context {
	t.Helper()
	path := Path()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CAFFEINE_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("webtest: no browser at %s (CAFFEINE_REQUIRE_CHROMIUM=1): %v", path, err)
		}
		t.Skipf("webtest: no browser at %s; install Debian's chromium (apt-get install chromium) or set CAFFEINE_CHROMIUM", path)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 900),
	)
	life, cancelLife := context.WithTimeout(context.Background(), Timeout)
	alloc, cancelAlloc := chromedp.NewExecAllocator(life, opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()   // closes the browser gracefully
		cancelAlloc() // waits for the process and removes the profile
		cancelLife()
	})
	// Start the browser now, so a broken one fails here and not in the
	// test's first action.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("webtest: starting %s: %v", path, err)
	}
	return ctx
}

// trapScript replaces the dialogs, which would block the page, with
// recorders; it runs before any script of each new document.
const trapScript = `(() => {
	window.__webtestAlerts = [];
	for (const name of ["alert", "confirm", "prompt", "print"]) {
		window[name] = function (msg) { window.__webtestAlerts.push(name + ": " + String(msg)); };
	}
})();`

// TrapScripts is an action that, from then on, makes every document in the
// tab record calls of alert, confirm, prompt and print instead of opening a
// dialog. Run it once before navigating; NoScriptRan reads the record.
func TrapScripts() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: trapScript})
		return err
	})
}

// probe gathers, in the page, every sign that injected markup ran or was
// parsed as markup. The UI serves no scripts at all, so any script element
// is foreign.
const probe = `(() => {
	const bad = [];
	if (typeof window.__xss !== "undefined") bad.push("window.__xss is set");
	for (const a of (window.__webtestAlerts || [])) bad.push("dialog called: " + a);
	if (!Array.isArray(window.__webtestAlerts)) bad.push("TrapScripts did not run in this document");
	for (const s of document.querySelectorAll("script")) bad.push("script element: " + s.outerHTML.slice(0, 120));
	for (const e of document.querySelectorAll("img, iframe, object, embed, frame")) bad.push("foreign element: " + e.outerHTML.slice(0, 120));
	for (const e of document.querySelectorAll("*")) {
		for (const at of e.attributes) {
			if (at.name.startsWith("on")) bad.push("handler attribute: <" + e.localName + " " + at.name + ">");
		}
	}
	for (const a of document.querySelectorAll("[href], [src], [action]")) {
		const v = (a.getAttribute("href") || a.getAttribute("src") || a.getAttribute("action") || "").trim().toLowerCase();
		if (/^(javascript|data|vbscript):/.test(v)) bad.push("unsafe URL: <" + a.localName + "> " + v.slice(0, 80));
	}
	return bad;
})()`

// NoScriptRan fails t if anything in the tab's current document shows
// that markup from data got through: window.__xss set, a dialog called, a
// script, img or iframe element, an on* attribute, a javascript: or data:
// link. Use it after TrapScripts and a navigation.
func NoScriptRan(t testing.TB, ctx context.Context) {
	t.Helper()
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](probe))
	if err != nil {
		t.Fatalf("webtest: probing the page: %v", err)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	for _, b := range bad {
		t.Errorf("webtest: %s: %s", loc, b)
	}
}

// ArtifactDir is where a test's artifacts go: $CAFFEINE_ARTIFACTS (created
// if needed) or a temporary directory of t.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CAFFEINE_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("webtest: artifact directory: %v", err)
	}
	return dir
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot saves a PNG of the whole page in the tab to ArtifactDir, named
// after the test and name, logs and returns its path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("webtest: screenshot %s: %v", name, err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("webtest: screenshot %s is not a PNG", name)
	}
	file := unsafeName.ReplaceAllString(t.Name()+"-"+name, "_") + ".png"
	path := filepath.Join(ArtifactDir(t), file)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("webtest: %v", err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Texts returns the text content of every element matching the CSS
// selector, in document order; none is not an error.
func Texts(ctx context.Context, selector string) ([]string, error) {
	sel, err := json.Marshal(selector)
	if err != nil {
		return nil, err
	}
	js := fmt.Sprintf(`Array.from(document.querySelectorAll(%s), e => e.textContent.trim())`, sel)
	texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
	if err != nil {
		return nil, fmt.Errorf("webtest: texts of %s: %w", selector, err)
	}
	if texts == nil {
		texts = []string{}
	}
	return texts, nil
}

// Viewport is an action that makes the tab's viewport width × height CSS
// pixels, as a phone (390 × 844) or a laptop (1280 × 900) shows pages.
func Viewport(width, height int64) chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(width, height)
}

// ColorScheme is an action that makes the tab's pages see
// prefers-color-scheme as scheme: "light" or "dark".
func ColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// ScreenshotTo saves a PNG of the whole page in the tab as dir/file
// (created if needed) and returns its path.
func ScreenshotTo(t testing.TB, ctx context.Context, dir, file string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("webtest: screenshot %s: %v", file, err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("webtest: screenshot %s is not a PNG", file)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("webtest: %v", err)
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("webtest: %v", err)
	}
	return path
}
