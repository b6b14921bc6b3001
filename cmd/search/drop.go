package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storeflag"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/webtable"
)

// dropIndex retires the serving index named name (search -drop-index):
// exports stop writing its queue, and the queue is deleted
// (feed.DropIndex). It returns the exit code.
func dropIndex(ctx context.Context, tf *storeflag.Flags, data, name string, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "search:", err)
		if errors.Is(err, feed.ErrDropIndex) || errors.Is(err, webtable.ErrIndexName) {
			return 2
		}
		return 1
	}
	if tf.Set() {
		// Opening creates a missing table; dropping needs one.
		if ok, err := tf.Exists(ctx); err != nil {
			return fail(err)
		} else if !ok {
			return fail(fmt.Errorf("-drop-index: table %s does not exist", tf.Table))
		}
	}
	st, err := tf.OpenStore(ctx, data, badger.Options{})
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	db, err := percolator.Open(ctx, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	n, err := feed.DropIndex(ctx, db, name)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "search: dropped index %s: deleted %d queue entries (run it again later for the entries of exports under way)\n", name, n)
	return 0
}
