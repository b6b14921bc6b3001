package rank

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/caffeine-go/caffeine/webtable"
)

// maxHops bounds the redirects followed from one link.
const maxHops = 5

// link is one element of webtable.Links.
type link struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor"`
}

// lookup returns the State and AliasOf of a row ("" when absent).
type lookup func(row string) (state, alias string, err error)

// outSet returns the edges of page u, whose webtable.Links value is links:
// the rows its links lead to once redirects are followed, kept when ok and
// not u itself, sorted and deduplicated. The batch and the observer share
// it, so both build the same graph.
func outSet(u string, links []byte, look lookup) ([]string, error) {
	if len(links) == 0 {
		return nil, nil
	}
	var ls []link
	if err := json.Unmarshal(links, &ls); err != nil {
		return nil, fmt.Errorf("rank: links of %q: %w", u, err)
	}
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		t, err := webtable.Row(l.URL)
		if err != nil {
			continue // not an http(s) URL: never crawled, never an edge
		}
		t, state, err := follow(t, look)
		if err != nil {
			return nil, err
		}
		if state == webtable.StateOK && t != u {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// follow follows redirects from row t and returns the row it ends at and
// that row's State. A chain longer than maxHops or a loop ends at a
// redirect, which is not a node.
func follow(t string, look lookup) (string, string, error) {
	var seen []string
	for hops := 0; ; hops++ {
		state, alias, err := look(t)
		if err != nil {
			return "", "", err
		}
		seen = append(seen, t)
		if state != webtable.StateRedirect || alias == "" || hops == maxHops || slices.Contains(seen, alias) {
			return t, state, nil
		}
		t = alias
	}
}
