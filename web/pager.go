package web

import "github.com/caffeine-go/caffeine/serving"

// pageLinks is how many numbered pages the pager shows on each side of the
// current one.
const pageLinks = 4

// pageLink is one entry of the numbered pager.
type pageLink struct {
	Num     int    // 1-based page number; 0 for a gap ("…")
	Href    string // "" for the current page and gaps
	Current bool
}

// pager numbers the pages of total results, n a page, around the one
// starting at start: the first and last page, and pageLinks on each side
// of the current one, with gaps between. Pages that would start past
// serving.MaxStart are left out. A single page has no pager.
func pager(q serving.Query, total uint64, start, n int) []pageLink {
	if n < 1 || total == 0 || total <= uint64(n) && start == 0 {
		return nil
	}
	last := int((total - 1) / uint64(n))
	last = min(last, serving.MaxStart/n)
	cur := start / n
	if start%n != 0 {
		cur = -1 // an offset between pages: none is current
	}
	var out []pageLink
	add := func(p int) {
		if p == cur {
			out = append(out, pageLink{Num: p + 1, Current: true})
			return
		}
		out = append(out, pageLink{Num: p + 1, Href: searchHref(q, p*n, n)})
	}
	around := max(start/n, 0)
	from, to := max(around-pageLinks, 0), min(around+pageLinks, last)
	if from > 0 {
		add(0)
		if from > 1 {
			out = append(out, pageLink{})
		}
	}
	for p := from; p <= to; p++ {
		add(p)
	}
	if to < last {
		if to < last-1 {
			out = append(out, pageLink{})
		}
		add(last)
	}
	return out
}
