package observers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// BenchmarkEnqueue: one export transaction of a document (enqueue and
// commit) on the embedded Badger table, with no index registered (the
// default queue alone) and with two, and the registry scan alone that
// an export observer makes once per webtable.RegistryTTL (queues).
func BenchmarkEnqueue(b *testing.B) {
	ctx := context.Background()
	doc := &webtable.Doc{URL: "http://example.com/a", Host: "example.com", Title: "A page", Text: "some text of a page", FetchedAt: time.Now()}
	for _, names := range [][]string{nil, {"main", "r2"}} {
		db, _ := percolatortest.Open(b, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			for _, n := range names {
				if err := tx.Set(webtable.IndexRow(n), webtable.IndexState, []byte(webtable.IndexLive)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("names=%d/scan", len(names)), func(b *testing.B) {
			for b.Loop() {
				err := db.View(ctx, func(tx *percolator.Tx) error {
					_, _, err := queues(ctx, tx) // what every RegistryTTL costs
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("names=%d/export", len(names)), func(b *testing.B) {
			var r registry
			i := 0
			for b.Loop() {
				i++
				err := db.Update(ctx, func(tx *percolator.Tx) error {
					return r.enqueue(ctx, tx, fmt.Sprintf("com.example/p%d", i%1000), doc, "digest")
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
