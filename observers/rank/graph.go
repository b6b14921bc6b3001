package rank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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

// linkRows returns the rows page u's links (a webtable.Links value) point
// at: not-http(s) URLs and self-links dropped, sorted and deduplicated.
func linkRows(u string, links []byte) ([]string, error) {
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
		if err != nil || t == u {
			continue // not an http(s) URL: never crawled, never an edge
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// outSet returns the edges of page u whose links lead to the rows targets:
// the rows they end at once redirects are followed, kept when ok and not u
// itself, sorted and deduplicated. The batch and the observer share it, so
// both build the same graph.
func outSet(u string, targets []string, look lookup) ([]string, error) {
	out := make([]string, 0, len(targets))
	for _, t := range targets {
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
	var buf [maxHops + 1]string
	seen := buf[:0]
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

// graphCell is a page as rank sees it: ok with the rows its links point at
// and its content hash (which names its duplicate cluster; kept in its own
// cell, colHash), or a redirect to a row. Other pages have no cell.
type graphCell struct {
	state   string   // webtable.StateOK or webtable.StateRedirect
	alias   string   // the redirect's target row
	hash    string   // an ok page's webtable.Hash (not encoded: colHash)
	targets []string // an ok page's link rows (linkRows)
}

// encode writes the cell as lines: the state, then the alias or the
// targets. Rows of the page's own block are
// written from their path on (they begin with '/'), which halves a typical
// cell. Rows and hashes never hold a newline or a tab (URLs are escaped).
func (g graphCell) encode(key string) []byte {
	var b []byte
	b = append(b, g.state...)
	if g.state == webtable.StateRedirect {
		b = append(b, '\n')
		return append(b, short(key, g.alias)...)
	}
	for _, t := range g.targets {
		b = append(b, '\n')
		b = append(b, short(key, t)...)
	}
	return b
}

func decodeGraph(key string, b []byte) graphCell {
	lines := strings.Split(string(b), "\n")
	var g graphCell
	g.state, _, _ = strings.Cut(lines[0], "\t") // a hash after a tab: an older cell
	if g.state == webtable.StateRedirect {
		if len(lines) > 1 {
			g.alias = long(key, lines[1])
		}
		return g
	}
	g.targets = make([]string, 0, len(lines)-1)
	for _, l := range lines[1:] {
		g.targets = append(g.targets, long(key, l))
	}
	return g
}

// decodeStanding decodes a cell's state and alias only: what a page of
// another block is to a link (a lookup), without its targets, which for a
// site's index page are thousands.
func decodeStanding(key string, b []byte) graphCell {
	first, rest, _ := bytes.Cut(b, []byte("\n"))
	state, _, _ := bytes.Cut(first, []byte("\t"))
	var g graphCell
	switch string(state) { // without allocating, for the usual states
	case webtable.StateOK:
		g.state = webtable.StateOK
	case webtable.StateRedirect:
		g.state = webtable.StateRedirect
	default:
		g.state = string(state)
	}
	if g.state == webtable.StateRedirect && len(rest) > 0 {
		alias, _, _ := bytes.Cut(rest, []byte("\n"))
		g.alias = long(key, string(alias))
	}
	return g
}

// short drops key (a block key) from a row it prefixes, keeping the rest
// of the path.
func short(key, row string) string {
	key = sectionOf(key)
	if len(row) > len(key) && row[len(key)] == '/' && strings.HasPrefix(row, key) {
		return row[len(key):]
	}
	return row
}

// long undoes short.
func long(key, s string) string {
	if strings.HasPrefix(s, "/") {
		return sectionOf(key) + s
	}
	return s
}

// blockKey returns the key of a page row's section, its block unless the
// section is split (see directory): the row's host and the
// first directory of its path, when the path has one ("com.example:http/docs"
// for com.example:http/docs/a.html), or the host alone for a page at the top
// of its site. So the sections of a big site are blocks of their own, and a
// run reads one section rather than the whole host, while most links (those
// within a section) stay within a block. The query string is not looked at.
// (A variable so that tests can make the blocks of earlier releases.)
var blockKey = dirBlockKey

func dirBlockKey(row string) string {
	h := webtable.HostOfRow(row)
	path := row[len(h):]
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if len(path) > 1 {
		if i := strings.IndexByte(path[1:], '/'); i >= 0 {
			return row[:len(h)+1+i]
		}
	}
	return h
}
