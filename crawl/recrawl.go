package crawl

import (
	"context"
	"fmt"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Recrawl makes the pages at urls due at when (now if zero), so a running
// or later crawler fetches them again. A page in flight (leased) is left
// alone: its loader transaction schedules it. It returns how many pages it
// moved; a URL the table does not know is an error wrapping ErrUnknownPage
// after the known ones were moved.
func Recrawl(ctx context.Context, db *percolator.DB, urls []string, when time.Time) (int, error) {
	if when.IsZero() {
		when = time.Now()
	}
	ms := when.UnixMilli()
	moved := 0
	var unknown []string
	for _, u := range urls {
		n, err := webtable.Normalize(u)
		if err != nil {
			return moved, err
		}
		row, err := webtable.Row(n)
		if err != nil {
			return moved, err
		}
		var ok, did bool
		err = db.Update(ctx, func(tx *percolator.Tx) error {
			ok, did = false, false
			due, err := tx.Get(ctx, row, webtable.Due)
			if err != nil || due == nil {
				return err
			}
			ok = true
			lease, err := tx.Get(ctx, row, webtable.Lease)
			if err != nil || lease != nil || atoi(due) == ms {
				return err
			}
			did = true
			tx.Delete(webtable.DueRow(atoi(due), row), webtable.DuePage)
			tx.Set(webtable.DueRow(ms, row), webtable.DuePage, []byte(row))
			return tx.Set(row, webtable.Due, itoa(ms))
		})
		if err != nil {
			return moved, fmt.Errorf("crawl: recrawl %s: %w", n, err)
		}
		if !ok {
			unknown = append(unknown, n)
		}
		if did {
			moved++
		}
	}
	if len(unknown) > 0 {
		return moved, fmt.Errorf("%w: %v", ErrUnknownPage, unknown)
	}
	return moved, nil
}
