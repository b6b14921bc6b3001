package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestTopPage(t *testing.T) {
	f := canned()
	s, _ := newTestServer(t, f, Options{})
	res, body := get(t, s, "/top")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "top", body,
		"<h1>Top pages</h1>",
		`<a href="/doc?url=https%3A%2F%2Fwww.example.com%2F">Example home</a>`,
		`<td class="num">12.8</td>`, "<td class=\"num\"><span title=\"from other hosts\">1\u202f234</span><div class=\"n\" title=\"from the page’s own host\">56 on host</div></td>",
		`<a href="/top?host=www.example.com">www.example.com</a></td><td class="num">1`+"\u202f"+`169</td>`,
	)
	res, body = get(t, s, "/top?host=www.example.com&n=5")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "host", body, "<h1>Pages of www.example.com</h1>", `<a href="/top">← all hosts</a>`, `<tr class="current">`)

	res, body = get(t, s, "/top?host=empty.example")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "empty", body, "No pages yet.", "No hosts yet.")

	if res, _ := get(t, s, "/top?host=unknown.example"); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown host: status %d", res.StatusCode)
	}
	for _, target := range []string{"/top?n=0", "/top?n=101", "/top?n=x", "/top?host=" + strings.Repeat("a", 254)} {
		if res, _ := get(t, s, target); res.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %.40s: status %d, want 400", target, res.StatusCode)
		}
	}
	want := []string{"Top  25", "Top www.example.com 5", "Top empty.example 25", "Top unknown.example 25"}
	if got := f.calls(); !slices.Equal(got, want) {
		t.Errorf("backend calls %q, want %q", got, want)
	}
}

func TestAPITop(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	m := getJSON(t, s, "/api/top", http.StatusOK)
	wantKeys(t, "top", m, []string{"pages", "hosts"}, "host")
	p := wantArray(t, "top", m, "pages", 3)
	wantKeys(t, "page", p[0].(map[string]any), []string{"url", "title", "pagerank", "inbound", "inbound_host"})
	h := wantArray(t, "top", m, "hosts", 2)
	wantKeys(t, "host", h[0].(map[string]any), []string{"host", "pages"})

	m = getJSON(t, s, "/api/top?host=www.example.com&n=10", http.StatusOK)
	if m["host"] != "www.example.com" {
		t.Errorf("host %v", m["host"])
	}
	m = getJSON(t, s, "/api/top?host=empty.example", http.StatusOK)
	wantArray(t, "empty", m, "pages", 0)
	wantArray(t, "empty", m, "hosts", 0)

	getJSON(t, s, "/api/top?host=unknown.example", http.StatusNotFound)
	for _, target := range []string{"/api/top?n=0", "/api/top?n=1000", "/api/top?n=abc"} {
		m := getJSON(t, s, target, http.StatusBadRequest)
		wantKeys(t, target, m, []string{"error"})
	}
}
