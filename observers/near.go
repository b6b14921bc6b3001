package observers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Near-copies: pages whose texts without boilerplate have fingerprints
// (extract.SimHash, column webtable.SimHash) within NearBits bits of each
// other. The nodes are the canonical pages of the exact clusters (the only
// pages with documents); the edges join nodes within NearBits. The
// relation is not transitive (A~B and B~C without A~C), so the rule is
// local and one step deep:
//
//   - a node's lead is the best node of its neighbourhood (itself and its
//     neighbours): one whose declared language its text does not belie
//     (webtable.LangMismatch: of a page's translations that were left
//     untranslated, the original), then the shortest URL, then the
//     smallest (Canonical without PageRank, which moves with every crawl:
//     a rank-elected lead would move the documents of its neighbours with
//     it);
//   - a node is a head when it is its own lead;
//   - a node whose lead is a head is folded under it: it has no document
//     of its own, and the head's document lists it (webtable.Doc.Similar);
//   - every other node keeps its document (a chain A~B~C ordered A, B, C
//     folds B under A and leaves C shown, whose lead B is folded).
//
// So every folded page is listed by exactly one shown document within
// NearBits of it, a near cluster is a head and the nodes folded under it,
// and the outcome depends only on the fingerprints, the URLs and which
// pages are canonical: batch (RunBatch) and the chain compute it with the
// same function (nearStanding) over the same graph.
//
// The chain keeps the graph in band rows (webtable.NearRow): a page's
// fingerprint is cut into 4 blocks of 16 bits, and the page is listed under
// each block's value, so the pages within 3 bits of a fingerprint, which
// agree with it on a whole block, are found by 4 prefix reads.

// NearBits is how many bits two pages' fingerprints may differ in for the
// pages to be near-copies. At most webtable.NearBands-1, so that a
// near-copy shares a band row with the page.
const NearBits = webtable.NearBands - 1

// Near returns the observer that keeps a page's band rows
// (webtable.NearRow) and webtable.NearFP as its fingerprint
// (webtable.SimHash) changes, and tells near-docs (webtable.NearDirty on
// the page, webtable.NearWas for the fingerprint it left) to look at the
// documents near its old and its new fingerprint.
func Near() percolator.Observer {
	return percolator.Observer{Name: "near", Column: webtable.SimHash, Run: nearBands}
}

func nearBands(ctx context.Context, tx *percolator.Tx, row, _ string) error {
	v, err := tx.Get(ctx, row, webtable.SimHash)
	if err != nil {
		return err
	}
	old, err := tx.Get(ctx, row, webtable.NearFP)
	if err != nil {
		return err
	}
	if string(v) == string(old) && (v == nil) == (old == nil) {
		return nil
	}
	if old != nil {
		fp, err := webtable.ParseNearFP(string(old))
		if err != nil {
			return err
		}
		for b := range webtable.NearBands {
			if err := tx.Delete(webtable.NearRow(b, fp, row), webtable.NearFP); err != nil {
				return err
			}
		}
		// The pages that were near it lose it: near-docs looks around the
		// old fingerprint too, after this commits (a page arriving there
		// meanwhile is one this run cannot see).
		was, err := tx.Get(ctx, row, webtable.NearWas)
		if err != nil {
			return err
		}
		if !slices.Contains(strings.Fields(string(was)), string(old)) {
			if err := tx.Set(row, webtable.NearWas, []byte(strings.TrimSpace(string(was)+" "+string(old)))); err != nil {
				return err
			}
		}
	}
	if v == nil {
		if err := tx.Delete(row, webtable.NearFP); err != nil {
			return err
		}
	} else {
		fp, err := webtable.ParseNearFP(string(v))
		if err != nil {
			return err
		}
		for b := range webtable.NearBands {
			if err := tx.Set(webtable.NearRow(b, fp, row), webtable.NearFP, v); err != nil {
				return err
			}
		}
		if err := tx.Set(row, webtable.NearFP, v); err != nil {
			return err
		}
	}
	return tx.Notify(row, webtable.NearDirty)
}

