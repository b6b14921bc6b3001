package percolator_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// The README's library example: open a table on Badger and update a cell
// in a transaction that Update retries on conflict, then read it back in a
// read-only snapshot.
func ExampleDB_Update() {
	dir, err := os.MkdirTemp("", "percolator-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	st, err := badger.Open(dir, badger.Options{}) // percolator/badger
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	db, err := percolator.Open(ctx, st, percolator.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	err = db.Update(ctx, func(tx *percolator.Tx) error { // retried on conflict
		old, err := tx.Get(ctx, "com.example.www/", "page:title")
		if err != nil {
			return err
		}
		fmt.Printf("old title: %q\n", old)
		return tx.Set("com.example.www/", "page:title", []byte("Example"))
	})
	if err != nil {
		log.Fatal(err)
	}

	err = db.View(ctx, func(tx *percolator.Tx) error {
		title, err := tx.Get(ctx, "com.example.www/", "page:title")
		fmt.Printf("new title: %q\n", title)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// old title: ""
	// new title: "Example"
}

// The README's observer example: every process that writes the table lists
// the observed columns in Options.Observed; a worker runs the observer in
// its own transaction after the column changes.
func ExampleNewWorker() {
	dir, err := os.MkdirTemp("", "percolator-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	db, err := percolator.Open(ctx, st, percolator.Options{Observed: []string{"fetch:body"}})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	w, err := percolator.NewWorker(db, percolator.WorkerOptions{Scanners: 2, Workers: 16},
		percolator.Observer{Name: "parse", Column: "fetch:body",
			Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
				body, err := tx.Get(ctx, row, col)
				if err != nil {
					return err
				}
				title, _, _ := strings.Cut(string(body), "\n")
				return tx.Set(row, "page:title", []byte(title))
			}})
	if err != nil {
		log.Fatal(err)
	}
	w.Start()
	defer w.Close()

	err = db.Update(ctx, func(tx *percolator.Tx) error {
		return tx.Set("com.example.www/", "fetch:body", []byte("Example Domain\nThis domain is for use in examples."))
	})
	if err != nil {
		log.Fatal(err)
	}
	// A full scan found nothing and nothing was committed meanwhile.
	if err := w.WaitIdle(ctx); err != nil {
		log.Fatal(err)
	}

	err = db.View(ctx, func(tx *percolator.Tx) error {
		title, err := tx.Get(ctx, "com.example.www/", "page:title")
		fmt.Printf("title: %q\n", title)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// title: "Example Domain"
}
