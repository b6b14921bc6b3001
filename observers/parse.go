package observers

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Parse returns the observer that parses a fetched page (webtable.Body)
// into the page:* columns. It writes only what changed, so an unchanged
// recrawl triggers nothing downstream. It keeps the alias index of
// redirects, and PageRank's graph (rank.Refresh: the page's cell in its
// host's block, and the blocks linking to it when its standing changes).
func Parse() percolator.Observer {
	return percolator.Observer{Name: "parse", Column: webtable.Body, Run: parse}
}

// link is one outlink as stored in webtable.Links.
type link struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor"`
}

// parsed is what the parse observer derives from one fetch.
type parsed struct {
	state   string
	page    extract.Page
	kind    string // extract.Kind, "" for HTML
	err     string // why a document could not be read: page:error
	aliasOf string // target row of a redirect
}

func classify(ctx context.Context, row string, get func(col string) ([]byte, error)) (parsed, error) {
	var p parsed
	statusB, err := get(webtable.Status)
	if err != nil {
		return p, err
	}
	status, _ := strconv.Atoi(string(statusB))
	if status >= 300 && status < 400 {
		target, err := get(webtable.Redirect)
		if err != nil {
			return p, err
		}
		if r, err := webtable.Row(string(target)); err == nil && r != row {
			p.state, p.aliasOf = webtable.StateRedirect, r
			return p, nil
		}
		p.state = webtable.StateGone
		return p, nil
	}
	hdrs, err := get(webtable.Headers)
	if err != nil {
		return p, err
	}
	truncated, err := get(webtable.Truncated)
	if err != nil {
		return p, err
	}
	// A body the fetch says is large is read within its loan, not before
	// it: parse workers that each read a 10 MiB body and then wait for
	// the loan to extract it would hold the bodies the loan is to bound.
	held := extract.MemoryCost * expectedSize(hdrs, truncated)
	release, err := budget.Hold(ctx, held)
	if err != nil {
		return p, err
	}
	defer func() { release() }()
	body, err := get(webtable.Body)
	if err != nil {
		return p, err
	}
	switch {
	case status == 0 && body != nil:
		// A fetch that failed without a response (a timeout) keeps the
		// content of the last good one.
	case status < 200 || status >= 300 || body == nil:
		p.state = webtable.StateGone
		return p, nil
	}
	ctype, err := get(webtable.Type)
	if err != nil {
		return p, err
	}
	kind := extract.Kind(string(ctype), body)
	if kind == "" {
		p.state = webtable.StateUnparsed
		return p, nil
	}
	u, err := webtable.URL(row)
	if err != nil {
		return p, err
	}
	if cost := extract.MemoryCost * int64(len(body)); cost > held {
		release()
		if release, err = budget.Hold(ctx, cost); err != nil {
			release = func() {}
			return p, err
		}
	}
	page, kind, err := extract.Document(u, body, string(ctype), extract.Options{XRobotsTag: header(hdrs, "X-Robots-Tag"), ContentLanguage: header(hdrs, "Content-Language")})
	if err != nil {
		p.state = webtable.StateUnparsed // recorded, not parsed; never an observer failure
		p.err = err.Error()
		return p, nil
	}
	p.page = page
	if kind != extract.KindHTML {
		p.kind = kind
	}
	p.state = webtable.StateOK
	if page.NoIndex {
		p.state = webtable.StateNoIndex
	}
	return p, nil
}

// truncatedSize is what a body marked fetch:truncated is taken to hold
// before it is read: the crawler's default -max-body.
const truncatedSize = 10 << 20

