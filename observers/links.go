package observers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Links returns the observer that inverts a page's outlinks
// (webtable.Links): for each link S→T with anchor A it keeps the cell
// in:S = A in T's row, and removes the cells of links S no longer has. Each
// source writes only its own cells, so sources never conflict, however
// popular the target. The target's document is notified in the background
// (webtable.DocLinked: only its anchors changed). (PageRank
// follows page:links through the parse observer, rank.Refresh.)
func Links() percolator.Observer {
	return percolator.Observer{Name: "links", Column: webtable.Links, Run: invertLinks}
}

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
	changed := false
	for t, a := range now {
		if old, ok := prev[t]; ok && old == a {
			continue
		}
		changed = true
		if err := tx.Set(t, webtable.InPrefix+row, []byte(a)); err != nil {
			return err
		}
		if err := tx.Notify(t, webtable.DocLinked); err != nil {
			return err
		}
	}
	for t := range prev {
		if _, ok := now[t]; ok {
			continue
		}
		changed = true
		if err := tx.Delete(t, webtable.InPrefix+row); err != nil {
			return err
		}
		if err := tx.Notify(t, webtable.DocLinked); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	if len(now) == 0 {
		if err := tx.Delete(row, webtable.LinksOut); err != nil {
			return err
		}
	} else {
		b, err := json.Marshal(now)
		if err != nil {
			return err
		}
		if err := tx.Set(row, webtable.LinksOut, b); err != nil {
			return err
		}
	}
	return nil
}
