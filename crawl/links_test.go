package crawl

import (
	"io"
	"net/http"
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

// The crawler follows the links package extract gives the parse observer:
// not rel=nofollow, ugc or sponsored links, not links inside <template>;
// and it honours robots rules for all robots and for extract.Agent (meta
// and X-Robots-Tag), not those for other robots. A noindex page's links are
// followed.
func TestLinkRules(t *testing.T) {
	s := newSite(t)
	s.page("/", `<html><head><title>root</title></head><body>
		<a href="/ok">ok</a>
		<a href="/ugc" rel="ugc">ugc</a>
		<a href="/sponsored" rel="Sponsored">sponsored</a>
		<a href="/mixed" rel="external ugc">mixed</a>
		<area href="/area-nofollow" rel="nofollow">
		<template><a href="/template">template</a><div><a href="/template-deep">deep</a></div></template>
		<a href="/after-template">after</a>
		<a href="/bot-meta">bot meta</a>
		<a href="/bot-meta-none">bot meta none</a>
		<a href="/other-bot-meta">other bot meta</a>
		<a href="/bot-header">bot header</a>
		<a href="/other-bot-header">other bot header</a>
		<a href="/noindex">noindex</a>
		</body></html>`)
	s.page("/bot-meta", `<html><head><meta name="Caffeine-Crawler" content="nofollow"></head><body><a href="/hidden-bot-meta">h</a></body></html>`)
	s.page("/bot-meta-none", `<html><head><meta name="caffeine-crawler" content="none"></head><body><a href="/hidden-bot-meta-none">h</a></body></html>`)
	s.page("/other-bot-meta", `<html><head><meta name="googlebot" content="nofollow"></head><body><a href="/shown-other-bot-meta">s</a></body></html>`)
	s.page("/noindex", `<html><head><meta name="robots" content="noindex"></head><body><a href="/shown-noindex">s</a></body></html>`)
	for path, header := range map[string]string{"/bot-header": "caffeine-crawler: nofollow", "/other-bot-header": "otherbot: nofollow"} {
		s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("X-Robots-Tag", header)
			io.WriteString(w, `<a href="/from`+path+`">x</a>`)
		})
	}
	for _, p := range []string{"/ok", "/after-template", "/shown-other-bot-meta", "/shown-noindex", "/from/other-bot-header"} {
		s.page(p, `<p>leaf</p>`)
	}
	tb := openTable(t, "")
	opt := testOptions(s.URL + "/")
	opt.NoSitemaps = true
	tb.crawl(opt)

	for _, p := range []string{"/ok", "/after-template", "/bot-meta", "/other-bot-meta", "/shown-other-bot-meta",
		"/noindex", "/shown-noindex", "/bot-header", "/other-bot-header", "/from/other-bot-header"} {
		if s.count(p) != 1 {
			t.Errorf("%s fetched %d times, want 1", p, s.count(p))
		}
	}
	for _, p := range []string{"/ugc", "/sponsored", "/mixed", "/area-nofollow", "/template", "/template-deep",
		"/hidden-bot-meta", "/hidden-bot-meta-none", "/from/bot-header"} {
		if s.count(p) != 0 {
			t.Errorf("%s fetched", p)
		}
		if tb.get(s.URL+p, webtable.Depth) != nil {
			t.Errorf("%s enqueued", p)
		}
	}
}