// NearDocs returns the observer of webtable.NearDirty: the page's
// fingerprint or its standing as a canonical changed, so the documents
// within two steps of it (a neighbour's lead, a head's folded pages) may
// change. It tells those of canonical pages to check (webtable.NearCheck):
// a page joining twenty copies of itself checks twenty standings and
// re-exports the head and itself, not the twenty.
func NearDocs() percolator.Observer {
	return percolator.Observer{Name: "near-docs", Column: webtable.NearDirty, Run: nearDocs}
}

func nearDocs(ctx context.Context, tx *percolator.Tx, row, _ string) error {
	// The page itself, fingerprinted or not (it may just have lost its
	// fingerprint), and the pages within two steps of its fingerprint and
	// of those it left (webtable.NearWas). Read here, after the commit
	// that moved the page, not in it: two pages arriving near each other
	// at once each see the other in one of the two runs.
	docs := map[string]bool{row: true}
	one := map[string]uint64{}
	v, err := tx.Get(ctx, row, webtable.NearFP)
	if err != nil {
		return err
	}
	was, err := tx.Get(ctx, row, webtable.NearWas)
	if err != nil {
		return err
	}
	if was != nil {
		if err := tx.Delete(row, webtable.NearWas); err != nil {
			return err
		}
	}
	for _, s := range append(strings.Fields(string(was)), string(v)) {
		if s == "" {
			continue
		}
		fp, err := webtable.ParseNearFP(s)
		if err != nil {
			return err
		}
		near, err := nearFingerprints(ctx, tx, fp)
		if err != nil {
			return err
		}
		maps.Copy(one, near)
	}
	read := make(map[uint64]bool)
	for p, pfp := range one {
		docs[p] = true
		if read[pfp] {
			continue // a copy's: the same pages
		}
		read[pfp] = true
		two, err := nearPages(ctx, tx, pfp)
		if err != nil {
			return err
		}
		for _, q := range two {
			docs[q] = true
		}
	}
	pages := slices.Sorted(maps.Keys(docs))
	if err := tx.Prefetch(ctx, pages, webtable.ClusterOf); err != nil {
		return err
	}
	for _, p := range pages {
		c, err := tx.Get(ctx, p, webtable.ClusterOf)
		if err != nil {
			return err
		}
		if string(c) == p {
			if err := tx.Notify(p, webtable.NearCheck); err != nil {
				return err
			}
		}
	}
	return nil
}

// NearCheck returns the observer of webtable.NearCheck: it notifies the
// page's document (webtable.DocDirty) when the page's standing
// (nearStanding) differs from the one its last export saw (colNearShown).
func NearCheck() percolator.Observer {
	return percolator.Observer{Name: "near-check", Column: webtable.NearCheck, Run: nearCheck}
}

func nearCheck(ctx context.Context, tx *percolator.Tx, row, _ string) error {
	c, err := tx.Get(ctx, row, webtable.ClusterOf)
	if err != nil || string(c) != row {
		return err
	}
	hidden, similar, err := nearStanding(txNearGraph(ctx, tx), row)
	if err != nil {
		return err
	}
	old, err := tx.Get(ctx, row, colNearShown)
	if err != nil {
		return err
	}
	if string(old) != nearShown(hidden, similar) {
		return tx.Notify(row, webtable.DocDirty)
	}
	// The same: written again, so that an export that read the table
	// before the change that brought this standing back, and would record
	// another, conflicts with this run and reads the table again.
	return tx.Set(row, colNearShown, old)
}

// colNearShown, in a page row: the digest of the standing (nearShown) its
// last export saw, written by the export observer when it changes (and
// again, unchanged, by near-check).
const colNearShown = "near:shown"

