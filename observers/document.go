package observers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Building a cluster's search document from the table.

// buildNotes is what a build learns besides the document.
type buildNotes struct {
	unaliased []string          // rows found without aliases, not marked so (colUnaliased)
	inbound   map[string]string // member → inboundDigest of its inbound links
	// row's inbound links as the build's transaction sees them, if read
	// before (spillIn); nil if not.
	row   string
	links []inLink
}

// buildDoc builds the document of the cluster whose canonical is row, as
// seen by tx, taking notes if notes is not nil.
func buildDoc(ctx context.Context, tx *percolator.Tx, row string, notes *buildNotes) (*webtable.Doc, error) {
	cols := make(map[string]string)
	for _, c := range []string{webtable.Title, webtable.TitleCore, webtable.Text, webtable.LinkDensity, webtable.Description, webtable.Lang, webtable.Kind, webtable.Sections, webtable.Rank, webtable.FetchedAt, webtable.ClusterHash, webtable.LangMismatch} {
		v, err := tx.Get(ctx, row, c)
		if err != nil {
			return nil, err
		}
		cols[c] = string(v)
	}
	u, err := webtable.URL(row)
	if err != nil {
		return nil, err
	}
	doc := &webtable.Doc{URL: u, Host: webtable.HostOf(u), Title: cols[webtable.Title], Text: cols[webtable.Text],
		Description: cols[webtable.Description], Lang: cols[webtable.Lang], ClusterSize: 1}
	doc.PageRank, _ = strconv.ParseFloat(cols[webtable.Rank], 64)
	doc.TitleCore = cols[webtable.TitleCore]
	doc.Kind = cols[webtable.Kind]
	doc.Sections = webtable.DecodeSections(cols[webtable.Sections])
	doc.LinkDensity, _ = strconv.ParseFloat(cols[webtable.LinkDensity], 64)
	doc.LangMismatch = cols[webtable.LangMismatch] != ""
	if ms, err := strconv.ParseInt(cols[webtable.FetchedAt], 10, 64); err == nil {
		doc.FetchedAt = time.UnixMilli(ms).UTC()
	}
	members := []string{row}
	if h := cols[webtable.ClusterHash]; h != "" {
		c, err := webtable.ReadCluster(ctx, tx, h)
		if err != nil {
			return nil, err
		}
		members = c.Members
		if !slices.Contains(members, row) {
			members = append(members, row)
		}
	}
	doc.ClusterSize = len(members)
	for _, m := range members {
		if m == row {
			continue
		}
		if mu, err := webtable.URL(m); err == nil {
			doc.Duplicates = append(doc.Duplicates, mu)
		}
	}
	slices.Sort(doc.Duplicates)
	doc.Duplicates = doc.Duplicates[:min(len(doc.Duplicates), webtable.MaxDuplicates)]
	if doc.Anchors, err = anchorsOf(ctx, tx, members, notes); err != nil {
		return nil, err
	}
	doc.CutAnchors(webtable.MaxAnchors)
	return doc, nil
}

// anchorsOf gathers the inbound anchors of a cluster: links to any member
// and to any row redirecting to a member. Links from pages of the cluster
// itself are left out, and duplicates linking alike count once (anchors
// are keyed by the linking page's canonical).
func anchorsOf(ctx context.Context, tx *percolator.Tx, members []string, notes *buildNotes) ([]webtable.Anchor, error) {
	inCluster := make(map[string]bool, len(members))
	for _, m := range members {
		inCluster[m] = true
	}
	seen := make(map[webtable.Anchor]bool)
	var out []webtable.Anchor
	for _, m := range members {
		in, err := inbound(ctx, tx, m, notes)
		if err != nil {
			return nil, err
		}
		if notes != nil {
			notes.inbound[m] = inboundDigest(in)
		}
		for _, l := range in {
			if inCluster[l.src] || inCluster[l.canon] {
				continue
			}
			from := l.src
			if l.canon != "" {
				from = l.canon
			}
			u, err := webtable.URL(from)
			if err != nil {
				continue
			}
			a := webtable.Anchor{From: u, Text: l.text}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, func(a, b webtable.Anchor) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
	return out, nil
}

// inLink is a link to a page, directly or through redirects: the linking
// row, its canonical ("" when it has none) and the anchor text.
type inLink struct{ src, canon, text string }

// inbound returns the links to row and to the rows redirecting to it
// (transitively), in scan order. It notes (if notes is not nil) the rows
// it found without aliases and not marked so (colUnaliased).
func inbound(ctx context.Context, tx *percolator.Tx, row string, notes *buildNotes) ([]inLink, error) {
	targets := []string{row}
	for i := 0; i < len(targets) && i < 10_000; i++ {
		t := targets[i]
		if m, err := tx.Get(ctx, t, colUnaliased); err != nil {
			return nil, err
		} else if m != nil {
			continue
		}
		n := len(targets)
		err := webtable.ScanAliases(ctx, tx, t, func(from string) bool {
			targets = append(targets, from)
			return true
		})
		if err != nil {
			return nil, err
		}
		if len(targets) == n && notes != nil {
			notes.unaliased = append(notes.unaliased, t)
		}
	}
	var out []inLink
	for _, t := range targets {
		n := len(out)
		if notes != nil && notes.links != nil && t == notes.row {
			out = append(out, notes.links...)
		} else if err := webtable.ScanIn(ctx, tx, t, func(src string, v []byte) bool {
			out = append(out, inLink{src: src, text: string(v)})
			return true
		}); err != nil {
			return nil, err
		}
		srcs := make([]string, 0, len(out)-n)
		for _, l := range out[n:] {
			srcs = append(srcs, l.src)
		}
		if err := tx.Prefetch(ctx, srcs, webtable.ClusterOf); err != nil {
			return nil, err
		}
		for i := n; i < len(out); i++ {
			c, err := tx.Get(ctx, out[i].src, webtable.ClusterOf)
			if err != nil {
				return nil, err
			}
			out[i].canon = string(c)
		}
	}
	return out, nil
}

// inboundDigest identifies a row's inbound links, with the canonicals of
// their sources.
func inboundDigest(in []inLink) string {
	h := sha256.New()
	for _, l := range in {
		h.Write([]byte(l.src))
		h.Write([]byte{0})
		h.Write([]byte(l.canon))
		h.Write([]byte{0})
		h.Write([]byte(l.text))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
