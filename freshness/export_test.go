package freshness

import (
	"slices"
	"time"
)

// Latencies returns the latencies of Updates(tr, from, to), sorted.
func (x *Index) Latencies(tr Truth, from, to time.Time) []time.Duration {
	us := x.Updates(tr, from, to)
	out := make([]time.Duration, len(us))
	for i, u := range us {
		out[i] = u.Latency
	}
	slices.Sort(out)
	return out
}

// Fresh reports whether a copy of url fetched at fetched still equals the
// live page at t: the page did not change in (fetched, t].
func Fresh(tr Truth, url string, fetched, t time.Time) bool {
	c, ok := tr.FirstChangeAfter(url, fetched)
	return !ok || c.After(t)
}
