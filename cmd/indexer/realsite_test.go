package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/internal/testsite"
)

// The binaries as a user runs them on a site with redirects, loops, 404s,
// robots.txt and a file server's dir/index.html redirects: crawler, then
// indexer -until-idle, then indexer -verify exits 0.
func TestBinariesRealSiteVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "../crawler", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	s := testsite.New(t)
	dir := t.TempDir()
	var verify string
	for _, args := range [][]string{
		{"crawler", "-data", dir, "-seeds", s.URL + "/", "-allow-private", "-once", "-q", "-delay", "0", "-no-sitemaps"},
		{"indexer", "-data", dir, "-until-idle"},
		{"indexer", "-data", dir, "-verify"},
	} {
		out, err := exec.Command(filepath.Join(bin, args[0]), args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		verify = string(out)
	}
	if !strings.Contains(verify, "agrees") {
		t.Errorf("indexer -verify said:\n%s", verify)
	}
}
