package crawl

import (
	"slices"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestLinks(t *testing.T) {
	s := newSite(t)
	host := strings.TrimPrefix(s.URL, "http://")
	s.page("/", `<html><head><title>root</title></head><body>
		<a href="rel.html">relative</a>
		<a href="/abs">absolute path</a>
		<a href="`+s.URL+`/full">absolute URL</a>
		<a href="//`+host+`/proto">protocol-relative</a>
		<a href="dir/../dot?x=1#frag">dots and fragment</a>
		<a href="#top">fragment only</a>
		<a href="mailto:a@example.com">mail</a>
		<a href="javascript:alert(1)">js</a>
		<a href="/nofollow" rel="nofollow">nofollow</a>
		<a href="http://other.example.com/x">other host</a>
		<area href="/area">
		</body></html>`)
	s.page("/base.html", `<html><head><base href="/sub/"></head><body><a href="based">b</a></body></html>`)
	s.page("/meta.html", `<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="/hidden">h</a></body></html>`)
	for _, p := range []string{"/rel.html", "/abs", "/full", "/proto", "/dot", "/area", "/sub/based"} {
		s.page(p, `<p>leaf</p><a href="/base.html">base</a> <a href="/meta.html">meta</a>`)
	}
	tb := openTable(t, "")
	tb.crawl(testOptions(s.URL + "/"))

	var want []string
	for _, p := range []string{"/", "/rel.html", "/abs", "/full", "/proto", "/dot?x=1", "/area", "/base.html", "/meta.html", "/sub/based"} {
		want = append(want, s.URL+p)
	}
	got := tb.pages()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("pages:\n got %q\nwant %q", got, want)
	}
	for _, p := range []string{"/nofollow", "/hidden"} {
		if s.count(p) != 0 {
			t.Errorf("%s fetched", p)
		}
	}
	for _, u := range want {
		if st := string(tb.get(u, webtable.Status)); st != "200" {
			t.Errorf("%s status %q", u, st)
		}
		if tb.get(u, webtable.Body) == nil {
			t.Errorf("%s has no body", u)
		}
	}
	if d := string(tb.get(s.URL+"/sub/based", webtable.Depth)); d != "3" { // / → /rel.html → /base.html → /sub/based
		t.Errorf("depth of /sub/based = %s, want 3", d)
	}
}
