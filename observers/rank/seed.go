package rank

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
	"golang.org/x/sync/errgroup"
)

// Seed starts every block's next run from the fixed point of the whole
// graph: it reads the block rows' graph cells in one snapshot, solves
// PageRank over all of them by power iteration in memory (the model and
// graph of the observer and of [Batch]), and writes, a transaction a
// block, the block's node values (colValues: the solution; what was last
// written to each page's row and the cluster last told are kept), what
// its pages give each other block (colInflow cells in their rows), the
// list of those blocks (colSent, with the blocks of the cells it had
// before, so that a run deletes those it no longer gives to), and a
// notification (webtable.RankDirty) of the block and of those it gives
// to. Since every block with a page then solves again, it deletes the
// marks of standing changes its snapshot saw (colTouch), whose linkers
// need not be told.
//
// Each block's next run then solves in a sweep or two, sends nothing
// (what it computes is what Seed wrote, within Options.Epsilon), and
// writes its pages' values with the notifications a run writes: one run
// a block, where a bulk load's blocks otherwise solve round after round
// as what they send each other settles. Seed only moves where runs start,
// so it is safe at any time: a page that changed since its snapshot is
// solved by the runs as usual. It holds the graph in memory (about 100
// bytes a page and 8 an edge) and returns how many blocks it wrote.
func Seed(ctx context.Context, db *percolator.DB, opt Options) (int, error) {
	opt.ensureDefaults()
	d := opt.Damping

	// The nodes, their blocks and edges, from one snapshot: first every
	// row's standing (what a link to it leads to), then the ok pages'
	// out-sets.
	type standing struct{ state, alias string }
	stand := make(map[string]standing)
	var rows []string                             // ok pages
	var out [][]int                               // their edges, by index in rows
	touched := make(map[string]map[string]string) // block key → page row → its colTouch cell
	var dir *directory
	err := db.View(ctx, func(tx *percolator.Tx) error {
		var err error
		if dir, err = loadDirectory(ctx, tx); err != nil {
			return err
		}
		err = tx.Scan(ctx, BlockPrefix, BlockPrefix+"\xff", colTouch, func(b, col string, v []byte) bool {
			k := b[len(BlockPrefix):]
			if touched[k] == nil {
				touched[k] = make(map[string]string)
			}
			touched[k][col[len(colTouch):]] = string(v)
			return true
		})
		if err != nil {
			return err
		}
		err = scanGraph(ctx, tx, dir, func(key, r string, v []byte) {
			g := decodeStanding(key, v)
			stand[r] = standing{g.state, g.alias}
			if g.state == webtable.StateOK {
				rows = append(rows, r)
			}
		})
		if err != nil {
			return err
		}
		slices.Sort(rows)
		index := make(map[string]int, len(rows))
		for i, r := range rows {
			index[r] = i
		}
		look := func(r string) (string, string, error) {
			s := stand[r]
			return s.state, s.alias, nil
		}
		out = make([][]int, len(rows))
		var bad error
		err = scanGraph(ctx, tx, dir, func(key, r string, v []byte) {
			i, ok := index[r]
			if !ok || bad != nil {
				return
			}
			ts, err := outSet(r, decodeGraph(key, v).targets, look)
			if err != nil {
				bad = err
				return
			}
			out[i] = make([]int, 0, len(ts))
			for _, t := range ts {
				if j, ok := index[t]; ok {
					out[i] = append(out[i], j)
				}
			}
		})
		if err == nil {
			err = bad
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("rank: seed: %w", err)
	}
	stand = nil
	x := PowerIteration(out, d)

	// Each block's nodes, and what they give other blocks.
	type block struct {
		nodes []string
		x     map[string]float64
		flows map[string]map[string]float64 // other block row → target row → amount
	}
	blocks := make(map[string]*block)
	get := func(k string) *block {
		b := blocks[k]
		if b == nil {
			b = &block{x: make(map[string]float64), flows: make(map[string]map[string]float64)}
			blocks[k] = b
		}
		return b
	}
	for i, r := range rows {
		k := dir.loaded(r)
		b := get(k)
		b.nodes = append(b.nodes, r)
		b.x[r] = x[i]
		if len(out[i]) == 0 {
			continue
		}
		share := d / float64(len(out[i])) * x[i]
		for _, j := range out[i] {
			t := rows[j]
			if dir.loaded(t) == k {
				continue
			}
			ob := BlockPrefix + dir.loaded(t)
			if b.flows[ob] == nil {
				b.flows[ob] = make(map[string]float64)
			}
			b.flows[ob][t] += share
		}
	}
	out, rows = nil, nil

	// A transaction a block: the cells it writes are its own (its values
	// and sent list, its inflow column in other rows), so these never
	// conflict with each other.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	var n atomic.Int64
	for _, k := range slices.Sorted(maps.Keys(blocks)) {
		b := blocks[k]
		g.Go(func() error {
			err := db.Update(gctx, func(tx *percolator.Tx) error {
				return seedBlock(gctx, tx, k, b.nodes, b.x, b.flows)
			})
			if err != nil {
				return fmt.Errorf("rank: seed %q: %w", k, err)
			}
			n.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return int(n.Load()), err
	}
	// Every block with a page solves again after the snapshot, so no
	// linker of a page whose standing changed before it need be told
	// (runTouches): forget those changes, unless changed again since.
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, k := range slices.Sorted(maps.Keys(touched)) {
		g.Go(func() error {
			err := db.Update(gctx, func(tx *percolator.Tx) error {
				b := BlockPrefix + k
				for r, v := range touched[k] {
					cur, err := tx.Get(gctx, b, colTouch+r)
					if err != nil {
						return err
					}
					if cur != nil && string(cur) == v {
						if err := tx.Delete(b, colTouch+r); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("rank: seed %q: %w", k, err)
			}
			return nil
		})
	}
	return int(n.Load()), g.Wait()
}

// scanGraph calls fn for every graph cell of every block row that is
// the cell of a page of that block (a cell left in a row by an older
// split of blocks is not read, as runs do not read it).
func scanGraph(ctx context.Context, tx *percolator.Tx, dir *directory, fn func(key, row string, v []byte)) error {
	return tx.Scan(ctx, BlockPrefix, BlockPrefix+"\xff", colGraph, func(b, col string, v []byte) bool {
		key := b[len(BlockPrefix):]
		if !strings.HasPrefix(col, colGraph) {
			return true
		}
		if r := col[len(colGraph):]; dir.loaded(r) == key {
			fn(key, r, v)
		}
		return true
	})
}

// seedBlock writes block key's values x of its nodes, its flows into
// other blocks and their list, and notifies the block (see Seed).
func seedBlock(ctx context.Context, tx *percolator.Tx, key string, nodes []string, x map[string]float64, flows map[string]map[string]float64) error {
	b := BlockPrefix + key
	oldValues, old, err := readValues(ctx, tx, key)
	if err != nil {
		return err
	}
	values := make(map[string]value, len(nodes)+len(old))
	maps.Copy(values, old) // pages no longer nodes: the next run deletes their values
	for _, u := range nodes {
		v := old[u]
		v.x = x[u]
		values[u] = v
	}
	all := slices.Sorted(maps.Keys(values))
	if nv := encodeValues(key, all, values); !bytes.Equal(nv, oldValues) {
		if err := tx.Set(b, colValues, nv); err != nil {
			return err
		}
	}
	oldSent, err := tx.Get(ctx, b, colSent)
	if err != nil {
		return err
	}
	targets := slices.Sorted(maps.Keys(flows))
	if sent := []byte(strings.Join(union(lines(oldSent), targets), "\n")); !bytes.Equal(sent, oldSent) {
		if err := tx.Set(b, colSent, sent); err != nil {
			return err
		}
	}
	for _, ob := range targets {
		if err := tx.Set(ob, colInflow+key, encodeFlows(ob[len(BlockPrefix):], flows[ob])); err != nil {
			return err
		}
		// A run of ob that read the cell before this commit runs again
		// (in a bulk load's stage none runs before Seed is done).
		if err := tx.Notify(ob, webtable.RankDirty); err != nil {
			return err
		}
	}
	return tx.Notify(b, webtable.RankDirty)
}
