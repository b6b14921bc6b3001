package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/testsite"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
)

// TestMain runs the tests against a Bigtable emulator: the one
// BIGTABLE_EMULATOR_HOST names, or one it builds and starts.
func TestMain(m *testing.M) {
	code := emulator.Main(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built holds the crawler and indexer binaries, built once for the tests
// that run them.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// binaries builds crawler and indexer once and returns their directory.
func binaries(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "caffeine-bin-"); built.err != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", built.dir, "../crawler", "../indexer").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

// emulatorTable names a table of the emulator for -table.
func emulatorTable(name string) string { return "bigtable://caffeine/emulator/" + name }

// The separate binaries on a Cloud Bigtable table (the emulator), one
// after another as a user runs them: crawler -table, indexer -table
// -until-idle, indexer -table -verify, then search -table with a new
// local directory for its index, which it builds from the table and
// answers from through the JSON API.
func TestBigtableBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands")
	}
	bin := binaries(t)
	s := testsite.New(t)
	table := emulatorTable("search-binaries")
	var verify string
	for _, args := range [][]string{
		{"crawler", "-table", table, "-seeds", s.URL + "/", "-allow-private", "-once", "-q", "-delay", "0", "-no-sitemaps"},
		{"indexer", "-table", table, "-until-idle"},
		{"indexer", "-table", table, "-verify"},
	} {
		began := time.Now()
		out, err := exec.Command(filepath.Join(bin, args[0]), args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		t.Logf("%s %s: %v", args[0], args[len(args)-1], time.Since(began).Round(time.Millisecond))
		verify = string(out)
	}
	if !strings.Contains(verify, "agrees") {
		t.Errorf("indexer -verify said:\n%s", verify)
	}

	dir := t.TempDir()
	began := time.Now()
	d := start(t, "-table", table, "-data", dir, "-no-crawl")
	st := d.waitIdle(60 * time.Second)
	t.Logf("search idle: %v", time.Since(began).Round(time.Millisecond))
	if st.Indexed == 0 {
		t.Fatalf("nothing indexed: %+v", st)
	}
	want := s.URL + "/docs/a.html"
	n, hits := d.search("alpha")
	if n != 1 || hits[0].URL != want {
		t.Errorf("alpha: %d hits %+v, want %s", n, hits, want)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("search exited with %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(dir, engine.TableFile)); err != nil || strings.TrimSpace(string(b)) != table {
		t.Errorf("%s: %q, %v; want the table's name", engine.TableFile, b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
		t.Error("a Badger table was created in the index directory")
	}

	// The directory again: its index, not rebuilt.
	d = start(t, "-table", table, "-data", dir, "-no-crawl")
	if n, _ := d.search("alpha"); n != 1 {
		t.Errorf("alpha after a restart: %d hits", n)
	}
	if strings.Contains(d.log.String(), "building the serving index") {
		t.Errorf("index rebuilt on a restart:\n%s", d.log.String())
	}
	d.stop()

	// The directory as a Badger table, or with another table: refused.
	for _, args := range [][]string{
		{"-data", dir},
		{"-table", emulatorTable("search-other"), "-data", dir},
	} {
		var out syncBuffer
		if code := run(context.Background(), append(args, "-no-crawl"), &out, nil); code != 1 || !strings.Contains(out.String(), "holds the serving index of "+table) {
			t.Errorf("search %q = %d, want 1 and a refusal naming %s:\n%s", args, code, table, out.String())
		}
	}
}

func TestTableFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-table", emulatorTable("search-flags")}, "-table needs -data DIR too"},
		{[]string{"-table", "bigtable://caffeine/emulator", "-data", t.TempDir()}, "want bigtable://PROJECT/INSTANCE/TABLE"},
		{[]string{"-table", "bigtable://Caffeine/emulator/t", "-data", t.TempDir()}, `project "Caffeine" is not a project id`},
		{[]string{"-app-profile", "p", "-data", t.TempDir()}, "-app-profile without -table"},
	} {
		var out syncBuffer
		if code := run(context.Background(), tc.args, &out, nil); code != 2 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("search %q = %d, want 2 and %q:\n%s", tc.args, code, tc.want, out.String())
		}
	}
}
