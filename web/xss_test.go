package web

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// xssPages are pages whose canned data is full of payloads.
var xssPages = []string{
	"/search?q=evil",
	"/search?q=" + url.QueryEscape(xss), // corrected: the page shows the suggestion and the query
	"/search?q=" + url.QueryEscape(xss) + "&verbatim=1",
	"/search?q=" + url.QueryEscape("("+xss), // the syntax error page echoes the query
	"/doc?url=" + url.QueryEscape(evilPage),
	"/doc?url=" + url.QueryEscape(xssURL),
	"/doc?url=" + url.QueryEscape(xss), // 404 page echoes the url
	"/top",
	"/top?host=" + url.QueryEscape(xss),
	"/status",
	"/" + url.PathEscape(xss), // 404 page
}

// TestNoXSS: no payload from crawled data becomes markup. Checked on the
// parsed DOM (what a browser would build), not by string matching alone.
func TestNoXSS(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	for _, target := range xssPages {
		_, body := get(t, s, target)
		checkNoXSS(t, target, body)
	}
}

// checkNoXSS fails when body has a script, an event handler attribute, an
// element our templates never emit (img, iframe, …), or a link whose
// scheme is not http(s) or a path of our own.
func checkNoXSS(t *testing.T, what, body string) {
	t.Helper()
	// Escaped text may say onerror=; only the DOM walk below can tell.
	for _, raw := range []string{"<script", "<img", "<svg onload"} {
		if strings.Contains(strings.ToLower(body), raw) {
			t.Errorf("%s: the raw markup %q is in the page", what, raw)
		}
	}
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "img", "iframe", "object", "embed", "frame", "base":
				t.Errorf("%s: a <%s> element", what, n.Data)
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				if strings.HasPrefix(k, "on") {
					t.Errorf("%s: <%s %s=%q>", what, n.Data, a.Key, a.Val)
				}
				if k == "href" || k == "src" || k == "action" || k == "formaction" || k == "xlink:href" {
					v := strings.ToLower(strings.TrimSpace(a.Val))
					if !(strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") || (strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//"))) {
						t.Errorf("%s: <%s %s=%q>", what, n.Data, a.Key, a.Val)
					}
				}
			}
			if n.Data == "meta" && attr(n, "http-equiv") == "refresh" && attr(n, "content") != "5" {
				t.Errorf("%s: meta refresh %q", what, attr(n, "content"))
			}
			if n.Data == "mark" && len(n.Attr) > 0 {
				t.Errorf("%s: a mark with attributes", what)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestXSSShownAsText: the payloads are not dropped either: they show as
// the text they are.
func TestXSSShownAsText(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	_, body := get(t, s, "/search?q=evil")
	text := visibleText(t, body)
	for _, want := range []string{xssScript, xssImg, xssURL, "</mark>" + xssImg} {
		if !strings.Contains(text, want) {
			t.Errorf("the page text lacks %q", want)
		}
	}
	// The two results have links only where the URL is http(s).
	if strings.Count(body, `rel="noreferrer nofollow"`) != 3 {
		t.Errorf("%d outside links, want 3 (the evilPage title, its section and its duplicate)", strings.Count(body, `rel="noreferrer nofollow"`))
	}
	// The section's fragment is escaped into the link.
	if want := `#%22%3E%3Csvg%20onload=%22window.__xss=1%22%3E" rel="noreferrer nofollow">§ &lt;script&gt;`; !strings.Contains(body, want) {
		t.Errorf("no section link %s in the page", want)
	}
}

func visibleText(t *testing.T, body string) string {
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return b.String()
}

// TestXSSInJSON: JSON keeps the text as it is (a client may want it), but
// escapes <, > and & so the body cannot be sniffed as HTML, and the
// snippet_html is safe to insert.
func TestXSSInJSON(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	for _, target := range []string{"/api/search?q=evil", "/api/doc?url=" + url.QueryEscape(evilPage), "/api/top", "/api/stats", "/api/doc?url=" + url.QueryEscape(xss)} {
		res, body := get(t, s, target)
		if strings.ContainsAny(body, "<>") {
			t.Errorf("%s: raw < or > in JSON: %.200s", target, body)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", target)
		}
	}
	_, body := get(t, s, "/api/search?q=evil")
	var r apiResults
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.Results[0].Title != xss {
		t.Errorf("title %q, want the payload as text", r.Results[0].Title)
	}
	for _, hit := range r.Results {
		checkNoXSS(t, "snippet_html", "<p>"+hit.SnippetHTML+"</p>")
	}
}
