package observers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Batch is the whole index recomputed from the raw pages with full scans,
// the way the MapReduce pipeline the paper replaced did it: parse all,
// cluster by content hash, invert links, PageRank by power iteration, fold
// near-copies (nearStanding, by brute force over the fingerprints' blocks),
// and build the set of exported documents.
type Batch struct {
	States    map[string]string        // page row → state
	Rank      map[string]float64       // ok page row → PageRank
	Canonical map[string]string        // ok page row → canonical row of its cluster
	Docs      map[string]*webtable.Doc // canonical row → exported document
	Took      time.Duration
}

type batchPage struct {
	parsed
	fetchedAt time.Time
	out       map[string]string // target row → anchor
}

// RunBatch recomputes everything from the fetch:* columns of every page in
// one snapshot of db.
func RunBatch(ctx context.Context, db *percolator.DB) (*Batch, error) {
	began := time.Now()
	pages := make(map[string]*batchPage)
	err := db.View(ctx, func(tx *percolator.Tx) error {
		// Collect the fetch columns row by row, then classify each row.
		var cur string
		cols := make(map[string][]byte)
		flush := func() error {
			if cur == "" {
				return nil
			}
			c := cols
			p, err := classify(ctx, cur, func(col string) ([]byte, error) { return c[col], nil })
			if err != nil {
				return err
			}
			bp := &batchPage{parsed: p}
			if ms, err := strconv.ParseInt(string(c[webtable.FetchedAt]), 10, 64); err == nil {
				bp.fetchedAt = time.UnixMilli(ms).UTC()
			}
			if p.state == webtable.StateOK {
				var links []link
				for _, l := range p.page.Links {
					links = append(links, link{URL: l.URL, Anchor: l.Anchor})
				}
				b, _ := json.Marshal(links)
				if bp.out, err = outlinks(b, cur); err != nil {
					return err
				}
			}
			pages[cur] = bp
			cols = make(map[string][]byte)
			return nil
		}
		var ferr error
		err := tx.Scan(ctx, "", "", "fetch:", func(row, col string, v []byte) bool {
			if strings.HasPrefix(row, "!") {
				return true
			}
			if row != cur {
				if ferr = flush(); ferr != nil {
					return false
				}
				cur = row
			}
			cols[col] = v
			return true
		})
		if err != nil {
			return err
		}
		if ferr != nil {
			return ferr
		}
		return flush()
	})
	if err != nil {
		return nil, fmt.Errorf("batch: scan pages: %w", err)
	}

	b := &Batch{States: make(map[string]string), Canonical: make(map[string]string), Docs: make(map[string]*webtable.Doc)}
	for r, p := range pages {
		b.States[r] = p.state
	}
	resolve := func(t string) (string, bool) {
		for hops := 0; hops <= 5; hops++ {
			p := pages[t]
			switch {
			case p == nil:
				return "", false
			case p.state == webtable.StateOK:
				return t, true
			case p.state == webtable.StateRedirect:
				t = p.aliasOf
			default:
				return "", false
			}
		}
		return "", false
	}
	graph := make(map[string][]string) // ok page → ok targets (deduped, no self)
	for r, p := range pages {
		if p.state != webtable.StateOK {
			continue
		}
		seen := make(map[string]bool)
		for t := range p.out {
			if rt, ok := resolve(t); ok && rt != r && !seen[rt] {
				seen[rt] = true
				graph[r] = append(graph[r], rt)
			}
		}
		if _, ok := graph[r]; !ok {
			graph[r] = nil
		}
	}
	b.Rank = rank.PowerIterationMap(graph, rank.Damping)

	// Clusters by content hash; canonical by PageRank.
	clusters := make(map[string][]string)
	for r, p := range pages {
		if p.state != webtable.StateOK {
			continue
		}
		h := p.page.Hash
		if h == "" {
			h = "row:" + r
		}
		clusters[h] = append(clusters[h], r)
	}
	for _, ms := range clusters {
		slices.Sort(ms)
		c := Canonical(ms, func(r string) float64 { return b.Rank[r] })
		for _, m := range ms {
			b.Canonical[m] = c
		}
	}

	// Inverted links: target row → source rows with anchors. Aliases: target
	// row → rows redirecting to it.
	in := make(map[string]map[string]string)
	aliases := make(map[string][]string)
	for r, p := range pages {
		for t, a := range p.out {
			if in[t] == nil {
				in[t] = make(map[string]string)
			}
			in[t][r] = a
		}
		if p.state == webtable.StateRedirect {
			aliases[p.aliasOf] = append(aliases[p.aliasOf], r)
		}
	}
	// Near-copies: the same rule on the same graph as the chain's.
	nodes := make(map[string]uint64)
	mismatch := make(map[string]bool)
	for r, p := range pages {
		if p.state != webtable.StateOK || b.Canonical[r] != r {
			continue
		}
		if fp := extract.SimHash(p.page.Text); fp != 0 {
			nodes[r] = fp
			mismatch[r] = p.page.LangMismatch
		}
	}
	g := mapNearGraph(nodes, mismatch)
	for h, ms := range clusters {
		_ = h
		c := b.Canonical[ms[0]]
		p := pages[c]
		hidden, similar, _ := nearStanding(g, c)
		if hidden {
			continue
		}
		u, err := webtable.URL(c)
		if err != nil {
			continue
		}
		doc := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: p.page.Title, TitleCore: p.page.TitleCore, Text: p.page.Text,
			LinkDensity: density(p.page.LinkDensity), Description: p.page.Description, LangMismatch: p.page.LangMismatch,
			Lang: p.page.Lang, Kind: p.kind, PageRank: b.Rank[c], FetchedAt: p.fetchedAt, ClusterSize: len(ms),
			Sections: p.page.Sections}
		inCluster := make(map[string]bool)
		for _, m := range ms {
			inCluster[m] = true
			if m != c {
				if mu, err := webtable.URL(m); err == nil {
					doc.Duplicates = append(doc.Duplicates, mu)
				}
			}
		}
		slices.Sort(doc.Duplicates)
		doc.Duplicates = doc.Duplicates[:min(len(doc.Duplicates), webtable.MaxDuplicates)]
		targets := slices.Clone(ms)
		for i := 0; i < len(targets) && i < 10_000; i++ {
			targets = append(targets, aliases[targets[i]]...)
		}
		seen := make(map[webtable.Anchor]bool)
		for _, t := range targets {
			for src, text := range in[t] {
				if inCluster[src] {
					continue
				}
				from := src
				if sc, ok := b.Canonical[src]; ok {
					if inCluster[sc] {
						continue
					}
					from = sc
				}
				fu, err := webtable.URL(from)
				if err != nil {
					continue
				}
				a := webtable.Anchor{From: fu, Text: text}
				if !seen[a] {
					seen[a] = true
					doc.Anchors = append(doc.Anchors, a)
				}
			}
		}
		slices.SortFunc(doc.Anchors, func(a, b webtable.Anchor) int {
			if c := strings.Compare(a.From, b.From); c != 0 {
				return c
			}
			return strings.Compare(a.Text, b.Text)
		})
		doc.CutAnchors(webtable.MaxAnchors)
		doc.Similar = similar
		b.Docs[c] = doc
	}
	b.Took = time.Since(began)
	return b, nil
}

