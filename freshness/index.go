package freshness

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// Event is one update the serving index applied to a document: from
// IndexedAt on, searches see the copy of URL fetched at FetchedAt, or no
// copy at all if Deleted.
type Event struct {
	URL       string    `json:"url"`
	FetchedAt time.Time `json:"fetched_at,omitzero"`
	IndexedAt time.Time `json:"indexed_at"`
	Deleted   bool      `json:"deleted,omitempty"`
}

// Index is the history of a serving index: which copy of each URL it held
// when. Its methods are safe for concurrent use.
type Index struct {
	mu   sync.Mutex         // guards docs
	docs map[string][]Event // URL → its events by IndexedAt
}

// NewIndex returns an empty Index.
func NewIndex() *Index { return &Index{docs: make(map[string][]Event)} }

// Apply records updates. Events may come in any order; of two events of
// one URL with the same IndexedAt, the one applied last wins.
func (x *Index) Apply(evs ...Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range evs {
		h := x.docs[e.URL]
		i := sort.Search(len(h), func(i int) bool { return h[i].IndexedAt.After(e.IndexedAt) })
		x.docs[e.URL] = slices.Insert(h, i, e)
	}
}

// Copy returns the fetch time of the copy of url the index held at t, and
// false if it held none.
func (x *Index) Copy(url string, t time.Time) (time.Time, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.docs[url]
	i := sort.Search(len(h), func(i int) bool { return h[i].IndexedAt.After(t) })
	if i == 0 || h[i-1].Deleted {
		return time.Time{}, false
	}
	return h[i-1].FetchedAt, true
}

// URLs returns every URL the index ever held, sorted, in a new slice.
func (x *Index) URLs() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]string, 0, len(x.docs))
	for u, h := range x.docs {
		for _, e := range h {
			if !e.Deleted {
				out = append(out, u)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// Held returns how many URLs the index held a copy of at t.
func (x *Index) Held(t time.Time) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, h := range x.docs {
		i := sort.Search(len(h), func(i int) bool { return h[i].IndexedAt.After(t) })
		if i > 0 && !h[i-1].Deleted {
			n++
		}
	}
	return n
}

// Events returns url's events by IndexedAt, in a new slice.
func (x *Index) Events(url string) []Event {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.docs[url])
}

// Update is an index update that brought new content.
type Update struct {
	Event
	Latency time.Duration // IndexedAt − FetchedAt
	First   bool          // the first copy of its URL the index held
}

// Updates returns the updates applied in [from, to] that brought new
// content, by IndexedAt: the first copy of a URL, or a copy that differs
// from the one the index held before (deletes in between do not count).
// With a Truth, "differs" means the page changed between the two fetches;
// without one (tr nil), that the fetch times differ, which also counts a
// re-export of an unchanged page that was refetched.
//
// When an update's copy was refetched without change after the fetch that
// first saw its content (a batch run reads the latest fetch time), the
// latency is measured from the later fetch: an underestimate.
func (x *Index) Updates(tr Truth, from, to time.Time) []Update {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []Update
	for u, h := range x.docs {
		var prev *Event
		for i := range h {
			e := &h[i]
			if e.Deleted {
				continue
			}
			isNew := prev == nil
			if prev != nil && e.FetchedAt.After(prev.FetchedAt) {
				if tr == nil {
					isNew = true
				} else if c, ok := tr.FirstChangeAfter(u, prev.FetchedAt); ok && !c.After(e.FetchedAt) {
					isNew = true
				}
			}
			if isNew && !e.IndexedAt.Before(from) && !e.IndexedAt.After(to) {
				out = append(out, Update{Event: *e, Latency: max(e.IndexedAt.Sub(e.FetchedAt), 0), First: prev == nil})
			}
			prev = e
		}
	}
	slices.SortFunc(out, func(a, b Update) int { return a.IndexedAt.Compare(b.IndexedAt) })
	return out
}
