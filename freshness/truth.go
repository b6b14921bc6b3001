package freshness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"
)

// Truth says when pages changed.
type Truth interface {
	// FirstChangeAfter returns the first change of url's content strictly
	// after t, and false if there is none (as far as the truth knows).
	FirstChangeAfter(url string, t time.Time) (time.Time, bool)
}

// Age returns the age at t of a copy of url fetched at fetched: 0 if it is
// fresh, else t minus the first change after fetched.
func Age(tr Truth, url string, fetched, t time.Time) time.Duration {
	c, ok := tr.FirstChangeAfter(url, fetched)
	if !ok || c.After(t) {
		return 0
	}
	return t.Sub(c)
}

// Change is one line of a change log: url's content changed at Time, to
// its Version-th version (0 when the log does not count them).
type Change struct {
	Time    time.Time `json:"time"`
	URL     string    `json:"url"`
	Version int       `json:"version,omitempty"`
}

// History is a Truth kept as lists: URL → change times, ascending. A URL
// that is not in it never changed.
type History map[string][]time.Time

var _ Truth = History(nil)

// FirstChangeAfter implements Truth.
func (h History) FirstChangeAfter(url string, t time.Time) (time.Time, bool) {
	ts := h[url]
	i := sort.Search(len(ts), func(i int) bool { return ts[i].After(t) })
	if i == len(ts) {
		return time.Time{}, false
	}
	return ts[i], true
}

// ReadHistory reads a change log: JSON lines, each a Change. Lines may come
// in any order; blank lines are skipped.
func ReadHistory(r io.Reader) (History, error) {
	h := make(History)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var c Change
		if err := json.Unmarshal(line, &c); err != nil {
			return nil, fmt.Errorf("freshness: change log line %d: %w", n, err)
		}
		if c.URL == "" || c.Time.IsZero() {
			return nil, fmt.Errorf("freshness: change log line %d: no url or time", n)
		}
		h[c.URL] = append(h[c.URL], c.Time)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("freshness: read change log: %w", err)
	}
	for _, ts := range h {
		slices.SortFunc(ts, time.Time.Compare)
	}
	return h, nil
}
