package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// Rebuild deletes the index in dir and builds it again from the table: the
// last exported document of every page that is exported now, at the
// version that exported it. Export queue entries still waiting are applied
// after it by the feeder as usual (those older than a document are
// ignored), so rebuilding loses nothing; run it with no feeder running.
func Rebuild(ctx context.Context, db *percolator.DB, dir string, opt serving.Options) (*serving.Index, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("serving: rebuild: %w", err)
	}
	ix, err := serving.OpenIndex(dir, opt)
	if err != nil {
		return nil, err
	}
	var batch []serving.Update
	flush := func() error {
		_, err := ix.Apply(batch)
		batch = batch[:0]
		return err
	}
	err = db.View(ctx, func(tx *percolator.Tx) error {
		var (
			row    string
			cells  = make(map[string][]byte)
			cbErr  error
			finish = func() {
				if row == "" || cells[webtable.ExportDigest] == nil || cells[webtable.ExportLast] == nil {
					return
				}
				var d webtable.Doc
				if err := json.Unmarshal(cells[webtable.ExportLast], &d); err != nil {
					opt.Logger.Error("serving: rebuild: bad exported document", "row", row, "err", err)
					return
				}
				v, _ := strconv.ParseUint(string(cells[webtable.ExportVer]), 10, 64)
				batch = append(batch, serving.Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: max(v, 1), Row: row, URL: d.URL, Doc: &d},
					Prev: d.FetchedAt}) // not new: its latency was counted when it was fed
				if len(batch) >= 1000 {
					cbErr = flush()
				}
			}
		)
		err := tx.Scan(ctx, "", "", "export:", func(r, col string, v []byte) bool {
			if r != row {
				finish()
				row = r
				clear(cells)
			}
			if !strings.HasPrefix(r, "!") {
				cells[col] = v
			}
			return cbErr == nil
		})
		finish()
		if err != nil {
			return err
		}
		return cbErr
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("serving: rebuild: %w", err)
	}
	return ix, nil
}

// maxAliases bounds the redirecting rows whose inlinks LookupDoc gathers.
const maxAliases = 100

