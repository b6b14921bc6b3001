package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestDocPage(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	res, body := get(t, s, "/doc?url="+url.QueryEscape("https://www.example.com/percolator"))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "doc", body,
		"<title>Percolator: incremental processing – caffeine</title>",
		`<a href="https://www.example.com/percolator" rel="noreferrer nofollow">https://www.example.com/percolator</a>`,
		`<span class="badge ok">ok</span> · HTTP 200`,
		"<tr><th>Canonical</th><td>this page</td></tr>",
		`<a href="/doc?url=https%3A%2F%2Fmirror.example.com%2Fpercolator">https://mirror.example.com/percolator</a>`,
		`<th>Similar pages</th>`, `<a href="/doc?url=https%3A%2F%2Fwww.example.com%2Fpercolator%3Fsid%3D8f3a">https://www.example.com/percolator?sid=8f3a</a>`,
		"<code>9f86d081884c7d65</code>",
		"<tr><th>PageRank</th><td>2.5</td></tr>",
		"3 minutes ago <span class=\"abs\">2026-05-14 11:57:00 UTC</span>",
		"<tr><th>Next fetch</th><td>in 6 hours",
		"<tr><th>Exported</th><td>yes, 2 minutes ago",
		"<tr><th>Indexed</th><td>yes, searchable now</td></tr>",
		"<code>com.example.www/percolator</code>",
		// stages and the latency
		"<td>parsed</td>", "+200 ms", "<td>clustered</td>", "+900 ms", "<td>exported</td>", "+1.5 s", "<td>searchable</td>", "+2.3 s",
		"Crawl → searchable latency of the current content: <b>2.3 s</b>",
		// history
		`">3 minutes ago</td><td>200</td><td>changed</td>`, `">26 hours ago</td><td>200</td><td>unchanged</td>`,
		// inbound links with anchors
		`<a href="/doc?url=https%3A%2F%2Fwww.example.com%2F">https://www.example.com/</a></td><td><q>the Percolator paper</q>`,
		`https://blog.example.org/caffeine</a></td><td><span class="none">no text</span>`,
		// outlinks
		"Outlinks <span class=\"n\">2</span>", `<a href="/doc?url=https%3A%2F%2Fwww.example.com%2Fbigtable">`,
		// cached copy
		"<h2>Cached copy</h2>", `<pre class="cached">Large-scale incremental processing using distributed transactions and notifications.</pre>`,
	)
}

// Hosts are stored in ASCII and shown in Unicode; links keep the ASCII
// form. An inlink through a redirect says which URL it linked to.
func TestDocPageUnicodeHost(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	res, body := get(t, s, "/doc?url="+url.QueryEscape("http://xn--bcher-kva.de/"))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "idna", body,
		"<h1>http://bücher.de/</h1>",
		`<a href="http://xn--bcher-kva.de/" rel="noreferrer nofollow">http://bücher.de/</a>`,
		`<a href="/doc?url=http%3A%2F%2Fxn--caf-dma.example%2F">http://café.example/</a>`,
		`via <a href="/doc?url=http%3A%2F%2Fxn--bcher-kva.de%2Findex.html">http://bücher.de/index.html</a>`,
	)
}

func TestDocPageSparse(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	res, body := get(t, s, "/doc?url=https://www.example.com/lonely")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "lonely", body,
		"<title>https://www.example.com/lonely – caffeine</title>",
		`<span class="badge unfetched">unfetched</span>`,
		"<tr><th>Fetched</th><td>never</td></tr>",
		"<tr><th>Exported</th><td>no</td></tr>",
		"<tr><th>Indexed</th><td>no</td></tr>",
		"The current content is not searchable yet.",
		"No fetches recorded.", "No known page links here.", "No outlinks.", "No indexed text.",
		`<tr class="pending"><td>searchable</td>`,
	)
}

func TestDocPageErrors(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	cases := []struct {
		target string
		status int
		msg    string
	}{
		{"/doc?url=https://nowhere.example/", 404, "not found: no row for https://nowhere.example/"},
		{"/doc", 400, "the url parameter is missing"},
		{"/doc?url=", 400, "the url parameter is missing"},
		{"/doc?url=" + strings.Repeat("a", maxURLLen+1), 400, "the url is too long"},
	}
	for _, c := range cases {
		res, body := get(t, s, c.target)
		if res.StatusCode != c.status {
			t.Errorf("GET %.60s: status %d, want %d", c.target, res.StatusCode, c.status)
		}
		wantContains(t, c.target[:min(len(c.target), 60)], body, c.msg, "<!doctype html>")
	}
}

func TestAPIDoc(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	m := getJSON(t, s, "/api/doc?url="+url.QueryEscape("https://www.example.com/percolator"), http.StatusOK)
	// The contract's keys, plus feed.DocInfo's extras.
	wantKeys(t, "doc", m,
		[]string{"url", "canonical", "content_hash", "pagerank", "status", "fetched_at", "outlinks", "inlinks", "duplicates", "exported"},
		"row", "http_status", "title", "text", "redirect_to", "error", "exported_at", "indexed", "stages", "history", "next_fetch", "similar", "near_copy_of")
	if m["url"] != "https://www.example.com/percolator" || m["canonical"] != "https://www.example.com/percolator" ||
		m["content_hash"] != "9f86d081884c7d65" || m["pagerank"] != 2.5 || m["status"] != "ok" ||
		m["fetched_at"] != "2026-05-14T11:57:00Z" || m["exported"] != true {
		t.Errorf("doc: %v", m)
	}
	wantArray(t, "doc", m, "outlinks", 2)
	in := wantArray(t, "doc", m, "inlinks", 2)
	wantKeys(t, "inlink", in[0].(map[string]any), []string{"url", "anchor"})
	if a := in[0].(map[string]any)["anchor"]; a != "the Percolator paper" {
		t.Errorf("anchor %v", a)
	}
	wantArray(t, "doc", m, "duplicates", 1)
	wantArray(t, "doc", m, "similar", 1)

	// Every slice nil in the backend: [] on the wire.
	m = getJSON(t, s, "/api/doc?url=https://www.example.com/lonely", http.StatusOK)
	for _, k := range []string{"outlinks", "inlinks", "duplicates", "similar", "history"} {
		wantArray(t, "lonely", m, k, 0)
	}

	m = getJSON(t, s, "/api/doc?url=https://nowhere.example/", http.StatusNotFound)
	wantKeys(t, "unknown", m, []string{"error"})
	m = getJSON(t, s, "/api/doc", http.StatusBadRequest)
	wantKeys(t, "missing", m, []string{"error"})
	getJSON(t, s, "/api/doc?url=", http.StatusBadRequest)
}

func TestClipBytes(t *testing.T) {
	s := "aé€😀"
	for n := range len(s) + 2 {
		got := clipBytes(s, n)
		if len(got) > n || !strings.HasPrefix(s, got) || !utf8Valid(got) {
			t.Errorf("clipBytes(%q, %d) = %q", s, n, got)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestDocPageLongText(t *testing.T) {
	f := canned()
	long := *f.docs["https://www.example.com/percolator"]
	long.Text = strings.Repeat("é", maxCachedText) // twice the limit in bytes
	f.docs["https://www.example.com/percolator"] = &long
	s, _ := newTestServer(t, f, Options{})
	_, body := get(t, s, "/doc?url=https://www.example.com/percolator")
	wantContains(t, "long", body, "Cut at 256 KiB.")
	if n := strings.Count(body, "é"); n != maxCachedText/2 {
		t.Errorf("%d characters of the cached copy shown, want %d", n, maxCachedText/2)
	}
}
