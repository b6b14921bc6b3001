package crawl

import "time"

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
