package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/termline"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/webtable"
)

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

// table is the web table a subcommand opened.
type table struct {
	st *badger.Store
	db *percolator.DB
}

// openTable opens the table in dir with the budget's share for its caches
// (a nil budget: Badger's defaults). The error is Badger's as it is, so
// that a caller can tell a directory another process holds (locked).
func openTable(ctx context.Context, dir string, mem *budget.Budget, log *slog.Logger) (*table, error) {
	var cache int64
	if mem != nil {
		cache = mem.TableBytes()
	}
	st, err := badger.Open(dir, badger.Options{CacheBytes: cache})
	if err != nil {
		return nil, err
	}
	db, err := percolator.Open(ctx, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, Logger: log})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &table{st: st, db: db}, nil
}

// Close closes the DB, then the store.
func (t *table) Close() error {
	err := t.db.Close()
	if serr := t.st.Close(); err == nil {
		err = serr
	}
	return err
}