// expectedSize is the size of a page's body as its fetch recorded it
// (its Content-Length, or the body limit when the body was cut), or 0
// when the fetch did not say: such a body is borrowed for once read.
func expectedSize(hdrs, truncated []byte) int64 {
	if string(truncated) == "1" {
		return truncatedSize
	}
	n, err := strconv.ParseInt(header(hdrs, "Content-Length"), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return min(n, truncatedSize)
}

// densityString is a link density as the page:linkdensity column and the
// document carry it: two decimals, so that a page's document changes only
// when its share of links does.
func densityString(d float64) string { return strconv.FormatFloat(d, 'f', 2, 64) }

// density is the value of densityString(d).
func density(d float64) float64 {
	v, _ := strconv.ParseFloat(densityString(d), 64)
	return v
}

// header returns a header from the crawler's JSON header map.
func header(b []byte, name string) string {
	if len(b) == 0 {
		return ""
	}
	var h map[string]string
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	for k, v := range h {
		if http1Canonical(k) == http1Canonical(name) {
			return v
		}
	}
	return ""
}

func http1Canonical(s string) string { return strings.ToLower(s) }

func parse(ctx context.Context, tx *percolator.Tx, row, _ string) error {
	get := func(col string) ([]byte, error) { return tx.Get(ctx, row, col) }
	p, err := classify(ctx, row, get)
	if err != nil {
		return err
	}
	ok := p.state == webtable.StateOK
	oldAlias, err := get(webtable.AliasOf)
	if err != nil {
		return err
	}
	oldHash, err := get(webtable.Hash)
	if err != nil {
		return err
	}

	w := writer{ctx: ctx, tx: tx, row: row}
	w.put(webtable.State, p.state)
	w.opt(webtable.Title, p.page.Title, ok)
	w.opt(webtable.Text, p.page.Text, ok)
	w.opt(webtable.TitleCore, p.page.TitleCore, ok && p.page.TitleCore != "")
	w.opt(webtable.LinkDensity, densityString(p.page.LinkDensity), ok)
	w.opt(webtable.Description, p.page.Description, ok && p.page.Description != "")
	w.opt(webtable.Lang, p.page.Lang, ok && p.page.Lang != "")
	oldMismatch, err := get(webtable.LangMismatch)
	if err != nil {
		return err
	}
	mismatch := ok && p.page.LangMismatch
	w.opt(webtable.LangMismatch, "1", mismatch)
	w.opt(webtable.Kind, p.kind, ok && p.kind != "")
	w.opt(webtable.Sections, webtable.EncodeSections(p.page.Sections), ok && len(p.page.Sections) > 0)
	w.opt(webtable.ParseError, p.err, p.err != "")
	w.opt(webtable.Canonical, p.page.Canonical, ok && p.page.Canonical != "")
	hash := p.page.Hash
	if hash == "" {
		hash = "row:" + row // an empty page is a cluster of its own
	}
	w.opt(webtable.Hash, hash, ok)
	fp := extract.SimHash(p.page.Text)
	w.opt(webtable.SimHash, webtable.NearFPString(fp), ok && fp != 0)
	var links []link
	for _, l := range p.page.Links {
		links = append(links, link{URL: l.URL, Anchor: l.Anchor})
	}
	lj, err := json.Marshal(links)
	if err != nil {
		return err
	}
	w.opt(webtable.Links, string(lj), ok && len(links) > 0)
	w.opt(webtable.AliasOf, p.aliasOf, p.aliasOf != "")
	if w.err != nil {
		return w.err
	}
	if (oldMismatch != nil) != mismatch {
		// Which of its near-copies leads may change (nearLead), though
		// its fingerprint did not.
		if err := tx.Notify(row, webtable.NearDirty); err != nil {
			return err
		}
	}
	if err := tx.Set(row, webtable.ParsedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10))); err != nil {
		return err
	}

	// The alias index: the redirect target lists the rows redirecting to it,
	// so its document gathers their anchors.
	if string(oldAlias) != p.aliasOf {
		if len(oldAlias) > 0 {
			if err := webtable.RemoveAlias(tx, string(oldAlias), row); err != nil {
				return err
			}
			if err := tx.Notify(string(oldAlias), webtable.DocDirty); err != nil {
				return err
			}
		}
		if p.aliasOf != "" {
			if err := webtable.AddAlias(tx, p.aliasOf, row); err != nil {
				return err
			}
			if err := tx.Delete(p.aliasOf, colUnaliased); err != nil {
				return err
			}
			if err := tx.Notify(p.aliasOf, webtable.DocDirty); err != nil {
				return err
			}
		}
	}
	// The page's own document, when something it shows changed and the page
	// may have one: a page that had no content hash before this run has no
	// cluster and no document yet (its first election notifies it, and that
	// runs after the cluster observer, after us).
	if w.changed {
		had := oldHash != nil
		if !had {
			had, err = hasDoc(ctx, tx, row)
		}
		if err != nil {
			return err
		}
		if err != nil {
			return err
		}
		if had {
			if err := tx.Notify(row, webtable.DocDirty); err != nil {
				return err
			}
		}
	}
	// PageRank's graph: the page's links and standing (its block, and the
	// blocks linking here when it becomes or stops being a page).
	_, err = rank.Refresh(ctx, tx, row)
	return err
}

// hasDoc reports whether row is or was in a duplicate cluster, or is
// exported.
func hasDoc(ctx context.Context, tx *percolator.Tx, row string) (bool, error) {
	for _, c := range []string{webtable.ClusterHash, webtable.ExportDigest} {
		v, err := tx.Get(ctx, row, c)
		if err != nil || v != nil {
			return v != nil, err
		}
	}
	return false, nil
}

// writer sets page columns only when their value changes, so unchanged
// pages trigger no downstream observers.
type writer struct {
	ctx     context.Context
	tx      *percolator.Tx
	row     string
	err     error
	changed bool // some column was written
}

func (w *writer) put(col, val string) { w.opt(col, val, true) }

// opt sets col to val if present, deletes it otherwise.
func (w *writer) opt(col, val string, present bool) {
	if w.err != nil {
		return
	}
	old, err := w.tx.Get(w.ctx, w.row, col)
	if err != nil {
		w.err = err
		return
	}
	switch {
	case present && (old == nil || string(old) != val):
		w.err = w.tx.Set(w.row, col, []byte(val))
		w.changed = true
	case !present && old != nil:
		w.err = w.tx.Delete(w.row, col)
		w.changed = true
	}
}
