package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/storeflag"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestMain runs the tests against a Bigtable emulator: the one
// BIGTABLE_EMULATOR_HOST names, or one it builds and starts.
func TestMain(m *testing.M) { os.Exit(emulator.Main(m)) }

// emulatorTable names a table of the emulator for -table.
func emulatorTable(name string) string { return "bigtable://caffeine/emulator/" + name }

// loadTable is load on the Bigtable table of -table.
func loadTable(t *testing.T, table string, edit func(ctx context.Context, db *percolator.DB) error) {
	t.Helper()
	ctx := context.Background()
	st, err := (&storeflag.Flags{Table: table}).Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loadStore(t, st, edit)
}

// Every command on a Bigtable table (-table), as on Badger.
func TestBigtableUntilIdleThenVerify(t *testing.T) {
	ctx := context.Background()
	table := emulatorTable("indexer-verify")
	loadTable(t, table, fetchAll)
	if err := run(ctx, []string{"-table", table, "-until-idle"}); err != nil {
		t.Fatalf("-until-idle: %v", err)
	}
	if err := run(ctx, []string{"-table", table, "-verify"}); err != nil {
		t.Fatalf("-verify after indexing: %v", err)
	}
	for _, cmd := range [][]string{{"pending"}, {"failed"}, {"-batch"}, {"gc"}, {"rank-init"}, {"scan", "-start", "com.", "-end", "com.~"}} {
		if err := run(ctx, append(cmd, "-table", table)); err != nil {
			t.Errorf("%v: %v", cmd, err)
		}
	}
	loadTable(t, table, func(ctx context.Context, db *percolator.DB) error {
		row, _ := webtable.Row("http://site.test/p7")
		return db.Update(ctx, func(tx *percolator.Tx) error {
			return tx.Set(row, webtable.ExportLast, []byte(`{"title":"wrong"}`))
		})
	})
	if err := run(ctx, []string{"-table", table, "-verify"}); !errors.Is(err, errDiffer) {
		t.Fatalf("-verify on a tampered table = %v, want errDiffer", err)
	}
}

func TestTableFlags(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"neither", []string{"-until-idle"}, "no table: give -data DIR"},
		{"both", []string{"-data", dir, "-table", emulatorTable("indexer-flags")}, "both name a table"},
		{"bad table", []string{"-table", "bigtable://caffeine/emulator"}, "want bigtable://PROJECT/INSTANCE/TABLE"},
		{"profile alone", []string{"-app-profile", "p"}, "-app-profile without -table"},
	} {
		for _, cmd := range [][]string{nil, {"pending"}, {"gc"}} {
			args := append(append([]string{}, cmd...), tc.args...)
			if err := run(ctx, args); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: run(%q) = %v, want an error saying %q", tc.name, args, err, tc.want)
			}
		}
	}
}