// nearShown is the digest of a standing, as colNearShown holds it.
func nearShown(hidden bool, similar []string) string {
	h := sha256.New()
	if hidden {
		h.Write([]byte("hidden"))
	}
	for _, s := range similar {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// recordStanding writes row's standing into colNearShown when it changed.
func recordStanding(ctx context.Context, tx *percolator.Tx, row string, hidden bool, similar []string) error {
	d := nearShown(hidden, similar)
	old, err := tx.Get(ctx, row, colNearShown)
	if err != nil || string(old) == d {
		return err
	}
	return tx.Set(row, colNearShown, []byte(d))
}

// nearFingerprints returns the pages whose band rows put them within
// NearBits of fp, with their fingerprints: 4 prefix reads, one store call
// on Bigtable.
func nearFingerprints(ctx context.Context, tx *percolator.Tx, fp uint64) (map[string]uint64, error) {
	out := make(map[string]uint64)
	prefixes := make([]string, webtable.NearBands)
	ranges := make([]percolator.KeyRange, webtable.NearBands)
	for b := range webtable.NearBands {
		prefixes[b] = webtable.NearBlock(b, fp)
		ranges[b] = percolator.KeyRange{Start: prefixes[b], End: prefixes[b] + "\xff"}
	}
	var perr error
	err := tx.ScanRanges(ctx, ranges, webtable.NearFP, func(b int, r, _ string, v []byte) bool {
		got, err := webtable.ParseNearFP(string(v))
		if err != nil {
			perr = err
			return false
		}
		if extract.SimDistance(fp, got) <= NearBits {
			out[strings.TrimPrefix(r, prefixes[b])] = got
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if perr != nil {
		return nil, perr
	}
	return out, nil
}

// nearPages is nearFingerprints' pages, sorted.
func nearPages(ctx context.Context, tx *percolator.Tx, fp uint64) ([]string, error) {
	m, err := nearFingerprints(ctx, tx, fp)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(m)), nil
}

// nearGraph is the near-copy graph.
type nearGraph struct {
	// near returns the neighbourhood of node row: the nodes within
	// NearBits of its fingerprint, row included, sorted; nil when row is
	// no node.
	near func(row string) ([]string, error)
	// mismatch tells a node whose declared language its text belies
	// (webtable.LangMismatch).
	mismatch func(row string) (bool, error)
}

// lead is the best of a neighbourhood: a node without a language
// mismatch, then the shortest URL, then the smallest.
func (g nearGraph) lead(nodes []string) (string, error) {
	agrees := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		m, err := g.mismatch(n)
		if err != nil {
			return "", err
		}
		agrees[n] = !m
	}
	return Canonical(nodes, func(r string) float64 {
		if agrees[r] {
			return 1
		}
		return 0
	}), nil
}

// nearStanding returns whether node row is folded under a near-copy
// (hidden: it has no document), and otherwise the URLs of the nodes folded
// under it, sorted (see the rule above).
func nearStanding(g nearGraph, row string) (hidden bool, similar []string, err error) {
	n, err := g.near(row)
	if err != nil || len(n) <= 1 {
		return false, nil, err
	}
	lead, err := g.lead(n)
	if err != nil {
		return false, nil, err
	}
	if lead != row {
		ln, err := g.near(lead)
		if err != nil {
			return false, nil, err
		}
		ll, err := g.lead(ln)
		return err == nil && ll == lead, nil, err
	}
	for _, p := range n {
		if p == row {
			continue
		}
		pn, err := g.near(p)
		if err != nil {
			return false, nil, err
		}
		if pl, err := g.lead(pn); err != nil {
			return false, nil, err
		} else if pl != row {
			continue
		}
		if u, err := webtable.URL(p); err == nil {
			similar = append(similar, u)
		}
	}
	slices.Sort(similar)
	return false, similar, nil
}

// txNearGraph is the near-copy graph as tx sees it: band rows, and the
// nodes are the pages that are their own canonical (webtable.ClusterOf).
// It reads each fingerprint's band rows once (copies share one) and each
// page's canonical once.
func txNearGraph(ctx context.Context, tx *percolator.Tx) nearGraph {
	isNode := make(map[string]bool)
	fps := make(map[string]uint64)    // page → fingerprint, from band rows read
	byFP := make(map[uint64][]string) // fingerprint → the nodes near it
	node := func(r string) (bool, error) {
		if ok, seen := isNode[r]; seen {
			return ok, nil
		}
		c, err := tx.Get(ctx, r, webtable.ClusterOf)
		if err != nil {
			return false, err
		}
		isNode[r] = string(c) == r
		return isNode[r], nil
	}
	mismatch := make(map[string]bool)
	mis := func(r string) (bool, error) {
		if m, seen := mismatch[r]; seen {
			return m, nil
		}
		v, err := tx.Get(ctx, r, webtable.LangMismatch)
		if err != nil {
			return false, err
		}
		mismatch[r] = v != nil
		return v != nil, nil
	}
	near := func(row string) ([]string, error) {
		if ok, err := node(row); err != nil || !ok {
			return nil, err
		}
		fp, ok := fps[row]
		if !ok {
			v, err := tx.Get(ctx, row, webtable.NearFP)
			if err != nil || v == nil {
				return nil, err
			}
			if fp, err = webtable.ParseNearFP(string(v)); err != nil {
				return nil, err
			}
			fps[row] = fp
		}
		if n, ok := byFP[fp]; ok {
			return n, nil
		}
		ps, err := nearFingerprints(ctx, tx, fp)
		if err != nil {
			return nil, err
		}
		var n []string
		for _, p := range slices.Sorted(maps.Keys(ps)) {
			fps[p] = ps[p]
			ok, err := node(p)
			if err != nil {
				return nil, err
			}
			if ok {
				n = append(n, p)
			}
		}
		byFP[fp] = n
		return n, nil
	}
	return nearGraph{near: near, mismatch: mis}
}

// mapNearGraph is the near-copy graph of nodes (canonical row →
// fingerprint), for the batch recomputation: the same neighbourhoods as
// the band rows give, found through the same blocks. mismatch holds the
// nodes whose declared language their text belies.
func mapNearGraph(nodes map[string]uint64, mismatch map[string]bool) nearGraph {
	blocks := make(map[string][]string)
	for r, fp := range nodes {
		for b := range webtable.NearBands {
			k := webtable.NearBlock(b, fp)
			blocks[k] = append(blocks[k], r)
		}
	}
	near := func(row string) ([]string, error) {
		fp, ok := nodes[row]
		if !ok {
			return nil, nil
		}
		seen := make(map[string]bool)
		for b := range webtable.NearBands {
			for _, p := range blocks[webtable.NearBlock(b, fp)] {
				if extract.SimDistance(fp, nodes[p]) <= NearBits {
					seen[p] = true
				}
			}
		}
		return slices.Sorted(maps.Keys(seen)), nil
	}
	return nearGraph{near: near, mismatch: func(r string) (bool, error) { return mismatch[r], nil }}
}

// NearCopies returns, as tx sees the table, the URL of the page that page
// row is folded under ("" when it is not folded), and else the URLs of the
// near-copies folded under it: what its document shows, or would once
// exported. A page that is not a canonical has neither.
func NearCopies(ctx context.Context, tx *percolator.Tx, row string) (foldedUnder string, similar []string, err error) {
	g := txNearGraph(ctx, tx)
	hidden, similar, err := nearStanding(g, row)
	if err != nil || !hidden {
		return "", similar, err
	}
	n, err := g.near(row)
	if err != nil {
		return "", nil, err
	}
	lead, err := g.lead(n)
	if err != nil {
		return "", nil, err
	}
	u, err := webtable.URL(lead)
	return u, nil, err
}
