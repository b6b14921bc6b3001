package rank

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// maxBlockPages is the number of page cells past which a block splits:
// its run moves its pages into blocks of a hash of their rows, so that no
// block row grows with its section (about 530 bytes a page: 2 MB at
// 4,096 pages; Bigtable advises rows under 100 MB and cannot read one
// past 256 MB). (A variable so that tests can split small blocks.)
var maxBlockPages = 4096

// maxSplitMove is the number of pages a split moves in its own
// transaction. A bigger block (one of an earlier release, or one filled
// by a bulk load's parse stage before its first run) is split by writing
// the section's leaves alone; its row is then drained drainBatch pages a
// run (drain).
var (
	maxSplitMove = 4 * maxBlockPages
	drainBatch   = 500
)

// A section's blocks. A section (blockKey: a host and the first directory
// of the path) is one block, its row BlockPrefix + section key, until it
// holds more than maxBlockPages pages. Then it splits by the bits of a
// hash of the page rows (leafBits): the colSplit cell of its directory
// row (dirPrefix + section key) lists the section's leaves, bit strings,
// one a line, and the page of row r is in the block of the leaf that
// prefixes the bits of r's hash: key section + "#" + leaf
// ("com.example:http/docs#01"). A leaf that grows splits in turn
// (extendible hashing): the directory row's list replaces it with its
// children, one or more bits longer. Leaves only get longer, so a row
// that stopped being a block never is one again: its runs drain what
// is left in it (drain).
const leafSep = '#'

// sectionOf returns the section of block key.
func sectionOf(key string) string {
	if i := strings.IndexByte(key, leafSep); i >= 0 {
		return key[:i]
	}
	return key
}

// leafOf returns the leaf of block key ("" for a section that is one
// block).
func leafOf(key string) string {
	if i := strings.IndexByte(key, leafSep); i >= 0 {
		return key[i+1:]
	}
	return ""
}

// leafKey returns the block key of leaf of section.
func leafKey(section, leaf string) string {
	if leaf == "" {
		return section
	}
	return section + string(leafSep) + leaf
}

// leafBits returns the 64 bits of the hash of row, as '0' and '1'.
func leafBits(row string) string {
	h := fnv.New64a()
	h.Write([]byte(row))
	s := h.Sum64()
	var b [64]byte
	for i := range b {
		b[i] = '0' + byte(s>>(63-i)&1)
	}
	return string(b[:])
}

// directory finds the blocks of pages: their section and, when the
// section is split, their leaf, read from the section's directory row
// once per directory (or from those loaded by loadDirectory). Not safe
// for concurrent use.
//
// The directory row is small and written only by splits: a transaction
// that reads it reads nothing else there. In the section's block row it
// would make every parse and links run of the section read that row
// (hundreds of KB, the primary of the section's parses) once more; and,
// as the first column every transaction read there, percolator's
// prefetching would learn to read with it the up to 24 page cells that
// other transactions read next, so that every such read asked for 25
// columns, which the Bigtable emulator answers by copying the whole row
// once per column.
type directory struct {
	ctx    context.Context
	tx     *percolator.Tx // nil: the sections not loaded are one block
	leaves map[string][]string
}

func newDirectory(ctx context.Context, tx *percolator.Tx) *directory {
	return &directory{ctx: ctx, tx: tx, leaves: make(map[string][]string)}
}

// loadDirectory reads the leaves of every split section in tx's
// snapshot, for a caller that reads every block row (Seed, Check, Init).
func loadDirectory(ctx context.Context, tx *percolator.Tx) (*directory, error) {
	d := &directory{ctx: ctx, leaves: make(map[string][]string)}
	err := tx.Scan(ctx, dirPrefix, dirPrefix+"\xff", colSplit, func(r, col string, v []byte) bool {
		if col == colSplit {
			d.leaves[r[len(dirPrefix):]] = lines(v)
		}
		return true
	})
	return d, err
}

// ignoreSplits has every section read as one block (tests: a
// transaction that read the section before it split).
var ignoreSplits = false

