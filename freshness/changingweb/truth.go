package changingweb

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/caffeine-go/caffeine/freshness"
)

// Truth is the ground truth of a Web by URL, for the freshness metrics.
type Truth struct{ w *Web }

var _ freshness.Truth = Truth{}

// Truth returns the Web's ground truth keyed by URL. Any host is accepted:
// only the path names the page.
func (w *Web) Truth() Truth { return Truth{w} }

// FirstChangeAfter implements freshness.Truth. URLs that name no page never
// change.
func (t Truth) FirstChangeAfter(url string, after time.Time) (time.Time, bool) {
	p, ok := t.w.Page(url)
	if !ok {
		return time.Time{}, false
	}
	return t.w.FirstChangeAfter(p, after)
}

// Changes returns every change of every page in (Start, until], by time
// (then by page), with URLs under base.
func (w *Web) Changes(base string, until time.Time) []freshness.Change {
	var out []freshness.Change
	for p := range w.opt.Pages {
		u := w.URL(base, p)
		for i, t := range w.ChangesUntil(p, until) {
			out = append(out, freshness.Change{Time: t, URL: u, Version: i + 1})
		}
	}
	slices.SortStableFunc(out, func(a, b freshness.Change) int { return a.Time.Compare(b.Time) })
	return out
}

// History returns the changes up to until as a freshness.History with URLs
// under base.
func (w *Web) History(base string, until time.Time) freshness.History {
	h := make(freshness.History, w.opt.Pages)
	for p := range w.opt.Pages {
		h[w.URL(base, p)] = w.ChangesUntil(p, until)
	}
	return h
}

// WriteLog writes the change log up to until: one JSON freshness.Change
// per line, by time, with URLs under base. freshness.ReadHistory reads it.
func (w *Web) WriteLog(out io.Writer, base string, until time.Time) error {
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	for _, c := range w.Changes(base, until) {
		c.Time = c.Time.UTC()
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return bw.Flush()
}
