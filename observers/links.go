package observers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Links returns the observer that inverts a page's outlinks
// (webtable.Links): for each link S→T with anchor A it keeps the cell
// in:S = A in T's row, and removes the cells of links S no longer has
// (and their copies that T's export moved out of T's row, spillIn). Each
// source writes only its own cells, so sources never conflict, however
// popular the target. The target's document is notified in the background
// (webtable.DocLinked: only its anchors changed). (PageRank
// follows page:links through the parse observer, rank.Refresh; a run that
// publishes a link to a page not linked before tells the source's
// block, rank.Linked.)
//
// A run writes at most maxLinkChanges of a page's changed links, so that
// a page linking a hundred thousand pages (a site's index, a sitemap
// rendered as HTML) is not one transaction holding them all in memory:
// it publishes the first ones in order (webtable.LinksOut lists exactly
// the links published) and notifies webtable.LinksMore, which LinksMore
// answers with the next ones.
func Links() percolator.Observer {
	return percolator.Observer{Name: "links", Column: webtable.Links, Run: invertLinks}
}

// LinksMore returns the observer that goes on publishing the links of a
// page that had more changed links than one run of Links writes. It runs
// the same transaction on the page's current links, in the foreground.
func LinksMore() percolator.Observer {
	return percolator.Observer{Name: "links-more", Column: webtable.LinksMore, Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		return invertLinks(ctx, tx, row, webtable.Links)
	}}
}

// maxLinkChanges is how many in: cells one links run writes or deletes at
// most (a variable so that tests can make it small).
var maxLinkChanges = 5000

// outlinks reads a page's links as a map from target row to anchor text:
// self-links and unparsable URLs dropped, anchors of repeated targets
// joined.
func outlinks(b []byte, self string) (map[string]string, error) {
	out := make(map[string]string)
	if len(b) == 0 {
		return out, nil
	}
	var links []link
	if err := json.Unmarshal(b, &links); err != nil {
		return nil, fmt.Errorf("decode links of %q: %w", self, err)
	}
	for _, l := range links {
		t, err := webtable.Row(l.URL)
		if err != nil || t == self {
			continue
		}
		if a, ok := out[t]; ok && a != "" && l.Anchor != "" {
			out[t] = a + " | " + l.Anchor
		} else if !ok || a == "" {
			out[t] = l.Anchor
		}
	}
	return out, nil
}

// invertLinks brings the in: cells of row's targets, and row's LinksOut,
// closer to row's links (column col): all the way when at most
// maxLinkChanges targets differ, else the first maxLinkChanges of them in
// row order, notifying webtable.LinksMore for the rest.
func invertLinks(ctx context.Context, tx *percolator.Tx, row, col string) error {
	cur, err := tx.Get(ctx, row, col)
	if err != nil {
		return err
	}
	now, err := outlinks(cur, row)
	if err != nil {
		return err
	}
	prevB, err := tx.Get(ctx, row, webtable.LinksOut)
	if err != nil {
		return err
	}
	prev := make(map[string]string)
	if len(prevB) > 0 {
		if err := json.Unmarshal(prevB, &prev); err != nil {
			return fmt.Errorf("decode %s of %q: %w", webtable.LinksOut, row, err)
		}
	}
	var changed []string // targets whose in:row cell is set or deleted
	for t, a := range now {
		if old, ok := prev[t]; !ok || old != a {
			changed = append(changed, t)
		}
	}
	for t := range prev {
		if _, ok := now[t]; !ok {
			changed = append(changed, t)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if len(changed) > maxLinkChanges {
		slices.Sort(changed)
		changed = changed[:maxLinkChanges]
		if err := tx.Notify(row, webtable.LinksMore); err != nil {
			return err
		}
	}
	added := false // a link to a page not linked before
	for _, t := range changed {
		a, ok := now[t]
		_, was := prev[t]
		if ok {
			added = added || !was
			err = tx.Set(t, webtable.InPrefix+row, []byte(a))
			prev[t] = a
		} else {
			err = tx.Delete(t, webtable.InPrefix+row)
			delete(prev, t)
		}
		if err == nil && was {
			err = unspill(ctx, tx, t, row)
		}
		if err != nil {
			return err
		}
		if err := tx.Notify(t, webtable.DocLinked); err != nil {
			return err
		}
	}
	if added {
		// PageRank finds a page's linkers by these cells when the page's
		// standing changes; the source's block may have read the page's
		// standing before such a change that did not find this link.
		if err := rank.Linked(ctx, tx, row); err != nil {
			return err
		}
	}
	// prev is now what is published.
	if len(prev) == 0 {
		return tx.Delete(row, webtable.LinksOut)
	}
	b, err := json.Marshal(prev)
	if err != nil {
		return err
	}
	return tx.Set(row, webtable.LinksOut, b)
}
