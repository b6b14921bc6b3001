package observers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// ExportOptions configure the export observer. There are none yet: the
// PageRank a document carries is rounded by webtable.RoundRank, which the
// rank observer also uses to decide when to notify export.
type ExportOptions struct{}

// ExportObserver returns the observer that exports changed documents
// (webtable.DocDirty): when a canonical page's content, title, anchors,
// duplicates or PageRank (as rounded by webtable.RoundRank) change, an upsert goes to the
// export queue; when a page stops being an indexed canonical (gone, noindex,
// redirect, lost the election), a delete does.
func ExportObserver(opt ExportOptions) percolator.Observer {
	return percolator.Observer{Name: "export", Column: webtable.DocDirty, Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		return export(ctx, tx, row, opt)
	}}
}

// ExportRankObserver returns the export observer of documents whose
// PageRank changed (webtable.DocRanked), in the background: a PageRank
// wave re-exports thousands of documents, and content changes must not
// wait for it.
func ExportRankObserver(opt ExportOptions) percolator.Observer {
	return percolator.Observer{Name: "export-rank", Column: webtable.DocRanked, Background: true, Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		return export(ctx, tx, row, opt)
	}}
}

func export(ctx context.Context, tx *percolator.Tx, row string, opt ExportOptions) error {
	if strings.HasPrefix(row, "!") {
		return nil // not a page
	}
	get := func(r, col string) (string, error) {
		v, err := tx.Get(ctx, r, col)
		return string(v), err
	}
	state, err := get(row, webtable.State)
	if err != nil {
		return err
	}
	canon, err := get(row, webtable.ClusterOf)
	if err != nil {
		return err
	}
	digest, err := get(row, webtable.ExportDigest)
	if err != nil {
		return err
	}
	if state != webtable.StateOK || canon != row {
		switch {
		case state == webtable.StateOK && canon != "":
			// A duplicate's anchors belong to its canonical's document.
			if err := forward(ctx, tx, row, canon); err != nil {
				return err
			}
		case state == webtable.StateRedirect:
			// So do a redirect's, through its target.
			if err := forwardRedirect(ctx, tx, row); err != nil {
				return err
			}
		}
		if digest == "" {
			return nil
		}
		return unexport(tx, row)
	}

	if r, err := tx.Get(ctx, row, webtable.Rank); err != nil {
		return err
	} else if r == nil {
		// Not ranked yet: the rank observer notifies this document when it
		// writes the value, so build it once, then.
		return nil
	}
	notes := buildNotes{inbound: make(map[string]string)}
	doc, err := buildDoc(ctx, tx, row, &notes)
	if err != nil {
		return err
	}
	// Remember the rows without aliases, so the next build need not scan
	// them for any (parse deletes the mark when it adds one).
	for _, r := range notes.unaliased {
		if err := tx.Set(r, colUnaliased, nil); err != nil {
			return err
		}
	}
	// Tell the duplicates which of their inbound links the document has,
	// so they forward only what changes after (see forward).
	for m, d := range notes.inbound {
		if m == row {
			continue
		}
		old, err := tx.Get(ctx, m, colForwarded)
		if err != nil {
			return err
		}
		if string(old) != d {
			if err := tx.Set(m, colForwarded, []byte(d)); err != nil {
				return err
			}
		}
	}
	d := docDigest(doc)
	if d == digest {
		return nil
	}
	return enqueue(tx, row, doc, d)
}

// colUnaliased, in a page row: present when no row redirected to it when
// an export last looked (webtable.AliasPrefix cells); parse deletes it
// with every alias it adds. A Get is much cheaper than a scan that finds
// nothing.
const colUnaliased = "export:unaliased"

// forwardRedirect notifies the document of the page a redirect row leads
// to (through at most a few more redirects), which carries the anchors of
// links to the redirect.
func forwardRedirect(ctx context.Context, tx *percolator.Tx, row string) error {
	seen := []string{row}
	for range 6 {
		t, err := tx.Get(ctx, row, webtable.AliasOf)
		if err != nil || len(t) == 0 || slices.Contains(seen, string(t)) {
			return err
		}
		row = string(t)
		seen = append(seen, row)
		state, err := tx.Get(ctx, row, webtable.State)
		if err != nil {
			return err
		}
		if string(state) != webtable.StateRedirect {
			if string(state) != webtable.StateOK {
				return nil
			}
			return tx.Notify(row, webtable.DocDirty)
		}
	}
	return nil
}

// BuildDoc builds the document of the cluster whose canonical is row, as
// seen by tx.
func BuildDoc(ctx context.Context, tx *percolator.Tx, row string) (*webtable.Doc, error) {
	return buildDoc(ctx, tx, row, nil)
}

// buildNotes is what a build learns besides the document.
type buildNotes struct {
	unaliased []string          // rows found without aliases, not marked so (colUnaliased)
	inbound   map[string]string // member → inboundDigest of its inbound links
}