// LookupDoc returns everything the table (and ix, if not nil) knows about
// the page of rawURL; its stage times are those of the index named name
// (IndexQueue's served column; "" is DefaultIndexName). It returns ErrNotFound when the table has no row for
// it, and ErrBadQuery when rawURL is not a URL the crawler could fetch.
func LookupDoc(ctx context.Context, db *percolator.DB, ix *serving.Index, name, rawURL string) (*DocInfo, error) {
	norm, err := webtable.Normalize(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", serving.ErrBadQuery, err)
	}
	row, err := webtable.Row(norm)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", serving.ErrBadQuery, err)
	}
	info := &DocInfo{URL: norm, Row: row, Outlinks: []string{}, Inlinks: []Inlink{}, Duplicates: []string{}, Similar: []string{}, History: []Fetch{}}
	found := false
	var aliases []string // rows redirecting here
	err = db.View(ctx, func(tx *percolator.Tx) error {
		aliases = aliases[:0]
		cells := make(map[string][]byte)
		err := tx.Scan(ctx, row, row+"\x00", "", func(_, col string, v []byte) bool {
			found = true
			switch {
			case strings.HasPrefix(col, webtable.InPrefix): // below
			case strings.HasPrefix(col, webtable.AliasPrefix): // below
			default:
				cells[col] = v
			}
			return true
		})
		if err != nil || !found {
			return err
		}
		err = webtable.ScanAliases(ctx, tx, row, func(from string) bool {
			aliases = append(aliases, from)
			return len(aliases) < maxAliases
		})
		if err != nil {
			return err
		}
		err = webtable.ScanIn(ctx, tx, row, func(src string, v []byte) bool {
			if u, err := webtable.URL(src); err == nil {
				info.Inlinks = append(info.Inlinks, Inlink{URL: u, Anchor: string(v)})
			}
			return true
		})
		if err != nil {
			return err
		}
		// Links to the URLs that redirect here are links here.
		for _, a := range aliases[:min(len(aliases), maxAliases)] {
			via, _ := webtable.URL(a)
			err := webtable.ScanIn(ctx, tx, a, func(src string, v []byte) bool {
				if src == row {
					return true // the page linking to itself through the redirect
				}
				if u, err := webtable.URL(src); err == nil {
					info.Inlinks = append(info.Inlinks, Inlink{URL: u, Anchor: string(v), Via: via})
				}
				return true
			})
			if err != nil {
				return err
			}
		}
		fill(info, cells, IndexQueue(db, name).Served)
		if h := cells[webtable.ClusterHash]; len(h) > 0 {
			c, err := webtable.ReadCluster(ctx, tx, string(h))
			if err != nil {
				return err
			}
			for _, m := range c.Members {
				if m == row {
					continue
				}
				if u, err := webtable.URL(m); err == nil {
					info.Duplicates = append(info.Duplicates, u)
				}
			}
		}
		under, similar, err := observers.NearCopies(ctx, tx, row)
		if err != nil {
			return err
		}
		info.NearCopyOf, info.Similar = under, append(info.Similar[:0], similar...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s", serving.ErrNotFound, norm)
	}
	if ix != nil {
		if _, in, err := ix.Version(row); err == nil {
			info.Indexed = in
		}
	}
	return info, nil
}

// fill sets the fields of info read from the page row's cells; served is
// the served column of the index whose stage times it shows.
func fill(info *DocInfo, c map[string][]byte, served string) {
	ms := func(col string) time.Time {
		n, err := strconv.ParseInt(string(c[col]), 10, 64)
		if err != nil || n <= 0 {
			return time.Time{}
		}
		return time.UnixMilli(n).UTC()
	}
	info.Status = string(c[webtable.State])
	if info.Status == "" {
		info.Status = "unfetched"
		if c[webtable.FetchedAt] != nil {
			info.Status = "fetched" // not parsed yet
		}
	}
	if info.Status == webtable.StateGone || info.Status == "fetched" {
		// Not fetched on purpose: say why rather than "gone".
		switch e := string(c[webtable.Error]); {
		case strings.HasPrefix(e, webtable.CauseRefused):
			info.Status = "refused"
		case strings.HasPrefix(e, webtable.CauseRobots):
			info.Status = "disallowed"
		}
	}
	info.HTTPStatus, _ = strconv.Atoi(string(c[webtable.Status]))
	info.FetchedAt = ms(webtable.FetchedAt)
	info.Title = string(c[webtable.Title])
	info.Text = string(c[webtable.Text])
	info.ContentHash = string(c[webtable.Hash])
	info.PageRank, _ = strconv.ParseFloat(string(c[webtable.Rank]), 64)
	info.Error = string(c[webtable.Error])
	info.NextFetch = ms(webtable.Due)
	if t := c[webtable.AliasOf]; len(t) > 0 {
		info.RedirectTo, _ = webtable.URL(string(t))
	} else if t := c[webtable.Redirect]; len(t) > 0 {
		info.RedirectTo = string(t)
	}
	info.Canonical = info.URL
	if cn := c[webtable.ClusterOf]; len(cn) > 0 {
		if u, err := webtable.URL(string(cn)); err == nil {
			info.Canonical = u
		}
	}
	info.Exported = len(c[webtable.ExportDigest]) > 0
	info.ExportedAt = ms(webtable.ExportedAt)
	var out map[string]string
	if json.Unmarshal(c[webtable.LinksOut], &out) == nil {
		for t := range out {
			if u, err := webtable.URL(t); err == nil {
				info.Outlinks = append(info.Outlinks, u)
			}
		}
		slices.Sort(info.Outlinks)
	}
	var h []webtable.FetchEvent
	if json.Unmarshal(c[webtable.History], &h) == nil {
		for _, e := range h {
			info.History = append(info.History, Fetch{Time: time.UnixMilli(e.Time).UTC(), Status: e.Status, Changed: e.Changed})
		}
	}
	// The current content arrived with the newest fetch that changed it;
	// later fetches found it unchanged.
	fetched := info.FetchedAt
	for _, e := range h {
		if e.Changed {
			fetched = time.UnixMilli(e.Time).UTC()
			break
		}
	}
	info.Stages = Stages{
		Fetched:   fetched,
		Parsed:    ms(webtable.ParsedAt),
		Clustered: ms(webtable.ClusteredAt),
	}
	// Stage times of older content say nothing about the current one.
	for _, t := range []*time.Time{&info.Stages.Parsed, &info.Stages.Clustered} {
		if t.Before(info.Stages.Fetched) {
			*t = time.Time{}
		}
	}
	if sc, ok := ParseSearchable(c[served]); ok && !sc.Fetched.IsZero() && !sc.Fetched.Before(fetched) {
		// The document the index has, of the current content: its first
		// export (the export transaction's start timestamp, whose clock
		// part may be a few ms off the wall clock) and when it became
		// searchable.
		info.Stages.Exported, info.Stages.Searchable = sc.Exported, sc.At
	}
}
