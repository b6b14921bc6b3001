package observers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// check returns what in tx's snapshot breaks the invariants that the
// chain keeps between its own columns once it is idle, at most limit of
// them (Verify adds them to its differences):
//
//   - a page publishes exactly its links (webtable.LinksOut is the links
//     of webtable.Links, none when the page is not ok), and every
//     published link, and only those, has its webtable.InPrefix cell in
//     its target with its anchors, or its spilled row (webtable.ScanIn);
//     a row keeps at most maxInCells of them, and is marked when it has
//     spilled ones;
//   - a redirect's target has its redirect row (webtable.AliasRow, or a
//     webtable.AliasPrefix cell in a table written before; never both),
//     and only redirects have them; a row marked unaliased has none;
//   - an ok page is a member of the cluster of its hash (a
//     webtable.MemberRow, or a member cell in a table written before;
//     never both) and of no other;
//     a page that is not ok is in no cluster; every cluster with members
//     elected the member with the highest PageRank (Canonical, on the
//     values in the table), and every member records that canonical and
//     the cluster's size;
//   - a page's band rows (webtable.NearRow) are those of its fingerprint
//     (webtable.SimHash), and every band row is of its page's fingerprint;
//     no page has fingerprints left that near-docs did not look around
//     (webtable.NearWas);
//   - the rank graph's own invariants (rank.Check).
func check(ctx context.Context, tx *percolator.Tx, limit int) ([]string, error) {
	var bad []string
	add := func(format string, args ...any) {
		if len(bad) < limit {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	type page struct {
		cols    map[string]string
		in      map[string]string // source row → anchor, in the row or spilled
		inRow   int               // of them, in the row
		spilled int               // of them, spilled
		marked  bool              // webtable.InSpilled
		aliases []string          // the pages redirecting here: the row's cells first
		// of them, cells of the row (a table written before)
		aliasCells int
	}
	pages := make(map[string]*page)
	get := func(row string) *page {
		p := pages[row]
		if p == nil {
			p = &page{cols: map[string]string{}, in: map[string]string{}}
			pages[row] = p
		}
		return p
	}
	type cluster struct {
		members []string
		rows    map[string]bool // the members with a row (webtable.MemberRow)
		canon   string
		digest  string
	}
	clusters := make(map[string]*cluster) // by hash
	clusterEnd := webtable.ClusterPrefix + "\xff"
	for _, prefix := range []string{"page:", "links:", "cluster:", webtable.Rank, colUnaliased, webtable.InPrefix, webtable.AliasPrefix, webtable.NearFP, webtable.NearWas} {
		err := tx.Scan(ctx, "", "", prefix, func(row, col string, v []byte) bool {
			if strings.HasPrefix(row, "!") {
				return true
			}
			p := get(row)
			switch {
			case col == webtable.InSpilled:
				p.marked = true
			case prefix == webtable.InPrefix:
				p.in[col[len(prefix):]] = string(v)
				p.inRow++
			case prefix == webtable.AliasPrefix:
				// A table written before kept redirects as cells.
				p.aliases = append(p.aliases, col[len(prefix):])
				p.aliasCells++
			default:
				p.cols[col] = string(v)
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	err := tx.Scan(ctx, webtable.AliasRowPrefix, webtable.AliasRowEnd, "", func(row, col string, _ []byte) bool {
		t, from, ok := webtable.ParseAliasRow(row)
		if !ok || col != webtable.AliasFrom {
			add("redirect row %q: not a redirect's (column %q)", row, col)
			return true
		}
		p := get(t)
		if slices.Contains(p.aliases[:p.aliasCells], from) {
			add("%s: redirect from %s both a cell and a row", t, from)
		}
		p.aliases = append(p.aliases, from)
		return true
	})
	if err != nil {
		return nil, err
	}
	err = tx.Scan(ctx, webtable.InSpillPrefix, webtable.InSpillEnd, webtable.InSpill, func(row, _ string, v []byte) bool {
		t, src, ok := webtable.ParseInSpillRow(row)
		if !ok {
			add("spill row %q: not a link's", row)
			return true
		}
		p := get(t)
		if a, ok := p.in[src]; ok {
			add("%s: link of %s both in the row (%q) and spilled (%q)", t, src, a, v)
		}
		p.in[src] = string(v)
		p.spilled++
		return true
	})
	if err != nil {
		return nil, err
	}
	clusterOf := func(h string) *cluster {
		c := clusters[h]
		if c == nil {
			c = &cluster{}
			clusters[h] = c
		}
		return c
	}
	err = tx.Scan(ctx, webtable.MemberRowPrefix, webtable.MemberRowEnd, "", func(row, col string, _ []byte) bool {
		h, m, ok := webtable.ParseMemberRow(row)
		if !ok || col != webtable.ClusterMember {
			add("member row %q: not a member's (column %q)", row, col)
			return true
		}
		c := clusterOf(h)
		c.members = append(c.members, m)
		if c.rows == nil {
			c.rows = make(map[string]bool)
		}
		c.rows[m] = true
		return true
	})
	if err != nil {
		return nil, err
	}
	err = tx.Scan(ctx, webtable.ClusterPrefix, clusterEnd, "", func(row, col string, v []byte) bool {
		h := row[len(webtable.ClusterPrefix):]
		c := clusterOf(h)
		switch {
		case strings.HasPrefix(col, webtable.MemberPrefix):
			// A table written before kept members as cells.
			m := col[len(webtable.MemberPrefix):]
			if c.rows[m] {
				add("cluster %q: member %s both a cell and a row", h, m)
			}
			c.members = append(c.members, m)
		case col == webtable.ClusterCanon:
			c.canon = string(v)
		case col == colMembers:
			c.digest = string(v)
		}
		return true
	})
	if err != nil {
		return nil, err
	}

	bands := make(map[string]string) // band row → fingerprint
	err = tx.Scan(ctx, webtable.NearPrefix, webtable.NearPrefix+"\xff", webtable.NearFP, func(row, _ string, v []byte) bool {
		bands[row] = string(v)
		return true
	})
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(bands)) {
		// NearPrefix + band + "/" + block + "/" + page row.
		rest := strings.TrimPrefix(k, webtable.NearPrefix)
		var page string
		if len(rest) > 7 {
			page = rest[7:]
		}
		var has string
		if p := pages[page]; p != nil {
			has = p.cols[webtable.NearFP]
		}
		fp, err := webtable.ParseNearFP(bands[k])
		if err != nil || page == "" || has != bands[k] {
			add("band row %q: fingerprint %q, the page's %q", k, bands[k], has)
			continue
		}
		if rest[0] < '0' || int(rest[0]-'0') >= webtable.NearBands || webtable.NearRow(int(rest[0]-'0'), fp, page) != k {
			add("band row %q: not a band row of fingerprint %q", k, bands[k])
		}
	}

	rows := slices.Sorted(maps.Keys(pages))
	published := make(map[string]map[string]string) // source row → target row → anchor
	for _, s := range rows {
		out := make(map[string]string)
		if b := pages[s].cols[webtable.LinksOut]; b != "" {
			if err := json.Unmarshal([]byte(b), &out); err != nil {
				add("%s: %s unreadable: %v", s, webtable.LinksOut, err)
			}
		}
		published[s] = out
	}
	for _, s := range rows {
		p := pages[s]
		state := p.cols[webtable.State]
		// Links: published exactly, each with its in: cell.
		want, err := outlinks([]byte(p.cols[webtable.Links]), s)
		if err != nil {
			add("%s: %v", s, err)
			continue
		}
		out := published[s]
		if !maps.Equal(out, want) {
			add("%s: publishes links %v, its links are %v", s, out, want)
		}
		for t, a := range out {
			if got, ok := get(t).in[s]; !ok || got != a {
				add("%s: link to %s published as %q, the target's in: cell is %q (%v)", s, t, a, got, ok)
			}
		}
		for src, a := range p.in {
			if got, ok := published[src][s]; !ok || got != a {
				add("%s: in: cell of %s (%q), which publishes %q here (%v)", s, src, a, got, ok)
			}
		}
		// Inbound links bounded in the row (spillIn).
		if p.inRow > maxInCells {
			add("%s: %d in: cells in the row, more than %d", s, p.inRow, maxInCells)
		}
		if p.spilled > 0 && !p.marked {
			add("%s: %d links spilled, the row is not marked %s", s, p.spilled, webtable.InSpilled)
		}
		// Aliases.
		if alias := p.cols[webtable.AliasOf]; alias != "" {
			if state != webtable.StateRedirect {
				add("%s: redirects to %s but is %q", s, alias, state)
			} else if !slices.Contains(get(alias).aliases, s) {
				add("%s: redirects to %s, which has no redirect row of it", s, alias)
			}
		}
		for _, a := range p.aliases {
			if ap := pages[a]; ap == nil || ap.cols[webtable.AliasOf] != s {
				add("%s: redirect row of %s, which does not redirect here", s, a)
			}
		}
		if _, ok := p.cols[colUnaliased]; ok && len(p.aliases) > 0 {
			add("%s: marked unaliased, but %v redirect here", s, p.aliases)
		}
		// Band rows.
		if was, ok := p.cols[webtable.NearWas]; ok {
			add("%s: fingerprints left %q, not looked around (%s)", s, was, webtable.NearWas)
		}
		if sh, fp := p.cols[webtable.SimHash], p.cols[webtable.NearFP]; sh != fp {
			add("%s: fingerprint %q, band rows under %q", s, sh, fp)
		} else if v, err := webtable.ParseNearFP(fp); err == nil {
			for b := range webtable.NearBands {
				if bands[webtable.NearRow(b, v, s)] != fp {
					add("%s: no band row %q", s, webtable.NearRow(b, v, s))
				}
			}
		}
		// Clusters.
		h := p.cols[webtable.Hash]
		switch {
		case state == webtable.StateOK:
			if p.cols[webtable.ClusterHash] != h {
				add("%s: in cluster %q, its hash is %q", s, p.cols[webtable.ClusterHash], h)
			}
			if c := clusters[h]; c == nil || !slices.Contains(c.members, s) {
				add("%s: not a member of the cluster of its hash %q", s, h)
			}
		default:
			for _, c := range []string{webtable.Hash, webtable.ClusterHash, webtable.ClusterOf, webtable.ClusterSize} {
				if v, ok := p.cols[c]; ok {
					add("%s: %q but has %s %q", s, state, c, v)
				}
			}
		}
	}
	for _, h := range slices.Sorted(maps.Keys(clusters)) {
		c := clusters[h]
		if len(c.members) == 0 {
			if c.canon != "" || c.digest != "" {
				add("cluster %q: no members but canonical %q, digest %q", h, c.canon, c.digest)
			}
			continue
		}
		ranks := make(map[string]float64)
		for _, m := range c.members {
			mp := get(m)
			if mp.cols[webtable.State] != webtable.StateOK || mp.cols[webtable.Hash] != h {
				add("cluster %q: member %s is %q with hash %q", h, m, mp.cols[webtable.State], mp.cols[webtable.Hash])
			}
			ranks[m], _ = strconv.ParseFloat(mp.cols[webtable.Rank], 64)
		}
		slices.Sort(c.members)
		if want := Canonical(c.members, func(r string) float64 { return ranks[r] }); c.canon != want {
			add("cluster %q: canonical %s, the PageRanks %v elect %s", h, c.canon, ranks, want)
		}
		if d := membersDigest(c.members); c.digest != d {
			add("cluster %q: members digest %q, its members' %q", h, c.digest, d)
		}
		for _, m := range c.members {
			mp := get(m)
			if got := mp.cols[webtable.ClusterOf]; got != c.canon {
				add("%s: canonical %q, its cluster's %q", m, got, c.canon)
			}
			// A table elected before memberSize wrote the exact size.
			if got := mp.cols[webtable.ClusterSize]; got != memberSize(len(c.members)) && got != strconv.Itoa(len(c.members)) {
				add("%s: cluster size %q, its cluster has %d", m, got, len(c.members))
			}
		}
	}
	rb, err := rank.Check(ctx, tx, limit-len(bad))
	if err != nil {
		return nil, err
	}
	return append(bad, rb...), nil
}
