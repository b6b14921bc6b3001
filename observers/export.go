package observers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Doc is the search document of a duplicate cluster, built from its
// canonical page: what the export queue carries to serving.
type Doc struct {
	URL         string    `json:"url"`
	Host        string    `json:"host"`
	Title       string    `json:"title"`
	Text        string    `json:"text"`
	Description string    `json:"description,omitempty"`
	Lang        string    `json:"lang,omitempty"`
	PageRank    float64   `json:"pagerank"`
	FetchedAt   time.Time `json:"fetched_at"`
	ClusterSize int       `json:"cluster_size"`
	Duplicates  []string  `json:"duplicates,omitempty"` // the other members' URLs
	Anchors     []Anchor  `json:"anchors,omitempty"`    // inbound links to any member or alias
}

// Anchor is one inbound link's text.
type Anchor struct {
	From string `json:"from"` // URL of the linking page (the canonical of its cluster)
	Text string `json:"text"`
}

// Export is one entry of the export queue: rows webtable.ExportPrefix +
// %020d(version) + "/" + page row, applied by serving in row order. Version
// is the start timestamp of the exporting transaction; two exports of one
// document conflict in the table, so a later version is always the newer
// document, and serving ignores anything older than what it has.
type Export struct {
	Op      string `json:"op"` // "upsert" or "delete"
	Version uint64 `json:"version"`
	Row     string `json:"row"`
	URL     string `json:"url"`
	Doc     *Doc   `json:"doc,omitempty"`
}

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
		if state == webtable.StateOK && canon != "" && canon != row {
			// A duplicate's anchors belong to its canonical's document.
			if err := tx.Notify(canon, webtable.DocDirty); err != nil {
				return err
			}
		}
		if digest == "" {
			return nil
		}
		return unexport(tx, row)
	}

	doc, err := BuildDoc(ctx, tx, row)
	if err != nil {
		return err
	}
	d := docDigest(doc)
	if d == digest {
		return nil
	}
	return enqueue(tx, row, doc, d)
}

// BuildDoc builds the document of the cluster whose canonical is row, as
// seen by tx.
func BuildDoc(ctx context.Context, tx *percolator.Tx, row string) (*Doc, error) {
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
	doc := &Doc{URL: u, Host: hostOf(u), Title: cols[webtable.Title], Text: cols[webtable.Text],
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
	if doc.Anchors, err = anchorsOf(ctx, tx, members); err != nil {
		return nil, err
	}
	return doc, nil
}

// anchorsOf gathers the inbound anchors of a cluster: links to any member
// and to any row redirecting to a member. Links from pages of the cluster
// itself are left out, and duplicates linking alike count once (anchors
// are keyed by the linking page's canonical).
func anchorsOf(ctx context.Context, tx *percolator.Tx, members []string) ([]Anchor, error) {
	inCluster := make(map[string]bool, len(members))
	for _, m := range members {
		inCluster[m] = true
	}
	targets := slices.Clone(members)
	for i := 0; i < len(targets) && i < 10_000; i++ {
		t := targets[i]
		err := tx.Scan(ctx, t, t+"\x00", webtable.AliasPrefix, func(_, col string, _ []byte) bool {
			targets = append(targets, strings.TrimPrefix(col, webtable.AliasPrefix))
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	seen := make(map[Anchor]bool)
	var out []Anchor
	for _, t := range targets {
		var srcs []Anchor
		err := tx.Scan(ctx, t, t+"\x00", webtable.InPrefix, func(_, col string, v []byte) bool {
			srcs = append(srcs, Anchor{From: strings.TrimPrefix(col, webtable.InPrefix), Text: string(v)})
			return true
		})
		if err != nil {
			return nil, err
		}
		for _, a := range srcs {
			if inCluster[a.From] {
				continue
			}
			from := a.From
			c, err := tx.Get(ctx, from, webtable.ClusterOf)
			if err != nil {
				return nil, err
			}
			if len(c) > 0 {
				if inCluster[string(c)] {
					continue
				}
				from = string(c)
			}
			u, err := webtable.URL(from)
			if err != nil {
				continue
			}
			a := Anchor{From: u, Text: a.Text}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, func(a, b Anchor) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
	return out, nil
}

// docDigest identifies a document's exported content: PageRank as
// webtable.RoundRank has it, the fetch time not at all (a recrawl that
// changed nothing is not an update).
func docDigest(d *Doc) string {
	c := *d
	c.FetchedAt = time.Time{}
	c.PageRank, _ = strconv.ParseFloat(webtable.RoundRank(d.PageRank), 64)
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func queueRow(tx *percolator.Tx, row string) string {
	return fmt.Sprintf("%s%020d/%s", webtable.ExportPrefix, tx.StartTs(), row)
}

func enqueue(tx *percolator.Tx, row string, doc *Doc, digest string) error {
	e, err := json.Marshal(Export{Op: "upsert", Version: tx.StartTs(), Row: row, URL: doc.URL, Doc: doc})
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
		{hostRow(row), "p:" + row, []byte(strconv.Itoa(crossHostAnchors(doc)))},
	} {
		if err := tx.Set(w.row, w.col, w.val); err != nil {
			return err
		}
	}
	return nil
}

func unexport(tx *percolator.Tx, row string) error {
	u, _ := webtable.URL(row)
	e, err := json.Marshal(Export{Op: "delete", Version: tx.StartTs(), Row: row, URL: u})
	if err != nil {
		return err
	}
	if err := tx.Set(queueRow(tx, row), webtable.ExportDoc, e); err != nil {
		return err
	}
	for _, c := range []struct{ row, col string }{
		{row, webtable.ExportDigest}, {row, webtable.ExportLast}, {row, webtable.ExportRank}, {hostRow(row), "p:" + row},
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

// hostRow is the per-host row of a page: one cell p:ROW per indexed page,
// holding its number of inbound anchors from other hosts.
func hostRow(row string) string { return webtable.HostPrefix + webtable.HostOfRow(row) }

func hostOf(u string) string {
	rest := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func crossHostAnchors(d *Doc) int {
	n := 0
	for _, a := range d.Anchors {
		if hostOf(a.From) != d.Host {
			n++
		}
	}
	return n
}
