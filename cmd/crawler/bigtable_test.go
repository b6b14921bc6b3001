package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
)

// TestMain runs the tests against a Bigtable emulator: the one
// BIGTABLE_EMULATOR_HOST names, or one it builds and starts.
func TestMain(m *testing.M) { os.Exit(emulator.Main(m)) }

// emulatorTable names a table of the emulator for -table.
func emulatorTable(name string) string { return "bigtable://caffeine/emulator/" + name }

// Every subcommand on a Bigtable table (-table): crawl, recrawl (written
// into the table: nothing holds a Bigtable table), crawl again, and
// import into another table.
func TestBigtable(t *testing.T) {
	h, srv := newHits(t)
	table := emulatorTable("crawler-crawl")
	warcs := t.TempDir()
	runOK(t, "3 pages (0 errors", append([]string{"-table", table, "-seeds", srv.URL + "/", "-once", "-warc-out", warcs}, slowCrawl...)...)
	runOK(t, "0 pages", "-table", table, "-once", "-allow-private")
	runOK(t, "crawler recrawl: 1 page due now; a crawler or search on "+table+" fetches them", "recrawl", "-table", table, srv.URL+"/a")
	runOK(t, "1 pages (0 errors", "-table", table, "-once", "-allow-private")
	if h.count("/a") != 2 || h.count("/b") != 1 {
		t.Errorf("fetches: /a %d, /b %d; want /a again only", h.count("/a"), h.count("/b"))
	}
	files, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("WARC files %q, want one", files)
	}
	var out bytes.Buffer
	if code := run([]string{"recrawl", "-table", emulatorTable("crawler-nowhere"), srv.URL + "/a"}, &out); code != 1 || !strings.Contains(out.String(), "no table bigtable://caffeine/emulator/crawler-nowhere") {
		t.Errorf("recrawl on a missing table = %d:\n%s", code, &out)
	}
	other := emulatorTable("crawler-import")
	runOK(t, "3 loaded", "import", "-table", other, "-app-profile", "default", files[0])
	runOK(t, "0 loaded", "import", "-table", other, files[0])
}

// -data or -table, exactly one, and a -table that parses, for every
// subcommand.
func TestTableFlags(t *testing.T) {
	dir, table := t.TempDir(), emulatorTable("crawler-flags")
	for _, sub := range [][]string{{}, {"import"}, {"recrawl"}} {
		for _, tc := range []struct {
			name string
			args []string
			out  string
		}{
			{"neither", nil, "no table: give -data DIR"},
			{"both", []string{"-data", dir, "-table", table}, "-data and -table both name a table"},
			{"bad table", []string{"-table", "caffeine/emulator/t"}, "want bigtable://PROJECT/INSTANCE/TABLE"},
			{"bad instance", []string{"-table", "bigtable://caffeine/emu/t"}, `instance "emu" is not an instance id`},
			{"app profile with -data", []string{"-data", dir, "-app-profile", "p"}, "-app-profile goes with -table"},
		} {
			args := append(append(append([]string{}, sub...), tc.args...), "-seeds", "http://example.com/")
			if len(sub) > 0 {
				args = append(append(append([]string{}, sub...), tc.args...), "http://example.com/")
			}
			t.Run(strings.Join(append(sub, tc.name), " "), func(t *testing.T) {
				var out bytes.Buffer
				if code := run(args, &out); code != 2 || !strings.Contains(out.String(), tc.out) {
					t.Errorf("run(%q) = %d, output:\n%s\nwant 2 and %q", args, code, out.String(), tc.out)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
		t.Error("a bad command line opened the table")
	}
}
