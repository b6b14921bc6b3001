package rank

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// The block solve stops when no value moves by more than solveTol
// (relative) in a sweep, or after maxSweeps.
const (
	solveTol  = 1e-9
	maxSweeps = 1000
)

// maxWrites bounds the page rows one run writes, so a transaction stays
// small however big the host; a run that leaves some notifies its block
// again and the next one goes on.
var maxWrites = 2000

// runBlock is one run on block row b: solve the block's pages given what
// other blocks give them, send what they give other blocks, write the
// values that moved (see the package doc).
func (o *observer) runBlock(ctx context.Context, tx *percolator.Tx, b string) error {
	key := b[len(BlockPrefix):] // the block key
	d := o.opt.Damping
	dir := newDirectory(ctx, tx)
	if cur, err := dir.current(key); err != nil {
		return err
	} else if !cur {
		return o.drain(ctx, tx, dir, b)
	}
	pages := make(map[string]graphCell)
	err := tx.Scan(ctx, b, b+"\x00", colGraph, func(_, col string, v []byte) bool {
		pages[col[len(colGraph):]] = decodeGraph(key, v)
		return true
	})
	if err != nil {
		return err
	}
	if len(pages) > maxBlockPages {
		return o.splitBlock(ctx, tx, dir, b, len(pages))
	}
	if err := runTouches(ctx, tx, dir, b); err != nil {
		return err
	}
	err = tx.Scan(ctx, b, b+"\x00", colHash, func(_, col string, v []byte) bool {
		if g, ok := pages[col[len(colHash):]]; ok {
			g.hash = string(v)
			pages[col[len(colHash):]] = g
		}
		return true
	})
	if err != nil {
		return err
	}
	ext := make(map[string]float64)
	var bad error
	err = tx.Scan(ctx, b, b+"\x00", colInflow, func(_, col string, v []byte) bool {
		var f map[string]float64
		if f, bad = decodeFlows(key, v); bad != nil {
			bad = fmt.Errorf("rank: %q %q: %w", b, col, bad)
			return false
		}
		for t, a := range f {
			ext[t] += a
		}
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return err
	}
	oldValues, old, err := readValues(ctx, tx, key)
	if err != nil {
		return err
	}
	oldSent, err := tx.Get(ctx, b, colSent)
	if err != nil {
		return err
	}

	// The nodes and their edges; rows of other blocks are looked up in
	// their block rows.
	var nodes []string
	for r, g := range pages {
		if g.state == webtable.StateOK {
			nodes = append(nodes, r)
		}
	}
	slices.Sort(nodes)
	index := make(map[string]int32, len(nodes))
	for i, r := range nodes {
		index[r] = int32(i)
	}
	foreign := make(map[string]graphCell)
	look := func(r string) (string, string, error) {
		k, err := dir.key(r)
		if err != nil {
			return "", "", err
		}
		if k == key {
			g := pages[r]
			return g.state, g.alias, nil
		}
		g, ok := foreign[r]
		if !ok {
			v, err := tx.Get(ctx, BlockPrefix+k, colGraph+r)
			if err != nil {
				return "", "", err
			}
			if v != nil {
				g = decodeStanding(k, v)
			}
			foreign[r] = g
		}
		return g.state, g.alias, nil
	}
	if err := prefetch(ctx, tx, dir, key, nodes, pages, foreign); err != nil {
		return err
	}
	n := len(nodes)
	in := make([][]int32, n)     // intra-block in-links
	cross := make([][]string, n) // edges to other blocks' pages
	share := make([]float64, n)  // d / outdeg
	for i, u := range nodes {
		out, err := outSet(u, pages[u].targets, look)
		if err != nil {
			return err
		}
		if len(out) > 0 {
			share[i] = d / float64(len(out))
		}
		for _, t := range out {
			if j, ok := index[t]; ok {
				in[j] = append(in[j], int32(i))
			} else {
				cross[i] = append(cross[i], t)
			}
		}
	}

	// Solve x = (1 − d) + ext + d·Σ x/outdeg within the block by
	// Gauss-Seidel, from the last values.
	x := make([]float64, n)
	e := make([]float64, n)
	for i, u := range nodes {
		x[i] = 1 - d
		if v, ok := old[u]; ok {
			x[i] = v.x
		}
		e[i] = ext[u]
	}
	for range maxSweeps {
		worst := 0.0
		for j := range x {
			s := 1 - d + e[j]
			for _, i := range in[j] {
				s += share[i] * x[i]
			}
			worst = max(worst, math.Abs(s-x[j])/s)
			x[j] = s
		}
		if worst < solveTol {
			break
		}
	}

	// What the block gives other blocks: send it where it moved.
	flows := make(map[string]map[string]float64)
	for i := range nodes {
		for _, t := range cross[i] {
			ob, err := dir.row(t)
			if err != nil {
				return err
			}
			if flows[ob] == nil {
				flows[ob] = make(map[string]float64)
			}
			flows[ob][t] += share[i] * x[i]
		}
	}
	targets := slices.Sorted(maps.Keys(flows))
	for _, ob := range union(lines(oldSent), targets) {
		if err := o.send(ctx, tx, key, ob, flows[ob]); err != nil {
			return err
		}
	}
	if err := setLines(tx, b, colSent, oldSent, targets); err != nil {
		return err
	}

	// Write the values that moved beyond the threshold to the page rows,
	// and tell export (when the value as the index shows it changes) and
	// the page's cluster election. They are told in the transaction that
	// writes the value, so a run of theirs that read an older value is
	// always followed by another. The election is also told when the page
	// moved to another cluster since: the new cluster's election may have
	// read an older value.
	values := make(map[string]value, n)
	elections := make(map[string]bool)
	more := false // pages left to write by the next run
	writes := 0
	// The pages whose value may be published read their election's
	// cells below (firstValue, alone): one call for all on Bigtable.
	var publishing []string
	for i, u := range nodes {
		if v := old[u]; !v.published || math.Abs(v.pub-x[i]) > o.opt.PublishThreshold*v.pub {
			publishing = append(publishing, u)
		}
	}
	if err := tx.Prefetch(ctx, publishing, webtable.ClusterOf, webtable.ClusterSize); err != nil {
		return err
	}
	for i, u := range nodes {
		v := old[u]
		v.x = x[i]
		publish := !v.published || math.Abs(v.x-v.pub) > o.opt.PublishThreshold*v.pub
		if publish && writes == maxWrites {
			publish, more = false, true
		}
		if publish {
			writes++
			if err := setFloat(tx, u, webtable.Rank, v.x); err != nil {
				return err
			}
			// A page's first value completes its document (export and the
			// election wait for it); later ones are background work.
			switch {
			case !v.published:
				err = firstValue(ctx, tx, u)
			case webtable.RoundRank(v.pub) != webtable.RoundRank(v.x):
				err = tx.Notify(u, webtable.DocLinked)
			}
			if err != nil {
				return err
			}
		}
		if h := pages[u].hash; h != "" && (publish || h != v.hash) {
			col := webtable.DupRanked
			if !v.published || h != v.hash {
				col = webtable.DupDirty
			} else if alone, err := alone(ctx, tx, u); err != nil {
				return err
			} else if alone {
				col = "" // no election to tell
			}
			if col != "" && !elections[col+h] {
				elections[col+h] = true
				if err := tx.Notify(webtable.ClusterPrefix+h, col); err != nil {
					return err
				}
			}
		}
		if publish {
			v.pub, v.published = v.x, true
		}
		v.hash = pages[u].hash
		values[u] = v
	}
	for u, v := range old {
		ub, err := dir.row(u)
		if err != nil {
			return err
		}
		if _, ok := values[u]; !ok && v.published && ub == b {
			// Not a page any more: whatever made it so told export and the
			// election. (A page of another block moved there when blocks
			// were split, see Init; that block writes its value.)
			if err := tx.Delete(u, webtable.Rank); err != nil {
				return err
			}
		}
	}
	if more {
		if err := tx.Notify(b, webtable.RankDirty); err != nil {
			return err
		}
	}
	if nv := encodeValues(key, nodes, values); !bytes.Equal(nv, oldValues) {
		if len(nv) == 0 {
			return tx.Delete(b, colValues)
		}
		return tx.Set(b, colValues, nv)
	}
	return nil
}

// scanFrom is how many targets a block's pages must have in another block
// for a run to read that block's graph cells in one scan rather than look
// each up (a site's index page links every page of a thousand sections).
// (A variable so that tests can have every block read so.)
var scanFrom = 32

// prefetch fills foreign with the graph cells of the targets that the
// pages of block key (nodes) have in other blocks, for the blocks that
// hold scanFrom of them or more; a target without a cell gets the zero
// cell. The other targets are looked up one by one as the run needs them.
func prefetch(ctx context.Context, tx *percolator.Tx, dir *directory, key string, nodes []string, pages map[string]graphCell, foreign map[string]graphCell) error {
	byBlock := make(map[string][]string) // other blocks' targets, by block key
	for _, u := range nodes {
		for _, t := range pages[u].targets {
			k, err := dir.key(t)
			if err != nil {
				return err
			}
			if k != key {
				byBlock[k] = append(byBlock[k], t)
			}
		}
	}
	for k, ts := range byBlock {
		if len(ts) < scanFrom {
			continue
		}
		for _, t := range ts {
			foreign[t] = graphCell{}
		}
		b := BlockPrefix + k
		err := tx.Scan(ctx, b, b+"\x00", colGraph, func(_, col string, v []byte) bool {
			// Only the cells a lookup would read (the targets are of
			// block k): a cell left in this row by an older split of
			// blocks is not r's.
			if r := col[len(colGraph):]; blockKey(r) == sectionOf(k) {
				if _, ok := foreign[r]; ok {
					foreign[r] = decodeStanding(k, v)
				}
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// send writes what block key gives block ob's pages into ob's row, when
// it moved by more than Epsilon (relative) for some page, or the pages
// changed, and tells ob: in the foreground (webtable.RankDirty) when a
// flow moved by more than Options.UrgentEpsilon, a move that can show in
// the pages' values as the index rounds them; else in the background
// (webtable.RankOutside), where the sends of a wave gather instead of
// each making ob solve again and send on. A page gaining or losing a
// flow is background work too: on a big site nearly every page crawled
// gives a crawled page of another section a first flow.
func (o *observer) send(ctx context.Context, tx *percolator.Tx, key, ob string, flow map[string]float64) error {
	col := colInflow + key
	oh := ob[len(BlockPrefix):]
	cur, err := tx.Get(ctx, ob, col)
	if err != nil {
		return err
	}
	before, err := decodeFlows(oh, cur)
	if err != nil {
		return fmt.Errorf("rank: %q %q: %w", ob, col, err)
	}
	floor := (1 - o.opt.Damping) * flowFloor
	urgency := o.opt.UrgentEpsilon > 0
	changed, urgent := len(before) != len(flow), false
	for t, a := range flow {
		if urgent || changed && !urgency {
			break
		}
		was, ok := before[t]
		moved := math.Abs(a - was)
		ref := max(math.Abs(was), floor)
		changed = changed || !ok || moved > o.opt.Epsilon*ref
		urgent = urgency && ok && moved > o.opt.UrgentEpsilon*ref
	}
	if !changed {
		return nil
	}
	if len(flow) == 0 {
		err = tx.Delete(ob, col)
	} else {
		err = tx.Set(ob, col, encodeFlows(oh, flow))
	}
	if err != nil {
		return err
	}
	if urgent {
		return tx.Notify(ob, webtable.RankDirty)
	}
	return tx.Notify(ob, webtable.RankOutside)
}

// flowFloor × (1 − d), a tenth of the least PageRank, is the flow below
// which a change is measured against it rather than the flow: Epsilon of
// it is too small to send. A hub linking every page of a big site gives
// each a tiny flow that moves by 1/outdegree with every new page; sent,
// each move made every block it links into solve again
// (TestHubSendsNoTinyMoves). A page's value is off by at most Epsilon ×
// (1 − d)/10 for each block that links into it beyond the relative bound.
const flowFloor = 0.1

// value is a node's entry in colValues.
type value struct {
	x         float64 // the block's solution
	pub       float64 // the value in the page's row
	published bool
	hash      string // the cluster whose election was last told
}

// readValues reads block key's colValues, as stored and decoded.
func readValues(ctx context.Context, tx *percolator.Tx, key string) ([]byte, map[string]value, error) {
	b := BlockPrefix + key
	raw, err := tx.Get(ctx, b, colValues)
	if err != nil {
		return nil, nil, err
	}
	old, err := decodeValues(key, raw)
	if err != nil {
		return nil, nil, fmt.Errorf("rank: %q %q: %w", b, colValues, err)
	}
	return raw, old, nil
}

// encodeValues writes one line per node: row (short), x, the published
// value, the cluster told.
func encodeValues(key string, nodes []string, values map[string]value) []byte {
	var b []byte
	for _, u := range nodes {
		v := values[u]
		b = append(b, short(key, u)...)
		b = append(b, '\t')
		b = strconv.AppendFloat(b, v.x, 'g', -1, 64)
		b = append(b, '\t')
		if v.published {
			b = strconv.AppendFloat(b, v.pub, 'g', -1, 64)
		}
		b = append(b, '\t')
		b = append(b, v.hash...)
		b = append(b, '\n')
	}
	return b
}

func decodeValues(key string, b []byte) (map[string]value, error) {
	out := make(map[string]value)
	for _, l := range lines(b) {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("bad line %q", l)
		}
		var v value
		var err error
		if v.x, err = strconv.ParseFloat(f[1], 64); err != nil {
			return nil, err
		}
		if f[2] != "" {
			if v.pub, err = strconv.ParseFloat(f[2], 64); err != nil {
				return nil, err
			}
			v.published = true
		}
		v.hash = f[3]
		out[long(key, f[0])] = v
	}
	return out, nil
}

// encodeFlows writes one line per target row (short for the block key): row, amount.
func encodeFlows(key string, flow map[string]float64) []byte {
	var b []byte
	for _, t := range slices.Sorted(maps.Keys(flow)) {
		b = append(b, short(key, t)...)
		b = append(b, '\t')
		b = strconv.AppendFloat(b, flow[t], 'g', -1, 64)
		b = append(b, '\n')
	}
	return b
}

func decodeFlows(key string, b []byte) (map[string]float64, error) {
	out := make(map[string]float64)
	for _, l := range lines(b) {
		r, a, ok := strings.Cut(l, "\t")
		if !ok {
			return nil, fmt.Errorf("bad line %q", l)
		}
		f, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return nil, err
		}
		out[long(key, r)] = f
	}
	return out, nil
}

// lines splits b into its non-empty lines.
func lines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// setLines writes list, one a line, to (row, col) whose value is old, if
// it differs; an empty list deletes the cell.
func setLines(tx *percolator.Tx, row, col string, old []byte, list []string) error {
	next := []byte(strings.Join(list, "\n"))
	switch {
	case bytes.Equal(next, old):
		return nil
	case len(next) == 0:
		return tx.Delete(row, col)
	}
	return tx.Set(row, col, next)
}

// union returns the sorted union of two sorted lists.
func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

func setFloat(tx *percolator.Tx, row, col string, f float64) error {
	return tx.Set(row, col, strconv.AppendFloat(nil, f, 'g', -1, 64))
}

// firstValue tells export of a page's first value, unless the page has no
// duplicate cluster election yet (webtable.ClusterOf): a page is exported
// only once elected, and its election waits for this value and notifies
// the document when it elects (an export before would do nothing). Then
// the page's ClusterOf is deleted, though absent, so that an election
// committing it concurrently conflicts with this transaction instead of
// reading an older value of the page's rank and being missed.
func firstValue(ctx context.Context, tx *percolator.Tx, u string) error {
	canon, err := tx.Get(ctx, u, webtable.ClusterOf)
	if err != nil {
		return err
	}
	if canon != nil {
		return tx.Notify(u, webtable.DocDirty)
	}
	return tx.Delete(u, webtable.ClusterOf)
}

// alone reports whether a new PageRank of page u changes no election
// that has counted u, so that rank need not tell one: u was alone in its
// cluster at its last election (webtable.ClusterSize is 1), or no
// election has counted u yet (no ClusterSize). On most sites nearly every
// cluster has one member: telling them made a bulk crawl's elect-rank run
// thousands of times for nothing; and in a bulk load a page's value moves
// several times before its first election, each move an elect-rank run
// that found the election waiting for another member's first value or
// already done.
//
// A member that joins u's cluster meanwhile is safe: the election that
// first counts it writes u's cluster size and rewrites u's PageRank as it
// read it (see observers.elect), so it conflicts with a rank transaction
// that read the size before and writes u's value after; one of them
// retries and sees the other. A page never elected has an election coming
// that reads its value: its first value told one (firstValue's caller),
// and one that ran since without electing waited for another member's
// first value, which tells it again. That election writes u's
// ClusterSize, so deleting the absent size here makes it conflict with
// this transaction, as firstValue does with ClusterOf, instead of reading
// an older value and being missed.
func alone(ctx context.Context, tx *percolator.Tx, u string) (bool, error) {
	v, err := tx.Get(ctx, u, webtable.ClusterSize)
	if err != nil {
		return false, err
	}
	if v == nil {
		return true, tx.Delete(u, webtable.ClusterSize)
	}
	return string(v) == "1", nil
}
