package observers

import (
	"context"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// ExportObserver returns the observer that exports changed documents
// (webtable.DocDirty): when a canonical page's content, title, anchors,
// duplicates or PageRank (as rounded by webtable.RoundRank) change, an upsert goes to the
// export queue; when a page stops being an indexed canonical (gone, noindex,
// redirect, lost the election, folded under a near-copy: nearStanding), a
// delete does.
func ExportObserver() percolator.Observer {
	var r registry
	// An export answers the background exports' notifications too: a
	// page's anchors that arrived before its content was exported need
	// no second export.
	return percolator.Observer{Name: "export", Column: webtable.DocDirty, Covers: []string{webtable.DocLinked}, Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		return r.export(ctx, tx, row)
	}}
}

// BackgroundDelay and BackgroundMaxDelay are the Observer.Delay and
// MaxDelay of the background observers (export-links, elect-rank): a page whose PageRank or inbound anchors move is exported
// once they have been still for BackgroundDelay and the foreground has
// had no backlog for a second, and at least every BackgroundMaxDelay while
// they keep moving or the backlog lasts. So during a bulk crawl a
// page linked by many pages is exported once after the backlog, not once
// a linker or a wave, and the anchors and PageRank the index shows are at
// most BackgroundMaxDelay (plus the backlog) behind the table. Content
// changes (export) are not delayed. Two background observers in a row
// (elect-rank, then export-links for the targets it re-credits) wait
// twice: at 5 s that was most of the handbook's time from the last
// content to idle; at 1 s PageRank's waves after a bulk crawl each
// became an export (docs/benchmarks/bulk.md § Background delay).
const (
	BackgroundDelay    = 3 * time.Second
	BackgroundMaxDelay = time.Minute
)

// ExportLinksObserver returns the export observer of documents whose
// inbound anchors or PageRank as the index shows it changed
// (webtable.DocLinked), in the background: during a bulk crawl every new
// linker of a page and every PageRank wave would re-export it, and content
// changes must not wait for those; a page notified again while its export
// waits (for BackgroundDelay, and for the foreground to rest) is exported
// once.
func ExportLinksObserver() percolator.Observer {
	var r registry
	return percolator.Observer{Name: "export-links", Column: webtable.DocLinked, Background: true,
		Delay: BackgroundDelay, MaxDelay: BackgroundMaxDelay, Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			return r.export(ctx, tx, row)
		}}
}

// export is the export observers' run. The PageRank a document carries is rounded
// by webtable.RoundRank, which the rank observer also uses to decide when
// to notify export.
func (r *registry) export(ctx context.Context, tx *percolator.Tx, row string) error {
	if strings.HasPrefix(row, "!") {
		return nil // not a page
	}
	// Every new linker notifies this run (webtable.DocLinked), whatever
	// the page's standing: its row keeps its links bounded here.
	links, err := spillIn(ctx, tx, row)
	if err != nil {
		return err
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
		return r.unexport(ctx, tx, row)
	}

	// A near-copy folded under another page has no document of its own.
	hidden, similar, err := nearStanding(txNearGraph(ctx, tx), row)
	if err != nil {
		return err
	}
	if err := recordStanding(ctx, tx, row, hidden, similar); err != nil {
		return err
	}
	if hidden {
		if digest == "" {
			return nil
		}
		return r.unexport(ctx, tx, row)
	}

	if r, err := tx.Get(ctx, row, webtable.Rank); err != nil {
		return err
	} else if r == nil {
		// Not ranked yet: the rank observer notifies this document when it
		// writes the value, so build it once, then.
		return nil
	}
	notes := buildNotes{inbound: make(map[string]string), row: row, links: links}
	doc, err := buildDoc(ctx, tx, row, &notes)
	if err != nil {
		return err
	}
	doc.Similar = similar
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
	return r.enqueue(ctx, tx, row, doc, d)
}

// colUnaliased, in a page row: present when no row redirected to it when
// an export last looked (webtable.AliasPrefix cells); parse deletes it
// with every alias it adds. A Get is much cheaper than a scan that finds
// nothing.
const colUnaliased = "export:unaliased"
