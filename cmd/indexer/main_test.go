package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// load writes a small web as the crawler would, then closes the table.
func load(t *testing.T, dir string, edit func(ctx context.Context, db *percolator.DB) error) {
	t.Helper()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	loadStore(t, st, edit)
}

// loadStore is load on the store st, which it closes.
func loadStore(t *testing.T, st percolator.Store, edit func(ctx context.Context, db *percolator.DB) error) {
	t.Helper()
	ctx := context.Background()
	db, err := percolator.Open(ctx, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx *percolator.Tx) error { return edit(ctx, db) }); err != nil {
		t.Fatal(err)
	}
	if err := percolatortest.Check(ctx, db); err != nil {
		t.Error(err)
	}
	if err := db.Close(); err != nil {
		t.Error(err)
	}
	if err := st.Close(); err != nil {
		t.Error(err)
	}
}

func fetchAll(ctx context.Context, db *percolator.DB) error {
	return db.Update(ctx, func(tx *percolator.Tx) error {
		for i := range 20 {
			row, _ := webtable.Row(fmt.Sprintf("http://site.test/p%d", i))
			body := fmt.Sprintf(`<html><title>Page %d</title><body>text %d <a href="/p%d">next</a></body></html>`, i, i%15, (i+1)%20)
			tx.Set(row, webtable.Status, []byte("200"))
			tx.Set(row, webtable.Type, []byte("text/html"))
			tx.Set(row, webtable.FetchedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10)))
			tx.Set(row, webtable.Body, []byte(body))
		}
		return nil
	})
}

func TestIndexUntilIdleThenVerify(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	load(t, dir, func(ctx context.Context, db *percolator.DB) error { return fetchAll(ctx, db) })
	if err := run(ctx, []string{"-data", dir, "-until-idle"}); err != nil {
		t.Fatalf("-until-idle: %v", err)
	}
	if err := run(ctx, []string{"-data", dir, "-verify"}); err != nil {
		t.Fatalf("-verify after indexing: %v", err)
	}
	for _, cmd := range [][]string{{"pending"}, {"failed"}, {"-batch"}, {"gc"}, {"rank-init"}, {"scan", "-start", "com.", "-end", "com.~"}} {
		if err := run(ctx, append(cmd, "-data", dir)); err != nil {
			t.Errorf("%v: %v", cmd, err)
		}
	}

	// Tamper with an exported document: verify must notice and fail.
	load(t, dir, func(ctx context.Context, db *percolator.DB) error {
		row, _ := webtable.Row("http://site.test/p7") // unique text: always its own canonical
		return db.Update(ctx, func(tx *percolator.Tx) error {
			return tx.Set(row, webtable.ExportLast, []byte(`{"title":"wrong"}`))
		})
	})
	if err := run(ctx, []string{"-data", dir, "-verify"}); !errors.Is(err, errDiffer) {
		t.Fatalf("-verify on a tampered table = %v, want errDiffer", err)
	}
}

func TestUsageErrors(t *testing.T) {
	ctx := context.Background()
	if err := run(ctx, []string{"-until-idle"}); err == nil {
		t.Error("missing -data accepted")
	}
	if err := run(ctx, []string{"bogus", "-data", t.TempDir()}); err == nil {
		t.Error("unknown command accepted")
	}
	// A command after the flags would otherwise run the observers.
	if err := run(ctx, []string{"-data", t.TempDir(), "pending"}); err == nil || !strings.Contains(err.Error(), "the command comes first") {
		t.Errorf("command after the flags: %v, want an error saying the command comes first", err)
	}
}
