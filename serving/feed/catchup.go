package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// catchUp brings ix to what the table says its index has (the index's
// served column, webtable.Queue.Served, of every page), and returns how many documents it
// changed. A feeder that takes over from another process runs it before it
// applies the queue: the entries its predecessor applied are gone from the
// queue, and its own copy of the index (in another directory, on another
// machine) may have missed them while it stood by.
//
// For a page whose index copy is older than that column it applies the
// page's last export (webtable.ExportLast) if that is the version the
// column names; a newer export is still in the queue (an export and
// its entry are one transaction, and the feeder deletes an entry when it
// records it), and the feeder applies it next, or it began before the
// index was registered and the backfill applies it. It reads the whole table in
// one snapshot, as Rebuild does.
func catchUp(ctx context.Context, db *percolator.DB, ix *serving.Index, served string, batch int) (int, error) {
	type want struct {
		row string
		s   Searchable
		had bool // the index copy has a document for row
	}
	var updates []serving.Update
	err := db.View(ctx, func(tx *percolator.Tx) error {
		updates = updates[:0]
		var (
			stale []want
			bad   error
		)
		err := tx.Scan(ctx, "", "", served, func(row, col string, v []byte) bool {
			if col != served || strings.HasPrefix(row, "!") {
				return true
			}
			s, ok := ParseSearchable(v)
			if !ok {
				return true
			}
			have, in, err := ix.Version(row)
			if err != nil {
				bad = err
				return false
			}
			if in && have >= s.Version || !in && s.Fetched.IsZero() {
				return true // as the table says, or newer (replayed from the queue next)
			}
			stale = append(stale, want{row, s, in})
			return true
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return err
		}
		for _, w := range stale {
			if w.s.Fetched.IsZero() { // a delete
				updates = append(updates, serving.Update{Export: webtable.Export{Op: webtable.OpDelete, Version: w.s.Version, Row: w.row}})
				continue
			}
			ver, err := tx.Get(ctx, w.row, webtable.ExportVer)
			if err != nil {
				return err
			}
			if v, _ := strconv.ParseUint(string(ver), 10, 64); v != w.s.Version {
				continue // a newer export is queued
			}
			last, err := tx.Get(ctx, w.row, webtable.ExportLast)
			if err != nil {
				return err
			}
			var d webtable.Doc
			if err := json.Unmarshal(last, &d); err != nil {
				continue // unexported since; the delete is queued
			}
			// Not new content: its latency was counted when it was fed.
			updates = append(updates, serving.Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: w.s.Version, Row: w.row, URL: d.URL, Doc: &d}, Prev: d.FetchedAt})
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("serving: catch up: %w", err)
	}
	n := 0
	for len(updates) > 0 {
		k := min(len(updates), batch)
		applied, err := ix.Apply(updates[:k])
		if err != nil {
			return n, fmt.Errorf("serving: catch up: %w", err)
		}
		n += len(applied)
		updates = updates[k:]
	}
	return n, nil
}