// leavesOf returns section's leaves, nil when it is one block.
func (d *directory) leavesOf(section string) ([]string, error) {
	if ignoreSplits {
		return nil, nil
	}
	if l, ok := d.leaves[section]; ok || d.tx == nil {
		return l, nil
	}
	v, err := d.tx.Get(d.ctx, dirPrefix+section, colSplit)
	if err != nil {
		return nil, err
	}
	l := lines(v)
	d.leaves[section] = l
	return l, nil
}

// key returns the key of page row's block.
func (d *directory) key(row string) (string, error) {
	s := blockKey(row)
	leaves, err := d.leavesOf(s)
	if err != nil || len(leaves) == 0 {
		return s, err
	}
	bits := leafBits(row)
	for _, l := range leaves {
		if strings.HasPrefix(bits, l) {
			return leafKey(s, l), nil
		}
	}
	return "", fmt.Errorf("rank: %q: no leaf of section %q holds %q", dirPrefix+s, s, row)
}

// loaded returns the key of page row's block from a directory that
// loadDirectory read ("" if the section's leaves do not hold row).
func (d *directory) loaded(row string) string {
	k, _ := d.key(row)
	return k
}

// row returns the block row of page row.
func (d *directory) row(row string) (string, error) {
	k, err := d.key(row)
	return BlockPrefix + k, err
}

// current reports whether key is a block: a section that is not split or
// one of its leaves.
func (d *directory) current(key string) (bool, error) {
	leaves, err := d.leavesOf(sectionOf(key))
	if err != nil {
		return false, err
	}
	if len(leaves) == 0 {
		return leafOf(key) == "" && strings.IndexByte(key, leafSep) < 0, nil
	}
	_, found := slices.BinarySearch(leaves, leafOf(key))
	return found && strings.IndexByte(key, leafSep) >= 0, nil
}

// split replaces block key, holding n pages, with leaves deep enough
// that each holds at most maxBlockPages/2 of them (as the hash spreads
// them), in the section's directory row, and returns the new leaves' keys.
func (d *directory) split(key string, n int) ([]string, error) {
	s, leaf := sectionOf(key), leafOf(key)
	leaves, err := d.leavesOf(s)
	if err != nil {
		return nil, err
	}
	depth := 1
	for n>>depth > maxBlockPages/2 && len(leaf)+depth < 64 {
		depth++
	}
	var kids []string
	for i := range 1 << depth {
		kids = append(kids, leaf+fmt.Sprintf("%0*b", depth, i))
	}
	next := slices.DeleteFunc(slices.Clone(leaves), func(l string) bool { return l == leaf })
	next = append(next, kids...)
	slices.Sort(next)
	if err := d.tx.Set(dirPrefix+s, colSplit, []byte(strings.Join(next, "\n"))); err != nil {
		return nil, err
	}
	d.leaves[s] = next
	keys := make([]string, len(kids))
	for i, l := range kids {
		keys[i] = leafKey(s, l)
	}
	return keys, nil
}

// rowCells are the cells of a block row, as stored.
type rowCells struct {
	graph, hash, touch map[string][]byte // page row → cell
	inflow             map[string][]byte // source block key → cell
	values, sent       []byte
}

func readCells(ctx context.Context, tx *percolator.Tx, b string) (rowCells, error) {
	c := rowCells{graph: map[string][]byte{}, hash: map[string][]byte{}, touch: map[string][]byte{}, inflow: map[string][]byte{}}
	err := tx.Scan(ctx, b, b+"\x00", "r", func(_, col string, v []byte) bool {
		switch {
		case strings.HasPrefix(col, colGraph):
			c.graph[col[len(colGraph):]] = v
		case strings.HasPrefix(col, colHash):
			c.hash[col[len(colHash):]] = v
		case strings.HasPrefix(col, colTouch):
			c.touch[col[len(colTouch):]] = v
		case strings.HasPrefix(col, colInflow):
			c.inflow[col[len(colInflow):]] = v
		case col == colValues:
			c.values = v
		case col == colSent:
			c.sent = v
		}
		return true
	})
	return c, err
}

