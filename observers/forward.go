package observers

import (
	"context"
	"slices"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Forwarding: a redirect's or a duplicate's inbound links reach the
// document that carries them, notified in the background
// (webtable.DocLinked): only that document's anchors change.

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
			return tx.Notify(row, webtable.DocLinked)
		}
	}
	return nil
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
	return tx.Notify(canon, webtable.DocLinked)
}
