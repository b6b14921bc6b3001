package main

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSeparateBinaries runs crawler, indexer and search one after another
// on one directory and checks that it serves what the one command serves.
func TestSeparateBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands")
	}
	bin := binaries(t)
	s := &site{pages: map[string]string{
		"/":          page("Home", "welcome to the aardvark archive", "/a.html", "/dup1.html", "/dup2.html", "/b.html"),
		"/a.html":    page("Aardvark facts", "the aardvark eats termites at night", "/", "/b.html"),
		"/b.html":    page("Bandicoot", "a bandicoot digs for termites", "/"),
		"/dup1.html": page("Copy", "identical duplicated wombat content", "/"),
		"/dup2.html": page("Copy", "identical duplicated wombat content", "/"),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	crawlArgs := []string{"-seeds", srv.URL + "/", "-allow-private", "-delay", "0", "-no-sitemaps"}

	dir := t.TempDir()
	for _, args := range [][]string{
		append([]string{"crawler", "-data", dir, "-once", "-q"}, crawlArgs...),
		{"indexer", "-data", dir, "-until-idle"},
	} {
		cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	separate := start(t, "-data", dir)
	separate.waitIdle(30 * time.Second)
	separate.waitLog("idle: everything fetched is searchable", 10*time.Second)
	together := start(t, append([]string{"-data", t.TempDir()}, crawlArgs...)...)
	together.waitIdleWith(60*time.Second, func(s stats) bool { return s.Indexed == 4 })

	for _, q := range []string{"termites", "wombat", "aardvark", "home", "bandicoot termites"} {
		_, a := separate.search(q)
		_, b := together.search(q)
		// PageRank may differ within its tolerance, and with it the order.
		byURL := func(x, y hit) int { return strings.Compare(x.URL, y.URL) }
		slices.SortFunc(a, byURL)
		slices.SortFunc(b, byURL)
		if !slices.EqualFunc(a, b, func(x, y hit) bool {
			return x.URL == y.URL && x.Title == y.Title && slices.Equal(x.Duplicates, y.Duplicates) && slices.Equal(x.Anchors, y.Anchors)
		}) {
			t.Errorf("%q: separate %+v, one command %+v", q, a, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "serving-index")); err != nil {
		t.Errorf("index not in the table directory: %v", err)
	}
}
