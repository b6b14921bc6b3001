package crawl

import (
	"context"
	"strconv"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// markEvery is how often the crawler tells the process that counts the
// pages (the holder of the search engines' duty) that it changed pages
// or the frontier since it last said so: webtable.StatsChanged, which the
// holder reads before it counts again. An idle crawler writes nothing.
const markEvery = 5 * time.Second

// markChanges writes webtable.StatsChanged every markEvery while the
// crawl claims, fetches or discovers pages, and once more when ctx ends
// after a change, until ctx is done.
func (c *Crawler) markChanges(ctx context.Context) {
	last := c.changes()
	t := time.NewTicker(markEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if n := c.changes(); n != last {
				mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markEvery)
				c.markChanged(mctx)
				cancel()
			}
			return
		case <-t.C:
		}
		if n := c.changes(); n != last {
			last = n
			c.markChanged(ctx)
		}
	}
}

// changes returns a number that grows with every change of the pages or
// the frontier.
func (c *Crawler) changes() int64 {
	return c.stats.claimed.Load() + c.stats.fetched.Load() + c.stats.discovered.Load()
}

func (c *Crawler) markChanged(ctx context.Context) {
	err := c.db.Update(ctx, func(tx *percolator.Tx) error {
		return tx.Set(webtable.StatsRow, webtable.StatsChanged, strconv.AppendInt(nil, time.Now().UnixMilli(), 10))
	})
	if err != nil && ctx.Err() == nil {
		c.log.Info("stats: mark the table changed", "err", err)
	}
}
