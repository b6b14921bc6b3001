package main

import (
	"context"
	"encoding/json"
	"expvar"
	"fmt"
	"io"
	"strings"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// ObserverCost is one observer's share of a run: its transactions and
// their outcomes, and the time they ran (wall time summed over workers).
type ObserverCost struct {
	Name      string  `json:"name"`
	Runs      int64   `json:"runs"`
	Commits   int64   `json:"commits"`
	Conflicts int64   `json:"conflicts"`
	RunSec    float64 `json:"run_s"`
}

// StoreOps are the Badger store's operations in a run, from Badger's own
// process-wide counters (expvar badger_*): the child runs one engine, so
// they are the engine's.
type StoreOps struct {
	Gets         int64 `json:"gets"`          // point reads (badger_get_num_user)
	Puts         int64 `json:"puts"`          // entries written (badger_put_num_user)
	Scans        int64 `json:"scans"`         // iterators opened (badger_iterator_num_user)
	BytesWritten int64 `json:"bytes_written"` // user bytes written (badger_write_bytes_user)
	BytesL0      int64 `json:"bytes_l0"`      // bytes flushed to level 0 (badger_write_bytes_l0)
	BytesCompact int64 `json:"bytes_compact"` // bytes compactions wrote (badger_write_bytes_compaction)
}

// storeOps reads Badger's counters now.
func storeOps() StoreOps {
	return StoreOps{
		Gets:         expvarInt("badger_get_num_user"),
		Puts:         expvarInt("badger_put_num_user"),
		Scans:        expvarInt("badger_iterator_num_user"),
		BytesWritten: expvarInt("badger_write_bytes_user"),
		BytesL0:      expvarInt("badger_write_bytes_l0"),
		BytesCompact: expvarInt("badger_write_bytes_compaction"),
	}
}

// expvarInt is the value of the expvar name: an Int, or the sum of a
// Map's Ints; zero when there is none.
func expvarInt(name string) int64 {
	switch v := expvar.Get(name).(type) {
	case *expvar.Int:
		return v.Value()
	case *expvar.Map:
		var n int64
		v.Do(func(kv expvar.KeyValue) {
			if i, ok := kv.Value.(*expvar.Int); ok {
				n += i.Value()
			}
		})
		return n
	}
	return 0
}

// sub is s minus earlier.
func (s StoreOps) sub(earlier StoreOps) StoreOps {
	return StoreOps{Gets: s.Gets - earlier.Gets, Puts: s.Puts - earlier.Puts, Scans: s.Scans - earlier.Scans,
		BytesWritten: s.BytesWritten - earlier.BytesWritten, BytesL0: s.BytesL0 - earlier.BytesL0,
		BytesCompact: s.BytesCompact - earlier.BytesCompact}
}

// observerCosts are the chain's observers' costs from the worker's stats.
func observerCosts(stats []percolator.ObserverStats) []ObserverCost {
	var cs []ObserverCost
	for _, o := range stats {
		cs = append(cs, ObserverCost{Name: o.Name, Runs: o.Runs, Commits: o.Commits, Conflicts: o.Conflicts, RunSec: o.RunTime.Seconds()})
	}
	return cs
}

// countLinks counts the links of the table once idle: the entries of
// every page's links:out cell.
func countLinks(ctx context.Context, e *engine.Engine) (int64, error) {
	var n int64
	var bad error
	err := e.DB.View(ctx, func(tx *percolator.Tx) error {
		return tx.Scan(ctx, "", "", webtable.LinksOut, func(row, _ string, v []byte) bool {
			var m map[string]string
			if err := json.Unmarshal(v, &m); err != nil {
				bad = fmt.Errorf("decode %s of %q: %w", webtable.LinksOut, row, err)
				return false
			}
			n += int64(len(m))
			return true
		})
	})
	if err == nil {
		err = bad
	}
	return n, err
}

// costRow is one line of the breakdown: a count, and it divided by the
// pages and by the links.
type costRow struct {
	What       string
	Total      float64
	Page, Link float64
	Unit       string
}

// costRows is r's cost breakdown: each observer's runs, commits,
// conflicts and run time, the transactions, the store's operations, the
// export runs and Bleve writes, and the process's CPU; each a page and a
// link (zero when there are no pages or no links).
func costRows(r Result) []costRow {
	var rows []costRow
	add := func(what string, total float64, unit string) {
		row := costRow{What: what, Total: total, Unit: unit}
		if r.Pages > 0 {
			row.Page = total / float64(r.Pages)
		}
		if r.Links > 0 {
			row.Link = total / float64(r.Links)
		}
		rows = append(rows, row)
	}
	var txns float64
	for _, o := range r.Observers {
		txns += float64(o.Runs)
		add(o.Name+" runs", float64(o.Runs), "")
		add(o.Name+" commits", float64(o.Commits), "")
		add(o.Name+" conflicts", float64(o.Conflicts), "")
		add(o.Name+" run time", o.RunSec*1000, "ms")
	}
	add("transactions (observer runs)", txns, "")
	add("store gets", float64(r.Store.Gets), "")
	add("store puts (rows written)", float64(r.Store.Puts), "")
	add("store scans", float64(r.Store.Scans), "")
	add("store bytes written", float64(r.Store.BytesWritten), "B")
	add("L0 bytes flushed", float64(r.Store.BytesL0), "B")
	add("compaction bytes written", float64(r.Store.BytesCompact), "B")
	add("export runs", float64(r.ExportRuns), "")
	add("Bleve writes", float64(r.BleveWrites), "")
	add("CPU", r.CPUSeconds*1000, "ms")
	return rows
}

// printCosts prints r's cost breakdown after its run (modes that index):
// a line an observer that ran, then the totals.
func printCosts(w io.Writer, r Result) {
	if len(r.Observers) == 0 {
		return
	}
	rows := costRows(r)
	fmt.Fprintf(w, "\n%s: cost breakdown, %d pages, %d links (%.1f a page)\n\n", r.Mode, r.Pages, r.Links, perOf(float64(r.Links), float64(r.Pages)))
	fmt.Fprintln(w, "| observer | runs | runs a page | commits a page | conflicts a page | run ms a page | run ms a link |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for i, o := range r.Observers {
		if o.Runs == 0 {
			continue
		}
		runs, commits, conflicts, ms := rows[4*i], rows[4*i+1], rows[4*i+2], rows[4*i+3]
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s |\n", o.Name, o.Runs, num(runs.Page), num(commits.Page), num(conflicts.Page), num(ms.Page), num(ms.Link))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| what | total | a page | a link |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, c := range rows[4*len(r.Observers):] {
		unit := ""
		if c.Unit != "" {
			unit = " " + c.Unit
		}
		fmt.Fprintf(w, "| %s | %s%s | %s | %s |\n", c.What, num(c.Total), unit, num(c.Page), num(c.Link))
	}
}

func perOf(n, d float64) float64 {
	if d == 0 {
		return 0
	}
	return n / d
}

// num formats a count or a ratio with the digits that matter.
func num(f float64) string {
	switch {
	case f == 0:
		return "0"
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	case f >= 1:
		return strings.TrimSuffix(fmt.Sprintf("%.2f", f), ".00")
	default:
		return fmt.Sprintf("%.3g", f)
	}
}
