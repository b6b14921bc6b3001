package crawl

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/extract"
	manual "github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// agreePage is a page served alone by its own server: every other path is
// a 404, so the pages the crawler adds on that host are exactly the links
// it followed from it.
type agreePage struct {
	name        string
	path        string
	contentType string
	xRobots     string
	body        []byte
}

// The links the crawler follows from a page are the links the parse
// observer stores for it (those in scope), page by page: hand-written
// pages with every link rule, the extract fixtures in their charsets, and
// a sample of the PostgreSQL manual.
func TestCrawlerAndParserAgree(t *testing.T) {
	pages := []agreePage{
		{name: "rules", path: "/", contentType: "text/html", body: []byte(`<html><head>
			<base href="/docs/"><meta name="googlebot" content="nofollow"></head><body>
			<a href="a.html">a</a> <a href="../b.html">b</a> <a href="/c?x=1#f">c</a> <a href="c?x=1">c again</a>
			<a href="d" rel="nofollow">d</a> <a href="e" rel="ugc">e</a> <a href="f" rel="sponsored noopener">f</a>
			<area href="g" rel="UGC"><area href="h" alt="h">
			<template><a href="i">i</a></template><svg><a href="j">j</a></svg>
			<a href="   k  ">k</a> <a href="l	m">lm</a> <a href="%2e%2e/n">n</a> <a href="#top">self</a>
			<a href="mailto:x@example.com">mail</a> <a href="http://other.example/o">other host</a>
			<a href="/docs/">self via base</a> <a href="/p/q/../r">dots</a>
			</body></html>`)},
		{name: "bot nofollow meta", path: "/bot.html", contentType: "text/html", body: []byte(
			`<meta name="caffeine-crawler" content="nofollow"><a href="/x">x</a>`)},
		{name: "robots none meta", path: "/none.html", contentType: "text/html", body: []byte(
			`<meta name="robots" content="none"><a href="/x">x</a>`)},
		{name: "noindex meta", path: "/noindex.html", contentType: "text/html", body: []byte(
			`<meta name="robots" content="noindex"><a href="/x">x</a><a href="/y">y</a>`)},
		{name: "bot header", path: "/h.html", contentType: "text/html", xRobots: "caffeine-crawler: nofollow", body: []byte(
			`<a href="/x">x</a>`)},
		{name: "other bot header", path: "/o.html", contentType: "text/html", xRobots: "otherbot: nofollow", body: []byte(
			`<a href="/x">x</a>`)},
		{name: "meta charset latin1", path: "/latin1.html", contentType: "text/html", body: []byte(
			"<meta charset=\"iso-8859-1\"><a href=\"/caf\xe9\">caf\xe9</a><a href=\"/na\xefve?q=\xfc\">x</a>")},
		{name: "header charset latin1", path: "/latin1h.html", contentType: "text/html; charset=ISO-8859-1", body: []byte(
			"<a href=\"/caf\xe9\">caf\xe9</a><a href=\"/\xe0/b\">x</a>")},
		{name: "undeclared utf-8", path: "/u.html", contentType: "text/html", body: []byte(
			`<a href="/café">café</a><a href="/日本">x</a>`)},
		{name: "xhtml", path: "/x.xhtml", contentType: "application/xhtml+xml", body: []byte(
			`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><a href="/y"/></body></html>`)},
		{name: "sniffed", path: "/sniffed", contentType: "", body: []byte(
			`<!DOCTYPE html><html><body><a href="/y">y</a></body></html>`)},
		{name: "not html", path: "/plain.txt", contentType: "text/plain", body: []byte(
			`<a href="/y">y</a>`)},
	}
	fixtures, err := filepath.Glob(filepath.Join("..", "extract", "testdata", "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ct := "text/html"
		if strings.HasPrefix(filepath.Base(f), "latin1") {
			ct = "text/html; charset=ISO-8859-1"
		}
		pages = append(pages, agreePage{name: filepath.Base(f), path: "/" + filepath.Base(f), contentType: ct, body: b})
	}
	t.Run("pages", func(t *testing.T) { checkAgreement(t, pages) })
	t.Run("manual", func(t *testing.T) {
		var sample []agreePage
		for i, p := range manual.Pages(t) {
			if i%25 == 0 {
				sample = append(sample, agreePage{name: p.Path, path: "/" + p.Path, contentType: "text/html", body: p.Body})
			}
		}
		checkAgreement(t, sample)
	})
}

// checkAgreement crawls pages, each from its own server, runs the parse
// observer on each, and compares, per page, the links it stored (those in
// the crawl's scope) with the pages the crawler added to the page's host.
func checkAgreement(t *testing.T, pages []agreePage) {
	var seeds []string
	for _, p := range pages {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.RequestURI() != p.path {
				http.NotFound(w, r)
				return
			}
			if p.contentType != "" {
				w.Header().Set("Content-Type", p.contentType)
			} else {
				w.Header()["Content-Type"] = nil // no sniffing by net/http
			}
			if p.xRobots != "" {
				w.Header().Set("X-Robots-Tag", p.xRobots)
			}
			w.Write(p.body)
		}))
		t.Cleanup(srv.Close)
		seeds = append(seeds, srv.URL+p.path)
	}
	tb := openTable(t, "")
	opt := testOptions(seeds...)
	opt.NoSitemaps = true
	tb.crawl(opt)

	crawled := map[string][]string{} // host → page URLs
	for _, u := range tb.pages() {
		crawled[hostPort(u)] = append(crawled[hostPort(u)], u)
	}
	parse := observers.Parse()
	ctx := context.Background()
	followed := 0
	for i, p := range pages {
		seed, err := webtable.Normalize(seeds[i])
		if err != nil {
			t.Fatal(err)
		}
		row := rowOf(t, seed)
		if b := tb.get(seed, webtable.Body); !bytes.Equal(b, p.body) {
			// What both sides read: the bytes served, whatever the charset.
			t.Errorf("%s: stored body %q, served %q", p.name, b, p.body)
		}
		var stored, state []byte
		err = tb.db.Update(ctx, func(tx *percolator.Tx) error {
			if err := parse.Run(ctx, tx, row, webtable.Body); err != nil {
				return err
			}
			if stored, err = tx.Get(ctx, row, webtable.Links); err != nil {
				return err
			}
			state, err = tx.Get(ctx, row, webtable.State)
			return err
		})
		if err != nil {
			t.Fatalf("%s: parse: %v", p.name, err)
		}
		var links []extract.Link
		if stored != nil {
			if err := json.Unmarshal(stored, &links); err != nil {
				t.Fatalf("%s: %s: %v", p.name, webtable.Links, err)
			}
		}
		if string(state) == webtable.StateNoIndex {
			// The chain records no links for a page kept out of the index;
			// the crawler follows them: those extract reads from the
			// stored page.
			if stored != nil {
				t.Errorf("%s: noindex page has %s", p.name, webtable.Links)
			}
			page, err := extract.HTML(seed, tb.get(seed, webtable.Body), string(tb.get(seed, webtable.Type)), extract.Options{XRobotsTag: p.xRobots})
			if err != nil {
				t.Fatal(err)
			}
			links = page.Links
		}
		host := hostPort(seed)
		var want []string // the parse observer's links in the crawl's scope
		for _, l := range links {
			if _, err := webtable.Row(l.URL); err == nil && hostPort(l.URL) == host {
				want = append(want, l.URL)
			}
		}
		var got []string // the pages the crawler added from this one
		for _, u := range crawled[host] {
			if u != seed {
				got = append(got, u)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: crawler followed %q\nparse observer stored %q", p.name, got, want)
		}
		followed += len(got)
	}
	t.Logf("%d pages, %d links followed", len(pages), followed)
	if followed == 0 {
		t.Error("no links followed at all")
	}
}