// splitBlock splits block row b, which holds n pages (see maxBlockPages):
// it writes the section's new leaves and, when n is at most
// maxSplitMove, moves the block's cells into the leaves' rows in tx, so
// that no transaction ever sees the pages in neither; a bigger block is
// drained by the runs of its row (drain), which tx notifies.
func (o *observer) splitBlock(ctx context.Context, tx *percolator.Tx, dir *directory, b string, n int) error {
	key := b[len(BlockPrefix):]
	kids, err := dir.split(key, n)
	if err != nil {
		return err
	}
	if n > maxSplitMove {
		return tx.Notify(b, webtable.RankDirty)
	}
	c, err := readCells(ctx, tx, b)
	if err != nil {
		return err
	}
	for _, m := range []struct {
		col   string
		cells map[string][]byte
	}{{colGraph, c.graph}, {colHash, c.hash}, {colTouch, c.touch}} {
		for r, v := range m.cells {
			if err := tx.Delete(b, m.col+r); err != nil {
				return err
			}
			if k, err := dir.key(r); err != nil {
				return err
			} else if k == key || sectionOf(k) != sectionOf(key) {
				continue // not a page of this block: dropped (see Init)
			} else if err := tx.Set(BlockPrefix+k, m.col+r, v); err != nil {
				return err
			}
		}
	}
	if err := o.moveRest(ctx, tx, dir, b, c); err != nil {
		return err
	}
	for _, k := range kids {
		if err := tx.Notify(BlockPrefix+k, webtable.RankDirty); err != nil {
			return err
		}
	}
	return nil
}

// drain moves what is left in block row b, which is no longer a block:
// the cells of pages written by transactions that read the section
// before it split, or a split block too big to move at once. Each page
// (drainBatch of them a run) is refreshed into its block ([Refresh],
// which reads the page: a cell left here may be older than the page),
// with its standing marked changed, since runs of other blocks may have
// looked it up in its block before it got there (runTouches). Once no
// page is left, the values, inflows and sends move too (moveRest). The
// blocks that replaced b are told to run again.
func (o *observer) drain(ctx context.Context, tx *percolator.Tx, dir *directory, b string) error {
	c, err := readCells(ctx, tx, b)
	if err != nil {
		return err
	}
	key := b[len(BlockPrefix):]
	var pages []string
	for _, m := range []map[string][]byte{c.graph, c.hash, c.touch} {
		pages = append(pages, slices.Collect(maps.Keys(m))...)
	}
	slices.Sort(pages)
	pages = slices.Compact(pages)
	more := len(pages) > drainBatch
	if more {
		pages = pages[:drainBatch]
	}
	moved := make(map[string]bool)
	for _, r := range pages {
		for _, col := range []string{colGraph, colHash, colTouch} {
			if err := tx.Delete(b, col+r); err != nil {
				return err
			}
		}
		nb, err := dir.row(r)
		if err != nil {
			return err
		}
		if sectionOf(nb[len(BlockPrefix):]) != sectionOf(key) {
			continue // not a page of this section (see Init)
		}
		if _, err := refresh(ctx, tx, dir, r); err != nil {
			return err
		}
		moved[r] = true
		if c.graph[r] != nil || c.touch[r] != nil {
			if err := tx.Set(nb, colTouch+r, fmt.Appendf(nil, "%d", tx.StartTs())); err != nil {
				return err
			}
		}
		if err := tx.Notify(nb, webtable.RankDirty); err != nil {
			return err
		}
	}
	// A notification of b may come from a transaction that read the
	// section before it split and committed after the new blocks' first
	// runs began: they run again (in the background).
	leaves, err := dir.leavesOf(sectionOf(key))
	if err != nil {
		return err
	}
	for _, l := range leaves {
		if strings.HasPrefix(l, leafOf(key)) {
			if err := tx.Notify(BlockPrefix+leafKey(sectionOf(key), l), webtable.RankOutside); err != nil {
				return err
			}
		}
	}
	if more {
		if err := o.moveValues(ctx, tx, dir, b, c.values, moved); err != nil {
			return err
		}
		return tx.Notify(b, webtable.RankDirty)
	}
	return o.moveRest(ctx, tx, dir, b, c)
}

