package rank

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Check returns what in tx's snapshot breaks the invariants of the rank
// graph that hold once the chain is idle (no notification left), at most
// limit of them:
//
//   - every page's cells in its block row are what [Refresh] would write
//     from its State, Links, AliasOf and Hash (colGraph, colHash), and no
//     block row holds cells of other pages;
//   - no standing change is left untold to the linkers (colTouch);
//   - a block's values (colValues) have exactly its ok pages as nodes,
//     and the value each records as written is the page's webtable.Rank;
//     pages that are not ok have no webtable.Rank;
//   - a block lists as sent (colSent) exactly the blocks that hold its
//     inflow cell (colInflow), whose targets are ok pages of that block.
//
// Whether the values are the fixed point is [Compare]'s to say.
func Check(ctx context.Context, tx *percolator.Tx, limit int) ([]string, error) {
	var bad []string
	add := func(format string, args ...any) {
		if len(bad) < limit {
			bad = append(bad, fmt.Sprintf("rank: "+format, args...))
		}
	}
	type page struct{ state, links, alias, hash, rank string }
	pages := make(map[string]*page)
	get := func(row string) *page {
		p := pages[row]
		if p == nil {
			p = &page{}
			pages[row] = p
		}
		return p
	}
	for _, c := range []struct {
		col string
		set func(p *page, v string)
	}{
		{webtable.State, func(p *page, v string) { p.state = v }},
		{webtable.Links, func(p *page, v string) { p.links = v }},
		{webtable.AliasOf, func(p *page, v string) { p.alias = v }},
		{webtable.Hash, func(p *page, v string) { p.hash = v }},
		{webtable.Rank, func(p *page, v string) { p.rank = v }},
	} {
		if err := scanPages(ctx, tx, c.col, func(row string, v []byte) { c.set(get(row), string(v)) }); err != nil {
			return nil, err
		}
	}

	// The block rows' cells.
	type block struct {
		graph, hash map[string]string // page row → cell
		touch       []string
		inflow      map[string]string // source block key → cell
		values      string
		sent        string
	}
	blocks := make(map[string]*block) // by key
	dir, err := loadDirectory(ctx, tx)
	if err != nil {
		return nil, err
	}
	end := BlockPrefix[:len(BlockPrefix)-1] + string(BlockPrefix[len(BlockPrefix)-1]+1)
	err = tx.Scan(ctx, BlockPrefix, end, "r", func(row, col string, v []byte) bool {
		k := row[len(BlockPrefix):]
		b := blocks[k]
		if b == nil {
			b = &block{graph: map[string]string{}, hash: map[string]string{}, inflow: map[string]string{}}
			blocks[k] = b
		}
		switch {
		case strings.HasPrefix(col, colGraph):
			b.graph[col[len(colGraph):]] = string(v)
		case strings.HasPrefix(col, colHash):
			b.hash[col[len(colHash):]] = string(v)
		case strings.HasPrefix(col, colTouch):
			b.touch = append(b.touch, col[len(colTouch):])
		case strings.HasPrefix(col, colInflow):
			b.inflow[col[len(colInflow):]] = string(v)
		case col == colValues:
			b.values = string(v)
		case col == colSent:
			b.sent = string(v)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	block0 := func(k string) *block {
		if b := blocks[k]; b != nil {
			return b
		}
		return &block{}
	}

	// Each page's cells, as Refresh writes them.
	rows := slices.Sorted(maps.Keys(pages))
	for _, r := range rows {
		p := pages[r]
		k := dir.loaded(r)
		var g graphCell
		switch p.state {
		case webtable.StateOK:
			g.state = webtable.StateOK
			ts, err := linkRows(r, []byte(p.links))
			if err != nil {
				add("%s: %v", r, err)
				continue
			}
			g.targets = ts
		case webtable.StateRedirect:
			if p.alias != "" {
				g.state, g.alias = webtable.StateRedirect, p.alias
			}
		}
		b := block0(k)
		cell, has := b.graph[r]
		switch {
		case g.state == "" && has:
			add("%s is %q but has a graph cell %q in its block", r, p.state, cell)
		case g.state != "" && !has:
			add("%s is %q but has no graph cell in its block", r, p.state)
		case g.state != "" && cell != string(g.encode(k)):
			add("%s: graph cell %q, its page says %q", r, cell, g.encode(k))
		}
		if h := b.hash[r]; h != p.hash && (p.state == webtable.StateOK || h != "") {
			add("%s: hash cell %q, its page's hash %q", r, h, p.hash)
		}
		if p.state != webtable.StateOK && p.rank != "" {
			add("%s is %q but has a PageRank %s", r, p.state, p.rank)
		}
	}

	// Each block's own cells.
	for _, k := range slices.Sorted(maps.Keys(blocks)) {
		b := blocks[k]
		for r := range b.graph {
			if pages[r] == nil || dir.loaded(r) != k {
				add("block %s holds a graph cell of %s, not its page", k, r)
			}
		}
		for r := range b.hash {
			if pages[r] == nil || dir.loaded(r) != k {
				add("block %s holds a hash cell of %s, not its page", k, r)
			}
		}
		for _, r := range b.touch {
			add("block %s: the change of %s's standing was not told to its linkers", k, r)
		}
		values, err := decodeValues(k, []byte(b.values))
		if err != nil {
			add("block %s: %v", k, err)
			continue
		}
		for r, v := range values {
			p := pages[r]
			switch {
			case p == nil || p.state != webtable.StateOK:
				add("block %s: node %s is not an ok page", k, r)
			case !v.published:
				add("block %s: node %s has no value written", k, r)
			case p.rank != strconv.FormatFloat(v.pub, 'g', -1, 64):
				add("block %s: node %s written as %g, its PageRank is %q", k, r, v.pub, p.rank)
			}
		}
		for r, p := range pages {
			if p.state == webtable.StateOK && dir.loaded(r) == k {
				if _, ok := values[r]; !ok {
					add("block %s: ok page %s is not a node", k, r)
				}
			}
		}
		sent := make(map[string]bool)
		for _, s := range lines([]byte(b.sent)) {
			sent[s] = true
		}
		for s := range sent {
			if blocks[strings.TrimPrefix(s, BlockPrefix)] == nil {
				add("block %s: sends to %s, which has no row", k, s)
			}
		}
		for _, ob := range slices.Sorted(maps.Keys(blocks)) {
			cell, has := blocks[ob].inflow[k]
			if has != sent[BlockPrefix+ob] {
				add("block %s: sends to %s %v, has an inflow cell there %v", k, ob, sent[BlockPrefix+ob], has)
			}
			if !has {
				continue
			}
			flows, err := decodeFlows(ob, []byte(cell))
			if err != nil {
				add("block %s: inflow from %s: %v", ob, k, err)
				continue
			}
			for t := range flows {
				if p := pages[t]; p == nil || p.state != webtable.StateOK || dir.loaded(t) != ob {
					add("block %s gives %s, which is not an ok page of block %s", k, t, ob)
				}
			}
		}
	}
	return bad, nil
}
