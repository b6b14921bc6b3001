package rank

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Options configure the rank observer and the batch. The zero value of
// every field selects its default.
type Options struct {
	// Damping is d, the probability of following a link. Default Damping.
	Damping float64
	// Epsilon is the relative change of what a block gives a page of
	// another block that is sent on to that block; smaller changes wait for
	// the next run. Smaller is more exact and costs more runs. Default 1e-4.
	Epsilon float64
	// UrgentEpsilon is the relative change of what a block gives a page
	// of another block that has that block solve in the foreground
	// (rank); a smaller one, above Epsilon, and a page gaining or losing
	// such a flow, wait for the background (rank-outside). Default 0.05:
	// PageRank as the index shows it moves in steps of about 5%, and a
	// flow is part of a page's value. (At 1%, on a bulk crawl of a big
	// site nearly every page's arrival moved some flow into an already
	// crawled section by that much, and each was a solve of that whole
	// section in the foreground; see BENCHMARKS.md.) Negative: every
	// send waits for the background.
	UrgentEpsilon float64
	// PublishThreshold is the relative change of a page's value, since the
	// value last written to its row (webtable.Rank), that writes it again
	// and tells export and the cluster election. Default 0.002.
	PublishThreshold float64
	// OutsideDelay and OutsideMaxDelay are the percolator.Observer Delay
	// and MaxDelay of the background observer rank-outside. Zero runs its
	// notifications as soon as they are found.
	OutsideDelay, OutsideMaxDelay time.Duration
}

func (o *Options) ensureDefaults() {
	if o.Damping <= 0 || o.Damping >= 1 {
		o.Damping = Damping
	}
	if o.Epsilon <= 0 {
		o.Epsilon = 1e-4
	}
	if o.UrgentEpsilon == 0 {
		o.UrgentEpsilon = 0.05
	}
	if o.UrgentEpsilon > 0 {
		o.UrgentEpsilon = max(o.UrgentEpsilon, o.Epsilon)
	}
	if o.PublishThreshold <= 0 {
		o.PublishThreshold = 0.002
	}
}

// Observers returns the rank observers, which run the same code, a block
// solve (see the package doc):
//
//   - "rank", observing the weak column webtable.RankDirty of page rows
//     (Touch) and of block rows: a page of the block changed, or another
//     block's send moved a flow by Options.UrgentEpsilon or more. Runs
//     of a block are spaced (blockPace);
//   - "rank-outside", in the background (percolator.Observer.Background,
//     with Options.OutsideDelay and OutsideMaxDelay), observing
//     webtable.RankOutside of block rows: what the block's pages get from
//     outside it changed, a page of another block that they link to became
//     or stopped being a page (told by that page's block run, see
//     runTouches), one of them links to a page it did not before
//     ([Linked]), or what another block gives them moved by less than
//     Options.UrgentEpsilon, or began or ceased (a run's sends).
//     During a bulk crawl both happen for nearly every page crawled: in
//     the foreground each cost a solve of every block it reached, and the
//     block of a page linking to thousands of pages (a site's index)
//     looked all of them up for each one crawled. Held, a block solves
//     once for many, at most OutsideMaxDelay (plus the foreground's and
//     the background's backlogs) after the change; OutsideDelay after it
//     when the foreground has no backlog. A run of "rank" on the
//     block answers its rank-outside notifications
//     (percolator.Observer.Covers).
//
// A page's first value, which its document waits for, is its block's
// foreground solve; what comes from outside moves it later, as PageRank
// moves do. The chain runs both observers.
func Observers(opt Options) []percolator.Observer {
	opt.ensureDefaults()
	o := &observer{opt: opt}
	return []percolator.Observer{
		{Name: "rank", Column: webtable.RankDirty, Covers: []string{webtable.RankOutside}, Pace: blockPace, Run: o.run},
		{Name: "rank-outside", Column: webtable.RankOutside, Background: true,
			Delay: opt.OutsideDelay, MaxDelay: opt.OutsideMaxDelay, Run: o.run},
	}
}

