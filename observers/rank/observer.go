package rank

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Options configure the rank observer and the batch. The zero value of
// every field selects its default.
type Options struct {
	// Damping is d, the probability of following a link. Default 0.85.
	Damping float64
	// Epsilon is the residual below which a page keeps a change to itself
	// instead of pushing it on. Smaller is more exact and costs more runs.
	// Default 1e-4.
	Epsilon float64
	// AnnounceThreshold is the relative change of a page's value, since the
	// value last announced, that notifies export and the cluster election.
	// Values are compared against at least 1 − d, the smallest rank of a
	// page. Default 0.01.
	AnnounceThreshold float64
}

func (o *Options) ensureDefaults() {
	if o.Damping <= 0 || o.Damping >= 1 {
		o.Damping = 0.85
	}
	if o.Epsilon <= 0 {
		o.Epsilon = 1e-4
	}
	if o.AnnounceThreshold <= 0 {
		o.AnnounceThreshold = 0.01
	}
}

// minDelta is the smallest push worth a cell and a notification; what is
// dropped stays far below any tolerance that matters.
const minDelta = 1e-12

// Observer returns the rank observer: named "rank", observing the weak
// column webtable.RankDirty.
func Observer(opt Options) percolator.Observer {
	opt.ensureDefaults()
	o := &observer{opt: opt}
	return percolator.Observer{Name: "rank", Column: webtable.RankDirty, Run: o.run}
}

// Touch asks the rank observer to look at row again, when tx commits: call
// it when row's State or Links change, and for every page linking to a row
// whose State or AliasOf changes.
func Touch(tx *percolator.Tx, row string) error {
	return tx.Notify(row, webtable.RankDirty)
}

type observer struct {
	opt Options
}

// run is one run on page row u (see the package doc).
func (o *observer) run(ctx context.Context, tx *percolator.Tx, u, _ string) error {
	d := o.opt.Damping
	state, err := tx.Get(ctx, u, webtable.State)
	if err != nil {
		return err
	}
	ok := string(state) == webtable.StateOK

	// Absorb the pushes that reached u.
	var in float64
	var cells []string
	var bad error
	err = tx.Scan(ctx, u, u+"\x00", rinPrefix, func(_, col string, v []byte) bool {
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			bad = fmt.Errorf("rank: %q %q: %w", u, col, err)
			return false
		}
		in += f
		cells = append(cells, col)
		return true
	})
	if err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	for _, c := range cells {
		if err := tx.Delete(u, c); err != nil {
			return err
		}
	}

	// The teleport follows the page in and out of the graph.
	seeded, err := tx.Get(ctx, u, colSeeded)
	if err != nil {
		return err
	}
	var teleport float64
	switch {
	case ok && seeded == nil:
		teleport = 1 - d
		err = tx.Set(u, colSeeded, []byte("1"))
	case !ok && seeded != nil:
		teleport = -(1 - d)
		err = tx.Delete(u, colSeeded)
	}
	if err != nil {
		return err
	}

	res, _, err := getFloat(ctx, tx, u, colResidual)
	if err != nil {
		return err
	}
	r := res + in + teleport
	var out []string
	if ok {
		if out, err = o.outSet(ctx, tx, u); err != nil {
			return err
		}
	}
	var last pushed
	if v, err := tx.Get(ctx, u, colPushed); err != nil {
		return err
	} else if v != nil {
		if err := json.Unmarshal(v, &last); err != nil {
			return fmt.Errorf("rank: %q %q: %w", u, colPushed, err)
		}
	}
	if math.Abs(r) < o.opt.Epsilon && slices.Equal(out, last.Out) {
		if r == res {
			return nil
		}
		return setFloat(tx, u, colResidual, r)
	}

	// Push: each old or new target gets what it is owed now minus what it
	// was given before.
	x, _, err := getFloat(ctx, tx, u, webtable.Rank)
	if err != nil {
		return err
	}
	x2 := x + r
	suffix := ":" + strconv.FormatUint(tx.StartTs(), 16)
	owed := func(v string, x float64, out []string) float64 {
		if _, found := slices.BinarySearch(out, v); !found {
			return 0
		}
		return d * x / float64(len(out))
	}
	quiet := make(map[string]float64)
	for _, v := range union(last.Out, out) {
		now, before := owed(v, x2, out), owed(v, last.X, last.Out)
		delta := now - before
		if math.Abs(delta) <= minDelta {
			if now != 0 && last.Quiet[v] != 0 {
				quiet[v] = last.Quiet[v]
			}
			continue
		}
		if err := setFloat(tx, v, rinPrefix+u+suffix, delta); err != nil {
			return err
		}
		// Wake v only when what u pushed since it last woke v is worth it:
		// a run that just stores a residual costs as much as one that
		// pushes. The bound keeps what waits at v to ε and, for small
		// shares, to 1/1000 of what u gives v, so it never exceeds 0.1%
		// of v's rank.
		q := last.Quiet[v] + math.Abs(delta)
		if before == 0 || now == 0 || q >= min(o.opt.Epsilon, now/1000) {
			if err := tx.Notify(v, webtable.RankDirty); err != nil {
				return err
			}
			continue
		}
		quiet[v] = q
	}
	if len(quiet) == 0 {
		quiet = nil
	}
	p, err := json.Marshal(pushed{X: x2, Out: out, Quiet: quiet})
	if err != nil {
		return err
	}
	if err := tx.Set(u, colPushed, p); err != nil {
		return err
	}
	if err := setFloat(tx, u, webtable.Rank, x2); err != nil {
		return err
	}
	if res != 0 {
		if err := setFloat(tx, u, colResidual, 0); err != nil {
			return err
		}
	}
	return o.announce(ctx, tx, u, ok, x2)
}