// buildDoc is BuildDoc, taking notes if notes is not nil.
func buildDoc(ctx context.Context, tx *percolator.Tx, row string, notes *buildNotes) (*webtable.Doc, error) {
	cols := make(map[string]string)
	for _, c := range []string{webtable.Title, webtable.Text, webtable.Description, webtable.Lang, webtable.Rank, webtable.FetchedAt, webtable.ClusterHash} {
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
	if ms, err := strconv.ParseInt(cols[webtable.FetchedAt], 10, 64); err == nil {
		doc.FetchedAt = time.UnixMilli(ms).UTC()
	}
	members := []string{row}
	if h := cols[webtable.ClusterHash]; h != "" {
		k := webtable.ClusterPrefix + h
		members = members[:0]
		err := tx.Scan(ctx, k, k+"\x00", webtable.MemberPrefix, func(_, col string, _ []byte) bool {
			members = append(members, strings.TrimPrefix(col, webtable.MemberPrefix))
			return true
		})
		if err != nil {
			return nil, err
		}
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
	if doc.Anchors, err = anchorsOf(ctx, tx, members, notes); err != nil {
		return nil, err
	}
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
		err := tx.Scan(ctx, t, t+"\x00", webtable.AliasPrefix, func(_, col string, _ []byte) bool {
			targets = append(targets, strings.TrimPrefix(col, webtable.AliasPrefix))
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
		err := tx.Scan(ctx, t, t+"\x00", webtable.InPrefix, func(_, col string, v []byte) bool {
			out = append(out, inLink{src: strings.TrimPrefix(col, webtable.InPrefix), text: string(v)})
			return true
		})
		if err != nil {
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

// colForwarded, in a duplicate's row: the inboundDigest of its links as
// its canonical's document last saw them (written by that build) or as it
// last forwarded them.
const colForwarded = "export:forwarded"

// forward notifies canon's document, of which row is a duplicate, when the
// links to row changed since that document (or row's last forward) saw
// them. A duplicate's export runs for many reasons (its linkers' links or
// elections, its PageRank) that leave its canonical's document as it is.
func forward(ctx context.Context, tx *percolator.Tx, row, canon string) error {
	in, err := inbound(ctx, tx, row, nil)
	if err != nil {
		return err
	}
	d := inboundDigest(in)
	old, err := tx.Get(ctx, row, colForwarded)
	if err != nil || string(old) == d {
		return err
	}
	if err := tx.Set(row, colForwarded, []byte(d)); err != nil {
		return err
	}
	return tx.Notify(canon, webtable.DocDirty)
}

// docDigest identifies a document's exported content: PageRank as
// webtable.RoundRank has it, the fetch time not at all (a recrawl that
// changed nothing is not an update).
func docDigest(d *webtable.Doc) string {
	c := *d
	c.FetchedAt = time.Time{}
	c.PageRank, _ = strconv.ParseFloat(webtable.RoundRank(d.PageRank), 64)
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func queueRow(tx *percolator.Tx, row string) string {
	return webtable.ExportRow(tx.StartTs(), row)
}

func enqueue(tx *percolator.Tx, row string, doc *webtable.Doc, digest string) error {
	e, err := json.Marshal(webtable.Export{Op: webtable.OpUpsert, Version: tx.StartTs(), Row: row, URL: doc.URL, Doc: doc})
	if err != nil {
		return err
	}
	last, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	for _, w := range []struct {
		row, col string
		val      []byte
	}{
		{queueRow(tx, row), webtable.ExportDoc, e},
		{row, webtable.ExportDigest, []byte(digest)},
		{row, webtable.ExportLast, last},
		{row, webtable.ExportRank, []byte(webtable.RoundRank(doc.PageRank))},
		{row, webtable.ExportedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10))},
		{row, webtable.ExportVer, []byte(strconv.FormatUint(tx.StartTs(), 10))},
		{webtable.HostRow(row), webtable.HostPagePrefix + row, []byte(strconv.Itoa(doc.CrossHostAnchors()))},
	} {
		if err := tx.Set(w.row, w.col, w.val); err != nil {
			return err
		}
	}
	return nil
}

func unexport(tx *percolator.Tx, row string) error {
	u, _ := webtable.URL(row)
	e, err := json.Marshal(webtable.Export{Op: webtable.OpDelete, Version: tx.StartTs(), Row: row, URL: u})
	if err != nil {
		return err
	}
	if err := tx.Set(queueRow(tx, row), webtable.ExportDoc, e); err != nil {
		return err
	}
	for _, c := range []struct{ row, col string }{
		{row, webtable.ExportDigest}, {row, webtable.ExportLast}, {row, webtable.ExportRank}, {webtable.HostRow(row), webtable.HostPagePrefix + row},
	} {
		if err := tx.Delete(c.row, c.col); err != nil {
			return err
		}
	}
	if err := tx.Set(row, webtable.ExportVer, []byte(strconv.FormatUint(tx.StartTs(), 10))); err != nil {
		return err
	}
	return tx.Set(row, webtable.ExportedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10)))
}