// blockPace spaces a block's foreground runs (percolator.Observer.Pace):
// while its section is crawled a block is notified for every page, and a
// run reads and solves the whole block, so that runs came back to back
// for a notification or two each, one a page. Spaced nine runs' time
// apart, a block takes at most a tenth of a goroutine however fast its
// pages come, and a page's first value waits at most nine of its block's
// runs (a few ms for a small block; at most 1 s).
const blockPace = 9

type observer struct {
	opt Options
}

func (o *observer) run(ctx context.Context, tx *percolator.Tx, row, _ string) error {
	if strings.HasPrefix(row, BlockPrefix) {
		return o.runBlock(ctx, tx, row)
	}
	if strings.HasPrefix(row, "!") {
		return nil // not a page
	}
	dir := newDirectory(ctx, tx)
	if _, err := refresh(ctx, tx, dir, row); err != nil {
		return err
	}
	// Touch means "look again": the block re-reads the rows its links lead
	// to even when the page itself did not change.
	b, err := dir.row(row)
	if err != nil {
		return err
	}
	return tx.Notify(b, webtable.RankDirty)
}

// Refresh brings the rank graph up to date with page row's State, AliasOf,
// Links and Hash as tx sees them (its own writes included), in tx: when the page
// changed as rank sees it, its block is notified, and when its standing
// changed (it became or stopped being a page, or redirects elsewhere),
// the block's next run notifies the blocks of the pages linking to it,
// directly or through redirects (runTouches). It reports whether
// anything changed. Whoever changes those
// columns calls it in the same transaction (the parse observer does).
func Refresh(ctx context.Context, tx *percolator.Tx, row string) (bool, error) {
	return refresh(ctx, tx, newDirectory(ctx, tx), row)
}

