package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/termline"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storeflag"
	"github.com/caffeine-go/caffeine/webtable"
)

// tableName names the table of a subcommand in messages.
func tableName(tf *storeflag.Flags, dir string) string {
	if tf.Set() {
		return tf.Table
	}
	return dir
}

// newLogger returns the command's logger: -v logs at debug level, -q only
// warnings. On a terminal, without -q, its writer keeps a status line
// below the log (tty).
func newLogger(stderr io.Writer, verbose, quiet bool) (log *slog.Logger, w *termline.Writer, tty bool) {
	level := slog.LevelInfo
	switch {
	case verbose:
		level = slog.LevelDebug
	case quiet:
		level = slog.LevelWarn
	}
	tty = termline.IsTerminal(os.Stderr) && !quiet
	w = &termline.Writer{W: stderr, TTY: tty}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), w, tty
}

// dataUsage is the help of -data of the subcommands that take -data or
// -table.
const dataUsage = "table `directory` (embedded Badger); this or -table"

// tableFlags registers -table and -app-profile on fs.
func tableFlags(fs *flag.FlagSet) *storeflag.Flags {
	tf := new(storeflag.Flags)
	tf.Register(fs)
	return tf
}

// checkTable checks that exactly one of -data and -table names the table.
// If not, it says so on fs's output (with the usage when neither is
// given) and returns false: exit code 2.
func checkTable(fs *flag.FlagSet, tf *storeflag.Flags, data string) bool {
	err := tf.Check(data)
	if err == nil {
		return true
	}
	fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
	if errors.Is(err, storeflag.ErrNoTable) {
		fs.Usage()
	}
	return false
}

// table is the web table a subcommand opened.
type table struct {
	st  percolator.Store
	db  *percolator.DB
	log *slog.Logger
}

// openTable opens the table the flags name: the Bigtable table of -table,
// or the Badger table in dir with the budget's share for its caches (a nil
// budget: Badger's defaults). A Badger error keeps Badger's message, so
// that a caller can tell a directory another process holds (locked).
func openTable(ctx context.Context, tf *storeflag.Flags, dir string, mem *budget.Budget, log *slog.Logger) (*table, error) {
	var cache int64
	if mem != nil {
		cache = mem.TableBytes()
	}
	st, err := tf.OpenStore(ctx, dir, badger.Options{CacheBytes: cache})
	if err != nil {
		return nil, err
	}
	db, err := percolator.Open(ctx, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, Logger: log})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &table{st: st, db: db, log: log}, nil
}

// Close closes the DB, then the store.
func (t *table) Close() error {
	err := t.db.Close()
	storeflag.LogCalls(t.log, t.st)
	if serr := t.st.Close(); err == nil {
		err = serr
	}
	return err
}

// watch returns a context that a full disk or a broken store cancels, and
// the func that ends the watch and returns that error (badger.Watch).
func (t *table) watch(ctx context.Context) (context.Context, func() error) {
	return badger.Watch(ctx, t.st)
}