// moveRest moves the rest of block row b, once its pages have left: each
// node's value to its block (unless that block has one), each inflow to
// the blocks of its targets (and the source's sent list to those
// blocks), and deletes what b sent to other blocks, which b's pages'
// blocks send again when they run (they are notified).
func (o *observer) moveRest(ctx context.Context, tx *percolator.Tx, dir *directory, b string, c rowCells) error {
	key := b[len(BlockPrefix):]
	if err := o.moveValues(ctx, tx, dir, b, c.values, nil); err != nil {
		return err
	}
	for _, src := range slices.Sorted(maps.Keys(c.inflow)) {
		flows, err := decodeFlows(key, c.inflow[src])
		if err != nil {
			return fmt.Errorf("rank: %q %q: %w", b, colInflow+src, err)
		}
		by := make(map[string]map[string]float64)
		for t, a := range flows {
			nb, err := dir.row(t)
			if err != nil {
				return err
			}
			if nb == b || sectionOf(nb[len(BlockPrefix):]) != sectionOf(key) {
				continue
			}
			if by[nb] == nil {
				by[nb] = make(map[string]float64)
			}
			by[nb][t] = a
		}
		if err := tx.Delete(b, colInflow+src); err != nil {
			return err
		}
		for nb, f := range by {
			if err := tx.Set(nb, colInflow+src, encodeFlows(nb[len(BlockPrefix):], f)); err != nil {
				return err
			}
			if err := tx.Notify(nb, webtable.RankOutside); err != nil {
				return err
			}
		}
		sb := BlockPrefix + src
		sent, err := tx.Get(ctx, sb, colSent)
		if err != nil {
			return err
		}
		list := slices.DeleteFunc(lines(sent), func(s string) bool { return s == b })
		list = union(list, slices.Sorted(maps.Keys(by)))
		if err := setLines(tx, sb, colSent, sent, list); err != nil {
			return err
		}
	}
	for _, ob := range lines(c.sent) {
		if err := tx.Delete(ob, colInflow+key); err != nil {
			return err
		}
		if err := tx.Notify(ob, webtable.RankOutside); err != nil {
			return err
		}
	}
	if c.sent != nil {
		if err := tx.Delete(b, colSent); err != nil {
			return err
		}
	}
	return nil
}

// moveValues moves the nodes of b's colValues (raw) in only (all when
// only is nil) to their blocks' colValues, where those have none, so
// that a page's value written before is known there, and rewrites b's.
func (o *observer) moveValues(ctx context.Context, tx *percolator.Tx, dir *directory, b string, raw []byte, only map[string]bool) error {
	if len(raw) == 0 {
		return nil
	}
	key := b[len(BlockPrefix):]
	old, err := decodeValues(key, raw)
	if err != nil {
		return fmt.Errorf("rank: %q %q: %w", b, colValues, err)
	}
	by := make(map[string][]string)
	keep := make(map[string]value)
	for u, v := range old {
		if only != nil && !only[u] {
			keep[u] = v
			continue
		}
		k, err := dir.key(u)
		if err != nil {
			return err
		}
		if k != key && sectionOf(k) == sectionOf(key) {
			by[k] = append(by[k], u)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(by)) {
		rawTo, to, err := readValues(ctx, tx, k)
		if err != nil {
			return err
		}
		for _, u := range by[k] {
			if _, ok := to[u]; !ok {
				to[u] = old[u]
			}
		}
		if nv := encodeValues(k, slices.Sorted(maps.Keys(to)), to); !bytes.Equal(nv, rawTo) {
			if err := tx.Set(BlockPrefix+k, colValues, nv); err != nil {
				return err
			}
		}
	}
	if len(keep) == 0 {
		return tx.Delete(b, colValues)
	}
	return tx.Set(b, colValues, encodeValues(key, slices.Sorted(maps.Keys(keep)), keep))
}