// outSet reads u's links and the rows they lead to in tx's snapshot.
func (o *observer) outSet(ctx context.Context, tx *percolator.Tx, u string) ([]string, error) {
	links, err := tx.Get(ctx, u, webtable.Links)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	type node struct{ state, alias string }
	cache := make(map[string]node)
	return outSet(u, links, func(row string) (string, string, error) {
		if n, ok := cache[row]; ok {
			return n.state, n.alias, nil
		}
		state, err := tx.Get(ctx, row, webtable.State)
		if err != nil {
			return "", "", err
		}
		var alias []byte
		if string(state) == webtable.StateRedirect {
			if alias, err = tx.Get(ctx, row, webtable.AliasOf); err != nil {
				return "", "", err
			}
		}
		cache[row] = node{string(state), string(alias)}
		return string(state), string(alias), nil
	})
}

// announce notifies export and u's cluster election when u's value moved
// beyond the threshold since it was last announced.
func (o *observer) announce(ctx context.Context, tx *percolator.Tx, u string, ok bool, x float64) error {
	a, present, err := getFloat(ctx, tx, u, colAnnounced)
	if err != nil {
		return err
	}
	if !ok {
		// Not a page any more: whatever made it so told export; announce
		// afresh if it comes back.
		if present {
			return tx.Delete(u, colAnnounced)
		}
		return nil
	}
	// Export: whenever the rounded PageRank it carries differs, however
	// small the move (the index shows the rounded value).
	exported, err := tx.Get(ctx, u, webtable.ExportRank)
	if err != nil {
		return err
	}
	moved := !present || math.Abs(x-a) > o.opt.AnnounceThreshold*max(math.Abs(a), 1-o.opt.Damping)
	switch {
	case exported != nil && string(exported) != webtable.RoundRank(x), exported == nil && moved:
		if err := tx.Notify(u, webtable.DocDirty); err != nil {
			return err
		}
	case exported != nil:
		// Rewriting the value unchanged makes a concurrent export (which
		// read the old rank and writes this cell) conflict with us, instead
		// of both committing on stale reads (write skew).
		if err := tx.Set(u, webtable.ExportRank, exported); err != nil {
			return err
		}
	}
	if !moved {
		return nil // the election only cares about moves beyond the threshold
	}
	h, err := tx.Get(ctx, u, webtable.ClusterHash)
	if err != nil {
		return err
	}
	if len(h) > 0 {
		if err := tx.Notify(webtable.ClusterPrefix+string(h), webtable.DupDirty); err != nil {
			return err
		}
	}
	return setFloat(tx, u, colAnnounced, x)
}

// union returns the sorted union of two sorted lists.
func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// getFloat reads a decimal float cell; absent reads as 0, false.
func getFloat(ctx context.Context, tx *percolator.Tx, row, col string) (float64, bool, error) {
	v, err := tx.Get(ctx, row, col)
	if err != nil || v == nil {
		return 0, false, err
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, false, fmt.Errorf("rank: %q %q: %w", row, col, err)
	}
	return f, true, nil
}

func setFloat(tx *percolator.Tx, row, col string, f float64) error {
	return tx.Set(row, col, strconv.AppendFloat(nil, f, 'g', -1, 64))
}
