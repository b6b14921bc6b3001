package changingweb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrInvalidOptions is returned by New when Options are inconsistent.
var ErrInvalidOptions = errors.New("changingweb: invalid options")

// Defaults of Options.
const (
	DefaultPages        = 100
	DefaultHotFraction  = 0.1
	DefaultHotRate      = 0.2   // a change every 5 s
	DefaultColdRate     = 0.002 // a change every 500 s
	DefaultLinksPerPage = 5
	DefaultWords        = 40
	DefaultHubShare     = 0.3

	// SectionSize is how many pages share a directory: page N is in
	// section N / SectionSize, at /sSECTION/N.html, as a big site's pages
	// sit in sections.
	SectionSize = 1000
	// localLinks is the share of a page's chosen links that go to its own
	// section (when that has room), as most of a real site's links stay
	// close to home.
	localLinks = 0.8
)

// Options configure a Web. The zero value of every field selects the
// default named in its comment.
type Options struct {
	// Pages is the number of pages. Default DefaultPages.
	Pages int
	// HotFraction is the share of pages (duplicates aside) that change at
	// HotRate; the others change at ColdRate. Default DefaultHotFraction;
	// negative means no hot page.
	HotFraction float64
	// HotRate and ColdRate are changes per second. Defaults DefaultHotRate
	// and DefaultColdRate; negative means never.
	HotRate, ColdRate float64
	// Duplicates is how many pages (the last ones) serve an exact copy of
	// another page's content. It must be less than Pages.
	Duplicates int
	// LinksPerPage is the number of links from a page to pages chosen by
	// the seed, besides the link to the next page: four in five, on
	// average, to its own section. Default DefaultLinksPerPage; negative
	// means none.
	LinksPerPage int
	// Hubs is how many pages (the first ones, after page 0) are hub and
	// index pages, as a generated API reference's class lists and
	// namespace indexes: HubShare of every page's LinksPerPage links go to
	// them, skewed (a Zipf law: hub 1 takes the most), and each hub links
	// to LinksPerPage pages of its own stretch of the site. Default none.
	Hubs int
	// HubShare is the share of a page's links that go to hubs when Hubs >
	// 0. Default DefaultHubShare.
	HubShare float64
	// Section is how many pages share a section, the neighbourhood most
	// links stay in (the directory stays /sN/ of SectionSize pages).
	// Default SectionSize; Pages makes one host with one big section.
	Section int
	// Words is the length of a page version's body text in words. Default
	// DefaultWords.
	Words int
	// Seed makes everything: hot pages, links, duplicates, change times,
	// text.
	Seed int64
	// Clock is the time the pages are served at. Default time.Now.
	Clock func() time.Time
	// Start is when the pages were created and began to change: version 0
	// is served until the first change after Start. Default Clock() when
	// New is called.
	Start time.Time
	// Born is when version 0 of every page appeared: its Last-Modified.
	// Default Start. A Born long before Start makes a web whose pages
	// existed, unchanged, long before they began to change (a crawler
	// meeting one then sees how long it has stood still).
	Born time.Time
	// Sitemap serves /sitemap.xml (every page and its last change) and names
	// it in robots.txt.
	Sitemap bool
}

// Web is the changing web. Its methods are safe for concurrent use.
type Web struct {
	opt   Options
	start time.Time
	orig  []int // page → the page whose content it serves (itself, unless a duplicate)
	rate  []float64
	hot   []bool
	links [][]int // page → linked pages, in document order

	mu   sync.Mutex // guards proc
	proc []process  // per page; only originals are used

	requests atomic.Int64   // page requests served (200 and 304)
	fetches  []atomic.Int64 // page → requests served
}

// process is one page's Poisson process, drawn as far as asked.
type process struct {
	rng   *rand.Rand
	times []time.Duration // change offsets from Start, ascending
}

