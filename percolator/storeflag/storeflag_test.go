package storeflag

import (
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
)

func TestParseTable(t *testing.T) {
	good := map[string]bigtable.Config{
		"bigtable://my-project/my-instance/webtable":        {Project: "my-project", Instance: "my-instance", Table: "webtable"},
		"bigtable://example.com:proj/inst-1/web_table.v2-a": {Project: "example.com:proj", Instance: "inst-1", Table: "web_table.v2-a"},
	}
	for s, want := range good {
		got, err := ParseTable(s)
		if err != nil || got.Project != want.Project || got.Instance != want.Instance || got.Table != want.Table {
			t.Errorf("ParseTable(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                   "want bigtable://",
		"webtable":                           "want bigtable://",
		"gs://p/i/t":                         "want bigtable://",
		"bigtable://my-project/my-instance":  "want bigtable://",
		"bigtable://my-project/inst/t/x":     "want bigtable://",
		"bigtable://P/my-instance/t":         "not a project id",
		"bigtable://my-project/i/t":          "not an instance id",
		"bigtable://my-project/my-instance/": "not a table id",
		"bigtable://my-project/my-instance/" + strings.Repeat("t", 44): "at most 43",
		"bigtable://my-project/my-instance/we b":                       "not a table id",
	}
	for s, msg := range bad {
		if _, err := ParseTable(s); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTable(%q) error = %v, want one saying %q", s, err, msg)
		}
	}
}

func TestFlags(t *testing.T) {
	var f Flags
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse([]string{"-table", "bigtable://my-project/my-instance/web", "-app-profile", "percolator"}); err != nil {
		t.Fatal(err)
	}
	if !f.Set() {
		t.Fatal("Set() = false after -table")
	}
	cfg, err := f.Config()
	if err != nil || cfg.AppProfile != "percolator" || cfg.Table != "web" {
		t.Fatalf("Config() = %+v, %v", cfg, err)
	}
	f.AppProfile = "bad profile"
	if _, err := f.Config(); err == nil {
		t.Error("Config() accepted app profile \"bad profile\"")
	}
	var none Flags
	none.Register(flag.NewFlagSet("y", flag.ContinueOnError))
	if none.Set() {
		t.Error("Set() = true without -table")
	}
}

func TestCheck(t *testing.T) {
	const table = "bigtable://my-project/my-instance/web"
	tests := []struct {
		name       string
		data       string
		f          Flags
		want       error
		wantSubstr string
	}{
		{name: "data", data: "/tmp/t"},
		{name: "table", f: Flags{Table: table}},
		{name: "table and profile", f: Flags{Table: table, AppProfile: "percolator"}},
		{name: "neither", want: ErrNoTable},
		{name: "both", data: "/tmp/t", f: Flags{Table: table}, want: ErrTwoTables},
		{name: "bad table", f: Flags{Table: "my-project/my-instance/web"}, wantSubstr: "want bigtable://"},
		{name: "profile alone", f: Flags{AppProfile: "percolator"}, wantSubstr: "-app-profile without -table"},
		{name: "profile with data", data: "/tmp/t", f: Flags{AppProfile: "percolator"}, wantSubstr: "-app-profile goes with -table"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Check(tc.data)
			switch {
			case tc.want != nil:
				if !errors.Is(err, tc.want) {
					t.Errorf("Check = %v, want %v", err, tc.want)
				}
			case tc.wantSubstr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantSubstr) {
					t.Errorf("Check = %v, want one saying %q", err, tc.wantSubstr)
				}
			case err != nil:
				t.Errorf("Check = %v", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		f  Flags
		ok bool
	}{
		{Flags{}, true},
		{Flags{Table: "bigtable://my-project/my-instance/web", AppProfile: "p"}, true},
		{Flags{AppProfile: "p"}, false},
		{Flags{Table: "bigtable://my-project/my-instance"}, false},
	} {
		if err := tc.f.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate = %v", tc.f, err)
		}
	}
}

// A host nothing listens on: Open gives up with a clear error instead of
// retrying for ever.
func TestOpenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
	defer func(d time.Duration) { OpenTimeout = d }(OpenTimeout)
	OpenTimeout = 2 * time.Second
	f := Flags{Table: "bigtable://my-project/my-instance/webtable"}
	began := time.Now()
	_, err = f.Open(t.Context())
	if err == nil || !strings.Contains(err.Error(), "not reachable within 2s") {
		t.Fatalf("Open = %v, want not reachable", err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("Open took %v", d)
	}
}

// TestOpenStoreRefusesIndexDir: a search -table index directory given as
// -data is refused with the table to give instead, and no Badger table is
// created in it.
func TestOpenStoreRefusesIndexDir(t *testing.T) {
	dir := t.TempDir()
	const table = "bigtable://my-project/my-instance/web"
	if err := os.WriteFile(filepath.Join(dir, TableFile), []byte(table+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var f Flags
	st, err := f.OpenStore(context.Background(), dir, badger.Options{})
	if err == nil {
		st.Close()
		t.Fatal("OpenStore opened a Badger table in a search -table index directory")
	}
	if !strings.Contains(err.Error(), "give -table "+table) {
		t.Errorf("OpenStore = %v, want an error naming -table %s", err, table)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory has %d entries, want only %s", len(entries), TableFile)
	}
}