func refresh(ctx context.Context, tx *percolator.Tx, dir *directory, row string) (bool, error) {
	state, err := tx.Get(ctx, row, webtable.State)
	if err != nil {
		return false, err
	}
	key, err := dir.key(row)
	if err != nil {
		return false, err
	}
	var g graphCell
	switch string(state) {
	case webtable.StateOK:
		links, err := tx.Get(ctx, row, webtable.Links)
		if err != nil {
			return false, err
		}
		hash, err := tx.Get(ctx, row, webtable.Hash)
		if err != nil {
			return false, err
		}
		g.state, g.hash = webtable.StateOK, string(hash)
		if g.targets, err = linkRows(row, links); err != nil {
			return false, err
		}
	case webtable.StateRedirect:
		alias, err := tx.Get(ctx, row, webtable.AliasOf)
		if err != nil {
			return false, err
		}
		if len(alias) > 0 {
			g.state, g.alias = webtable.StateRedirect, string(alias)
		}
	}
	var cell []byte
	if g.state != "" {
		cell = g.encode(key)
	}
	b := BlockPrefix + key
	hashChanged, err := refreshHash(ctx, tx, b, row, g.hash)
	if err != nil {
		return false, err
	}
	old, err := tx.Get(ctx, b, colGraph+row)
	if err != nil {
		return false, err
	}
	if bytes.Equal(old, cell) && (old == nil) == (cell == nil) {
		return hashChanged, nil
	}
	if cell == nil {
		err = tx.Delete(b, colGraph+row)
	} else {
		err = tx.Set(b, colGraph+row, cell)
	}
	if err != nil {
		return false, err
	}
	if err := tx.Notify(b, webtable.RankDirty); err != nil {
		return false, err
	}
	var was graphCell
	if old != nil {
		was = decodeGraph(key, old)
	}
	if was.state != g.state || was.alias != g.alias {
		// The pages linking here are told by the block's next run, not
		// by tx: see runTouches. (The value tells this change from a later
		// one: Seed.)
		if err := tx.Set(b, colTouch+row, strconv.AppendUint(nil, tx.StartTs(), 10)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// refreshHash keeps the page's colHash cell equal to hash. The block is
// not told: its values do not depend on the hash, and the page's new
// cluster learns its value from the cluster observer's notification.
// When the hash changes, the page's value (webtable.Rank) is written back
// as tx reads it (deleted again if absent), so that tx conflicts with a
// concurrent run of the block that read the old hash and writes the
// value: that run would tell the old cluster's election, not the new one
// (see colHash).
func refreshHash(ctx context.Context, tx *percolator.Tx, b, row, hash string) (bool, error) {
	old, err := tx.Get(ctx, b, colHash+row)
	if err != nil {
		return false, err
	}
	if string(old) == hash {
		return false, nil
	}
	v, err := tx.Get(ctx, row, webtable.Rank)
	if err != nil {
		return false, err
	}
	if v == nil {
		err = tx.Delete(row, webtable.Rank)
	} else {
		err = tx.Set(row, webtable.Rank, v)
	}
	if err != nil {
		return false, err
	}
	if hash == "" {
		return true, tx.Delete(b, colHash+row)
	}
	return true, tx.Set(b, colHash+row, []byte(hash))
}

// runTouches tells the blocks of the pages linking to the pages of block
// row b whose standing changed (its colTouch cells), and deletes the
// cells. It runs in a run of the block, not in the transaction that
// changed the page ([Refresh], the parse observer's), because that
// transaction and the links observer's that publishes a link to the page
// (webtable.InPrefix, by which the linkers are found) each read what the
// other writes, and under snapshot isolation both could commit without
// seeing the other (write skew): the change would miss the new linker,
// whose block may have read the page's old standing, and nothing would
// have it solve again. The block's run begins after the change
// committed, so it finds every link published before it began; a link
// published after tells its source's block itself (Linked), and that
// block's next run then begins after the change as well. A change that
// commits after the run began is the next run's (it notifies the block);
// if it rewrites a cell this run deletes, the two conflict, and the one
// that retries sees the other.
func runTouches(ctx context.Context, tx *percolator.Tx, dir *directory, b string) error {
	var pages []string
	err := tx.Scan(ctx, b, b+"\x00", colTouch, func(_, col string, _ []byte) bool {
		pages = append(pages, col[len(colTouch):])
		return true
	})
	if err != nil || len(pages) == 0 {
		return err
	}
	// Pages of the same block read the page's cell when this run solves.
	done := map[string]bool{b: true}
	for _, p := range pages {
		if err := touchLinkers(ctx, tx, dir, p, done, 0); err != nil {
			return err
		}
		if err := tx.Delete(b, colTouch+p); err != nil {
			return err
		}
	}
	return nil
}

// Linked tells the block of page row that row now links to pages it did
// not link to before, in tx, which publishes those links (writes the
// webtable.InPrefix cells of row in the pages it links to: the links
// observer). The block may have read the standing of those pages before
// a change whose run of runTouches did not find the link (see there): it
// solves again, in the background (webtable.RankOutside).
func Linked(ctx context.Context, tx *percolator.Tx, row string) error {
	b, err := newDirectory(ctx, tx).row(row)
	if err != nil {
		return err
	}
	return tx.Notify(b, webtable.RankOutside)
}

// touchLinkers notifies the blocks of the pages linking to row, directly
// or through rows redirecting to it (up to maxHops), skipping those in
// done: webtable.RankOutside, which the background rank-outside observer
// answers.
func touchLinkers(ctx context.Context, tx *percolator.Tx, dir *directory, row string, done map[string]bool, depth int) error {
	if depth > maxHops {
		return nil
	}
	var aliases []string
	var bad error
	err := webtable.ScanIn(ctx, tx, row, func(src string, _ []byte) bool {
		var b string
		if b, bad = dir.row(src); bad != nil {
			return false
		}
		if !done[b] {
			done[b] = true
			if bad = tx.Notify(b, webtable.RankOutside); bad != nil {
				return false
			}
		}
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return fmt.Errorf("rank: linkers of %q: %w", row, err)
	}
	err = webtable.ScanAliases(ctx, tx, row, func(from string) bool {
		aliases = append(aliases, from)
		return true
	})
	if err != nil {
		return fmt.Errorf("rank: aliases of %q: %w", row, err)
	}
	for _, a := range aliases {
		if err := touchLinkers(ctx, tx, dir, a, done, depth+1); err != nil {
			return err
		}
	}
	return nil
}
