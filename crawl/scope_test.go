package crawl

import (
	"slices"
	"testing"
)

func TestScope(t *testing.T) {
	seeds := []string{"http://www.example.com/docs/index.html", "http://127.0.0.1:8080/a/"}
	tests := []struct {
		mode Scope
		url  string
		want bool
	}{
		{ScopeHost, "http://www.example.com/other", true},
		{ScopeHost, "https://www.example.com/", true},
		{ScopeHost, "http://blog.example.com/", false},
		{ScopeHost, "http://www.example.com:8080/", false},
		{ScopeHost, "http://127.0.0.1:8080/x", true},
		{ScopeHost, "http://127.0.0.1:8081/x", false},
		{ScopeDomain, "http://blog.example.com/", true},
		{ScopeDomain, "http://www.example.com:8080/", true},
		{ScopeDomain, "http://example.org/", false},
		{ScopeDomain, "http://evilexample.com/", false},
		{ScopeDomain, "http://127.0.0.1:9/", true},
		{ScopePrefix, "http://www.example.com/docs/a.html", true},
		{ScopePrefix, "http://www.example.com/docs/", true},
		{ScopePrefix, "http://www.example.com/doc", false},
		{ScopePrefix, "http://www.example.com/", false},
		{ScopePrefix, "http://127.0.0.1:8080/a/b/c", true},
		{ScopePrefix, "http://127.0.0.1:8080/b", false},
	}
	for _, tc := range tests {
		if got := newScope(tc.mode, seeds).contains(tc.url); got != tc.want {
			t.Errorf("%s scope: contains(%q) = %v, want %v", tc.mode, tc.url, got, tc.want)
		}
	}
}

// The scope modes end to end: prefix keeps to the seed's directory.
func TestScopePrefixCrawl(t *testing.T) {
	s := newSite(t)
	s.page("/docs/", `<a href="a.html">a</a> <a href="/other/b.html">b</a> <a href="/docs/sub/c.html">c</a>`)
	for _, p := range []string{"/docs/a.html", "/other/b.html", "/docs/sub/c.html"} {
		s.page(p, "leaf")
	}
	for _, tc := range []struct {
		mode Scope
		want []string
	}{
		{ScopePrefix, []string{"/docs/", "/docs/a.html", "/docs/sub/c.html"}},
		{ScopeHost, []string{"/docs/", "/docs/a.html", "/docs/sub/c.html", "/other/b.html"}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			tb := openTable(t, "")
			opt := testOptions(s.URL + "/docs/")
			opt.Scope = tc.mode
			tb.crawl(opt)
			var want []string
			for _, p := range tc.want {
				want = append(want, s.URL+p)
			}
			got := tb.pages()
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("pages %q, want %q", got, want)
			}
		})
	}
}
