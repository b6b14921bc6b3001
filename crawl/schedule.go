package crawl

import (
	"net/http"
	"time"
)

// Adaptive revisit rates, as Nutch's AdaptiveFetchSchedule: a page that
// changed is revisited sooner, one that did not later.
const (
	DecRate = 0.8 // interval factor when the content changed
	IncRate = 1.4 // interval factor when it did not
)

// NextInterval returns a page's next revisit interval: cur × 0.8 if its
// content changed, × 1.4 if not, clamped to [lo, hi]. A cur ≤ 0 (never
// fetched) is taken as lo. The crawler and any observer adjusting
// intervals use this one rule.
func NextInterval(cur time.Duration, changed bool, lo, hi time.Duration) time.Duration {
	if cur <= 0 {
		cur = lo
	}
	f := IncRate
	if changed {
		f = DecRate
	}
	next := time.Duration(float64(cur) * f)
	if next < lo {
		next = lo
	}
	if next > hi {
		next = hi
	}
	return next
}

// FirstInterval returns a page's revisit interval after its first fetch:
// the time since its Last-Modified (an HTTP date) when that is in the past,
// else initial, clamped to [lo, hi]. For a page changing as a Poisson
// process the time since its last change is, on average, its mean time
// between changes (Cho and Garcia-Molina estimate change frequency from
// last-modified dates the same way), so a page that stood still for a
// month is not revisited in a minute, and one changed seconds ago is soon;
// NextInterval then adapts it.
func FirstInterval(lastMod string, now time.Time, initial, lo, hi time.Duration) time.Duration {
	d := initial
	if t, err := http.ParseTime(lastMod); err == nil && !t.After(now) {
		d = now.Sub(t)
	}
	return min(max(d, lo), hi)
}