// Verify compares what the incremental chain left in the table with a batch
// recomputation: the same pages indexed, the same canonical for every
// clustered page (a different one only where PageRank nearly ties), the
// same anchors, title and text per indexed document, and PageRank within
// rankTol (relative); and the invariants the chain keeps between its own
// columns, which hold once it is idle (see check). It returns the
// differences, at most limit of them.
func Verify(ctx context.Context, db *percolator.DB, rankTol float64, limit int) ([]string, *Batch, error) {
	b, err := RunBatch(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	var diffs []string
	add := func(format string, args ...any) {
		if len(diffs) < limit {
			diffs = append(diffs, fmt.Sprintf(format, args...))
		}
	}
	err = db.View(ctx, func(tx *percolator.Tx) error {
		rows := make([]string, 0, len(b.States))
		for r := range b.States {
			rows = append(rows, r)
		}
		sort.Strings(rows)
		for _, r := range rows {
			get := func(col string) (string, error) {
				v, err := tx.Get(ctx, r, col)
				return string(v), err
			}
			state, err := get(webtable.State)
			if err != nil {
				return err
			}
			if state != b.States[r] {
				add("%s: state %q, batch %q", r, state, b.States[r])
				continue
			}
			if state != webtable.StateOK {
				if d, _ := get(webtable.ExportDigest); d != "" {
					add("%s: exported but %s", r, state)
				}
				continue
			}
			rs, err := get(webtable.Rank)
			if err != nil {
				return err
			}
			inc, _ := strconv.ParseFloat(rs, 64)
			if want := b.Rank[r]; math.Abs(inc-want) > rankTol*want {
				add("%s: pagerank %.6f, batch %.6f", r, inc, want)
			}
			canon, err := get(webtable.ClusterOf)
			if err != nil {
				return err
			}
			if want := b.Canonical[r]; canon != want {
				if near(b.Rank[canon], b.Rank[want], 2*rankTol) {
					continue // a near tie: either may win
				}
				add("%s: canonical %q, batch %q", r, canon, want)
				continue
			}
			digest, err := get(webtable.ExportDigest)
			if err != nil {
				return err
			}
			want, indexed := b.Docs[r]
			switch {
			case indexed && digest == "":
				add("%s: not exported, batch exports it", r)
			case !indexed && digest != "":
				add("%s: exported, batch does not", r)
			case indexed:
				lastB, err := get(webtable.ExportLast)
				if err != nil {
					return err
				}
				var last webtable.Doc
				if err := json.Unmarshal([]byte(lastB), &last); err != nil {
					add("%s: exported document unreadable: %v", r, err)
					continue
				}
				if last.Title != want.Title || last.Text != want.Text {
					add("%s: exported title/text differ from batch", r)
				}
				if fmt.Sprint(last.Sections) != fmt.Sprint(want.Sections) {
					add("%s: exported sections %v, batch %v", r, last.Sections, want.Sections)
				}
				if last.LangMismatch != want.LangMismatch {
					add("%s: exported lang mismatch %v, batch %v", r, last.LangMismatch, want.LangMismatch)
				}
				if last.TitleCore != want.TitleCore || last.LinkDensity != want.LinkDensity {
					add("%s: exported title core %q and link density %g, batch %q and %g", r, last.TitleCore, last.LinkDensity, want.TitleCore, want.LinkDensity)
				}
				if webtable.RoundRank(last.PageRank) != webtable.RoundRank(inc) {
					add("%s: exported pagerank %g is stale: the page's is %g", r, last.PageRank, inc)
				}
				if !b.sameAnchors(&last, want) {
					add("%s: anchors %v (and %d more, %d from other hosts), batch %v (and %d more, %d)", r, last.Anchors, last.MoreAnchors, last.MoreCrossHost, want.Anchors, want.MoreAnchors, want.MoreCrossHost)
				}
				if fmt.Sprint(last.Duplicates) != fmt.Sprint(want.Duplicates) {
					add("%s: duplicates %v, batch %v", r, last.Duplicates, want.Duplicates)
				}
				if fmt.Sprint(last.Similar) != fmt.Sprint(want.Similar) {
					add("%s: similar %v, batch %v", r, last.Similar, want.Similar)
				}
				if last.URL != want.URL || last.Host != want.Host || last.Description != want.Description || last.Lang != want.Lang || last.Kind != want.Kind || last.ClusterSize != want.ClusterSize {
					add("%s: exported url %q, host %q, description %q, lang %q, kind %q, cluster size %d; batch %q, %q, %q, %q, %q, %d", r,
						last.URL, last.Host, last.Description, last.Lang, last.Kind, last.ClusterSize, want.URL, want.Host, want.Description, want.Lang, want.Kind, want.ClusterSize)
				}
				if er, err := get(webtable.ExportRank); err != nil {
					return err
				} else if er != webtable.RoundRank(last.PageRank) {
					add("%s: %s %q, the exported document's %q", r, webtable.ExportRank, er, webtable.RoundRank(last.PageRank))
				}
			}
		}
		more, err := check(ctx, tx, limit-len(diffs))
		diffs = append(diffs, more...)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return diffs, b, nil
}

// sameAnchors reports whether an exported document's anchors are the
// batch's: the same ones (anchorKeys), or when some were cut
// (webtable.Doc.CutAnchors) as many texts as many times, and as many
// left out. Which linker of a text a cut keeps follows the linkers'
// canonicals, which may differ where PageRank nearly ties.
func (b *Batch) sameAnchors(got, want *webtable.Doc) bool {
	if got.MoreAnchors != want.MoreAnchors || got.MoreCrossHost != want.MoreCrossHost {
		return false
	}
	if want.MoreAnchors == 0 {
		return b.anchorKeys(got.Anchors) == b.anchorKeys(want.Anchors)
	}
	texts := func(as []webtable.Anchor) string {
		ts := make([]string, len(as))
		for i, a := range as {
			ts[i] = a.Text
		}
		slices.Sort(ts)
		return strings.Join(ts, "\x00")
	}
	return texts(got.Anchors) == texts(want.Anchors)
}

// anchorKeys identifies anchors by the linking page's cluster (its batch
// canonical) and text: where PageRank nearly ties, incremental and batch
// may credit a cluster's anchors to different members, and that is fine.
func (b *Batch) anchorKeys(as []webtable.Anchor) string {
	keys := make([]string, 0, len(as))
	for _, a := range as {
		from := a.From
		if r, err := webtable.Row(a.From); err == nil {
			if c, ok := b.Canonical[r]; ok {
				from = c
			}
		}
		keys = append(keys, from+"\x00"+a.Text)
	}
	slices.Sort(keys)
	return strings.Join(keys, "\x01")
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(a, b)
}
