package rank

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Batch computes PageRank from scratch by power iteration over one snapshot
// of the table: the same model and graph as the observer (see the package
// doc), with the default damping (Damping). It returns the value of every ok page by
// row; the caller owns the map.
func Batch(ctx context.Context, db *percolator.DB) (map[string]float64, error) {
	var opt Options
	opt.ensureDefaults()
	d := opt.Damping

	type page struct{ state, alias, links string }
	pages := make(map[string]*page)
	get := func(row string) *page {
		p := pages[row]
		if p == nil {
			p = &page{}
			pages[row] = p
		}
		return p
	}
	err := db.View(ctx, func(tx *percolator.Tx) error {
		for _, c := range []struct {
			col string
			set func(p *page, v string)
		}{
			{webtable.State, func(p *page, v string) { p.state = v }},
			{webtable.AliasOf, func(p *page, v string) { p.alias = v }},
			{webtable.Links, func(p *page, v string) { p.links = v }},
		} {
			if err := scanPages(ctx, tx, c.col, func(row string, v []byte) { c.set(get(row), string(v)) }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Number the nodes and build the graph.
	var rows []string
	for row, p := range pages {
		if p.state == webtable.StateOK {
			rows = append(rows, row)
		}
	}
	sort.Strings(rows)
	index := make(map[string]int, len(rows))
	for i, row := range rows {
		index[row] = i
	}
	look := func(row string) (string, string, error) {
		if p := pages[row]; p != nil {
			return p.state, p.alias, nil
		}
		return "", "", nil
	}
	out := make([][]int, len(rows))
	for i, row := range rows {
		targets, err := linkRows(row, []byte(pages[row].links))
		if err != nil {
			return nil, err
		}
		ts, err := outSet(row, targets, look)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			out[i] = append(out[i], index[t])
		}
	}

	x := PowerIteration(out, d)
	ranks := make(map[string]float64, len(rows))
	for i, row := range rows {
		ranks[row] = x[i]
	}
	return ranks, nil
}

// scanPages calls fn for column col of every page row (rows not starting
// with '!').
func scanPages(ctx context.Context, tx *percolator.Tx, col string, fn func(row string, v []byte)) error {
	visit := func(row, c string, v []byte) bool {
		if c == col {
			fn(row, v)
		}
		return true
	}
	// '!' rows (clusters, export queue, frontier) sit between the two ranges.
	if err := tx.Scan(ctx, "", "!", col, visit); err != nil {
		return err
	}
	return tx.Scan(ctx, "\"", "", col, visit)
}

// Diff is a page whose incremental and batch values disagree. A value
// missing on one side is NaN.
type Diff struct {
	Row         string
	Incremental float64
	Batch       float64
}

func (d Diff) String() string {
	return fmt.Sprintf("%s: incremental %.6g, batch %.6g", d.Row, d.Incremental, d.Batch)
}

// Compare returns the pages whose incremental and batch values differ by
// more than tol relative to the batch value, and the pages present on one
// side only, sorted by row.
func Compare(incremental, batch map[string]float64, tol float64) []Diff {
	var diffs []Diff
	for row, b := range batch {
		i, ok := incremental[row]
		switch {
		case !ok:
			diffs = append(diffs, Diff{Row: row, Incremental: math.NaN(), Batch: b})
		case math.Abs(i-b) > tol*math.Abs(b) || math.IsNaN(i):
			diffs = append(diffs, Diff{Row: row, Incremental: i, Batch: b})
		}
	}
	for row, i := range incremental {
		if _, ok := batch[row]; !ok {
			diffs = append(diffs, Diff{Row: row, Incremental: i, Batch: math.NaN()})
		}
	}
	sort.Slice(diffs, func(a, b int) bool { return diffs[a].Row < diffs[b].Row })
	return diffs
}