// New returns a Web for opt.
func New(opt Options) (*Web, error) {
	if opt.Pages == 0 {
		opt.Pages = DefaultPages
	}
	if opt.HotFraction == 0 {
		opt.HotFraction = DefaultHotFraction
	}
	if opt.HotRate == 0 {
		opt.HotRate = DefaultHotRate
	}
	if opt.ColdRate == 0 {
		opt.ColdRate = DefaultColdRate
	}
	if opt.LinksPerPage == 0 {
		opt.LinksPerPage = DefaultLinksPerPage
	}
	if opt.HubShare <= 0 {
		opt.HubShare = DefaultHubShare
	}
	if opt.Section <= 0 {
		opt.Section = SectionSize
	}
	if opt.Words <= 0 {
		opt.Words = DefaultWords
	}
	if opt.Clock == nil {
		opt.Clock = time.Now
	}
	if opt.Start.IsZero() {
		opt.Start = opt.Clock()
	}
	if opt.Born.IsZero() || opt.Born.After(opt.Start) {
		opt.Born = opt.Start
	}
	switch {
	case opt.Pages < 0:
		return nil, fmt.Errorf("%w: %d pages", ErrInvalidOptions, opt.Pages)
	case opt.Duplicates < 0 || opt.Duplicates >= opt.Pages:
		return nil, fmt.Errorf("%w: %d duplicates of %d pages", ErrInvalidOptions, opt.Duplicates, opt.Pages)
	case opt.Hubs < 0 || opt.Hubs >= opt.Pages-opt.Duplicates:
		return nil, fmt.Errorf("%w: %d hubs of %d pages", ErrInvalidOptions, opt.Hubs, opt.Pages)
	case opt.HubShare > 1:
		return nil, fmt.Errorf("%w: hub share %v > 1", ErrInvalidOptions, opt.HubShare)
	case opt.HotFraction > 1:
		return nil, fmt.Errorf("%w: hot fraction %v > 1", ErrInvalidOptions, opt.HotFraction)
	}

	n := opt.Pages
	originals := n - opt.Duplicates
	w := &Web{
		opt:     opt,
		start:   opt.Start,
		orig:    make([]int, n),
		rate:    make([]float64, n),
		hot:     make([]bool, n),
		links:   make([][]int, n),
		proc:    make([]process, n),
		fetches: make([]atomic.Int64, n),
	}
	// The structure comes from its own stream, the change times from one
	// stream per page: asking about one page never moves another's.
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), 0x636877656273)) // "chwebs"
	hotCount := 0
	if opt.HotFraction > 0 {
		hotCount = int(opt.HotFraction*float64(originals) + 0.5)
	}
	for i, p := range rng.Perm(originals) {
		w.hot[p] = i < hotCount
	}
	for p := range n {
		w.orig[p] = p
		if p >= originals {
			w.orig[p] = rng.IntN(originals)
			w.hot[p] = w.hot[w.orig[p]]
		}
	}
	for p := range n {
		r := opt.ColdRate
		if w.hot[p] {
			r = opt.HotRate
		}
		w.rate[p] = max(r, 0)
		w.proc[p].rng = rand.New(rand.NewPCG(uint64(opt.Seed), uint64(p)+1))
	}
	// Links are decided per original page (a duplicate serves its
	// original's bytes, links included), each to the next page and to
	// LinksPerPage others, most in its own section, without repeats or
	// self-links.
	var zipf *rand.Zipf
	if opt.Hubs > 0 {
		zipf = rand.NewZipf(rng, 1.1, 1, uint64(opt.Hubs-1))
	}
	for p := range originals {
		out := []int{(p + 1) % n}
		seen := map[int]bool{p: true, out[0]: true}
		lo := p / opt.Section * opt.Section
		size := min(lo+opt.Section, n) - lo
		if p >= 1 && p <= opt.Hubs {
			// A hub indexes its stretch of the site.
			lo = (p - 1) * n / opt.Hubs
			size = max(n/opt.Hubs, 1)
		}
		for k, tries := 0, 0; k < opt.LinksPerPage && len(seen) < n && tries < 100*opt.LinksPerPage; tries++ {
			t := rng.IntN(n)
			switch {
			case zipf != nil && rng.Float64() < opt.HubShare:
				t = 1 + int(zipf.Uint64())
			case size > 2*opt.LinksPerPage && rng.Float64() < localLinks:
				t = lo + rng.IntN(size)%(n-lo)
			}
			if seen[t] {
				continue
			}
			seen[t] = true
			out = append(out, t)
			k++
		}
		w.links[p] = out
	}
	for p := originals; p < n; p++ {
		w.links[p] = w.links[w.orig[p]]
	}
	return w, nil
}

// Pages returns the number of pages.
func (w *Web) Pages() int { return w.opt.Pages }

// Start returns when the pages began to change.
func (w *Web) Start() time.Time { return w.start }

