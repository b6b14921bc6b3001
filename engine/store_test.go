package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/webtable"
)

// closeCounter is a store that counts its Close calls.
type closeCounter struct {
	percolator.Store
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return c.Store.Close() }

// openShared opens the Badger table in dir as a caller-opened store, as
// cmd/search opens a Bigtable one.
func openShared(t *testing.T, dir string) *closeCounter {
	t.Helper()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &closeCounter{Store: st}
}

// exportDoc writes an exported document into the table in dir as the
// export observer would, without its queue row: only a rebuild from the
// table finds it.
func exportDoc(t *testing.T, dir, url string) {
	t.Helper()
	ctx := context.Background()
	st := openShared(t, dir)
	db, err := percolator.Open(ctx, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if err != nil {
		t.Fatal(err)
	}
	row, err := webtable.Row(url)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(webtable.Doc{URL: url, Host: "site.test", Title: "Aardvark", Text: "the aardvark eats termites", FetchedAt: time.Now()})
	err = db.Update(ctx, func(tx *percolator.Tx) error {
		if err := tx.Set(row, webtable.ExportLast, doc); err != nil {
			return err
		}
		return tx.Set(row, webtable.ExportDigest, []byte("d1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// With a store the caller opened (Bigtable in cmd/search), the directory
// holds the serving index only, built from the table when new, and never
// serves another table's index: the table it belongs to is in TableFile.
func TestStoreIndexDir(t *testing.T) {
	ctx := context.Background()
	table, dir := t.TempDir(), t.TempDir()
	exportDoc(t, table, "http://site.test/a")

	open := func(name string, rebuild bool) (*Engine, *closeCounter, error) {
		st := openShared(t, table)
		e, err := Open(ctx, Config{Dir: dir, Store: st, Table: name, Rebuild: rebuild})
		if err != nil && st.closed != 1 {
			t.Errorf("failed Open closed the store %d times, want once", st.closed)
		}
		return e, st, err
	}
	closeAll := func(e *Engine, st *closeCounter) {
		t.Helper()
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if st.closed != 1 {
			t.Errorf("Close closed the store %d times, want once", st.closed)
		}
	}

	// A new directory: the index is built from the table.
	e, st, err := open("bigtable://p/i/web", false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.Index.Count(); err != nil || n != 1 {
		t.Errorf("index of a new directory: %d documents, %v; want the table's 1", n, err)
	}
	closeAll(e, st)
	if b, err := os.ReadFile(filepath.Join(dir, TableFile)); err != nil || string(b) != "bigtable://p/i/web\n" {
		t.Errorf("%s = %q, %v", TableFile, b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
		t.Error("a Badger table was created in the index directory")
	}

	// Again: opened, not rebuilt.
	e, st, err = open("bigtable://p/i/web", false)
	if err != nil {
		t.Fatal(err)
	}
	closeAll(e, st)

	// Another table: refused, unless rebuilt.
	if _, _, err := open("bigtable://p/i/other", false); !errors.Is(err, ErrOtherTable) || !strings.Contains(err.Error(), "bigtable://p/i/web") {
		t.Errorf("Open with another table = %v, want ErrOtherTable naming the index's", err)
	}
	e, st, err = open("bigtable://p/i/other", true)
	if err != nil {
		t.Fatalf("Open with another table and Rebuild: %v", err)
	}
	closeAll(e, st)
	if b, _ := os.ReadFile(filepath.Join(dir, TableFile)); string(b) != "bigtable://p/i/other\n" {
		t.Errorf("%s after the rebuild = %q", TableFile, b)
	}

	// The directory as a Badger table: refused.
	if _, err := Open(ctx, Config{Dir: dir}); !errors.Is(err, ErrOtherTable) {
		t.Errorf("Open of the index directory as a Badger table = %v, want ErrOtherTable", err)
	}
	// A Badger table's directory as the index directory: refused.
	st = openShared(t, table)
	if _, err := Open(ctx, Config{Dir: table, Store: st, Table: "bigtable://p/i/web"}); !errors.Is(err, ErrOtherTable) || !strings.Contains(err.Error(), "Badger table") {
		t.Errorf("Open with a Badger table's directory = %v, want ErrOtherTable", err)
	}
	if st.closed != 1 {
		t.Errorf("store closed %d times", st.closed)
	}
	// A store without its name: refused.
	st = openShared(t, table)
	if _, err := Open(ctx, Config{Dir: t.TempDir(), Store: st}); err == nil {
		t.Error("Open with Store and no Table succeeded")
	}
}