// Now returns the Web's clock.
func (w *Web) Now() time.Time { return w.opt.Clock() }

// Path returns page's path, "/sS/N.html" where S = N / SectionSize.
func (w *Web) Path(page int) string {
	return "/s" + strconv.Itoa(page/SectionSize) + "/" + strconv.Itoa(page) + ".html"
}

// URL returns page's absolute URL under base (the server's URL, like
// "http://127.0.0.1:8000").
func (w *Web) URL(base string, page int) string {
	return strings.TrimSuffix(base, "/") + w.Path(page)
}

// Page returns the page a path or an absolute URL names, and false if it
// names none. The host is not checked.
func (w *Web) Page(u string) (int, bool) {
	path := u
	if strings.Contains(u, "://") {
		pu, err := url.Parse(u)
		if err != nil {
			return 0, false
		}
		path = pu.Path
	}
	sec, s, ok := strings.Cut(strings.TrimPrefix(path, "/s"), "/")
	if !ok || !strings.HasPrefix(path, "/s") {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".html")
	if !ok || !canonical(s) || !canonical(sec) {
		return 0, false
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p >= w.opt.Pages || strconv.Itoa(p/SectionSize) != sec {
		return 0, false
	}
	return p, true
}

// canonical reports whether s is a decimal number as strconv.Itoa writes
// it (no sign, no leading zero).
func canonical(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Original returns the page whose content page serves: itself, or the
// page it duplicates.
func (w *Web) Original(page int) int { return w.orig[page] }

// Rate returns page's changes per second.
func (w *Web) Rate(page int) float64 { return w.rate[page] }

// Links returns the pages page links to, in document order. The slice is
// the Web's: do not modify it.
func (w *Web) Links(page int) []int { return w.links[page] }

// Requests returns how many page requests were served in all.
func (w *Web) Requests() int64 { return w.requests.Load() }

// extend draws page's changes until one falls after off, and returns the
// process; w.mu must be held.
func (w *Web) extend(page int, off time.Duration) *process {
	pr := &w.proc[w.orig[page]]
	r := w.rate[w.orig[page]]
	if r <= 0 {
		return pr
	}
	for len(pr.times) == 0 || pr.times[len(pr.times)-1] <= off {
		var last time.Duration
		if len(pr.times) > 0 {
			last = pr.times[len(pr.times)-1]
		}
		gap := time.Duration(pr.rng.ExpFloat64() / r * float64(time.Second))
		pr.times = append(pr.times, last+max(gap, 1))
	}
	return pr
}

// VersionAt returns page's version at t: the number of its changes in
// (Start, t].
func (w *Web) VersionAt(page int, t time.Time) int {
	off := t.Sub(w.start)
	if off <= 0 {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	pr := w.extend(page, off)
	return sort.Search(len(pr.times), func(i int) bool { return pr.times[i] > off })
}

// LastModified returns when page's version at t appeared: its last change
// at or before t, or Options.Born for version 0.
func (w *Web) LastModified(page int, t time.Time) time.Time {
	off := t.Sub(w.start)
	if off <= 0 {
		return w.opt.Born
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	pr := w.extend(page, off)
	i := sort.Search(len(pr.times), func(i int) bool { return pr.times[i] > off })
	if i == 0 {
		return w.opt.Born
	}
	return w.start.Add(pr.times[i-1])
}

// FirstChangeAfter returns page's first change strictly after t, and false
// if it never changes.
func (w *Web) FirstChangeAfter(page int, t time.Time) (time.Time, bool) {
	off := max(t.Sub(w.start), -1) // before Start: the first change is next
	w.mu.Lock()
	defer w.mu.Unlock()
	pr := w.extend(page, off)
	i := sort.Search(len(pr.times), func(i int) bool { return pr.times[i] > off })
	if i == len(pr.times) {
		return time.Time{}, false
	}
	return w.start.Add(pr.times[i]), true
}

// ChangesUntil returns page's change times in (Start, t], ascending, in a
// new slice.
func (w *Web) ChangesUntil(page int, t time.Time) []time.Time {
	off := t.Sub(w.start)
	if off <= 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	pr := w.extend(page, off)
	var out []time.Time
	for _, d := range pr.times {
		if d > off {
			break
		}
		out = append(out, w.start.Add(d))
	}
	return out
}
