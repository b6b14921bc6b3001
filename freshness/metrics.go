package freshness

import (
	"encoding/json"
	"time"
)

// Snapshot is the freshness and age of a set of pages at one time.
type Snapshot struct {
	Time      time.Time     `json:"time"`
	Pages     int           `json:"pages"`   // pages asked about
	Indexed   int           `json:"indexed"` // of them, with a copy in the index
	Missing   int           `json:"missing"` // Pages − Indexed
	Fresh     int           `json:"fresh"`   // indexed copies equal to the live page
	Freshness float64       `json:"freshness"`
	MeanAge   time.Duration `json:"-"`
	MaxAge    time.Duration `json:"-"`
}

func (s *Snapshot) add(age time.Duration) {
	s.Indexed++
	if age == 0 {
		s.Fresh++
	}
	s.MeanAge += age // a sum until finish
	s.MaxAge = max(s.MaxAge, age)
}

func (s *Snapshot) finish() {
	s.Missing = s.Pages - s.Indexed
	if s.Indexed > 0 {
		s.Freshness = float64(s.Fresh) / float64(s.Indexed)
		s.MeanAge /= time.Duration(s.Indexed)
	}
}

// At returns the freshness and age at t of urls as the index held them;
// nil urls means every URL the index ever held. Pages without a copy at t
// count as Missing and are left out of the means.
func At(tr Truth, x *Index, urls []string, t time.Time) Snapshot {
	if urls == nil {
		urls = x.URLs()
	}
	s := Snapshot{Time: t, Pages: len(urls)}
	for _, u := range urls {
		if f, ok := x.Copy(u, t); ok {
			s.add(Age(tr, u, f, t))
		}
	}
	s.finish()
	return s
}

// Result is a search result: a document and the fetch time of its indexed
// copy.
type Result struct {
	URL       string    `json:"url"`
	FetchedAt time.Time `json:"fetched_at"`
}

// Results returns the freshness and age at t of search results returned
// at t: the age of search results.
func Results(tr Truth, rs []Result, t time.Time) Snapshot {
	s := Snapshot{Time: t, Pages: len(rs)}
	for _, r := range rs {
		s.add(Age(tr, r.URL, r.FetchedAt, t))
	}
	s.finish()
	return s
}

// Series returns At every step from from to to, both included.
func Series(tr Truth, x *Index, urls []string, from, to time.Time, step time.Duration) []Snapshot {
	if urls == nil {
		urls = x.URLs()
	}
	var out []Snapshot
	for t := from; !t.After(to); t = t.Add(step) {
		out = append(out, At(tr, x, urls, t))
		if step <= 0 {
			break
		}
	}
	return out
}

// Average is the time average of freshness and age over an interval.
type Average struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// PageTime is the time pages had a copy in the index within the
	// interval, summed over pages: the weight of the means.
	PageTime  time.Duration `json:"-"`
	Freshness float64       `json:"freshness"`
	MeanAge   time.Duration `json:"-"`
}

// Over returns the exact time averages over [from, to] of urls (nil: every
// URL the index ever held): the fresh share of indexed page-time, and the
// integral of age over indexed page-time divided by it.
func Over(tr Truth, x *Index, urls []string, from, to time.Time) Average {
	if urls == nil {
		urls = x.URLs()
	}
	a := Average{From: from, To: to}
	var pageTime, freshTime, ageInt float64 // seconds, seconds, seconds²
	for _, u := range urls {
		h := x.Events(u)
		for i, e := range h {
			if e.Deleted {
				continue
			}
			s, end := e.IndexedAt, to
			if i+1 < len(h) {
				end = h[i+1].IndexedAt
			}
			if s.Before(from) {
				s = from
			}
			if end.After(to) {
				end = to
			}
			if !end.After(s) {
				continue
			}
			span := end.Sub(s).Seconds()
			pageTime += span
			c, ok := tr.FirstChangeAfter(u, e.FetchedAt)
			switch {
			case !ok || !c.Before(end): // fresh throughout
				freshTime += span
			case !c.After(s): // stale throughout: age rises from s−c to end−c
				a0, a1 := s.Sub(c).Seconds(), end.Sub(c).Seconds()
				ageInt += (a1*a1 - a0*a0) / 2
			default: // fresh until c, then age rises from 0
				freshTime += c.Sub(s).Seconds()
				a1 := end.Sub(c).Seconds()
				ageInt += a1 * a1 / 2
			}
		}
	}
	a.PageTime = time.Duration(pageTime * float64(time.Second))
	if pageTime > 0 {
		a.Freshness = freshTime / pageTime
		a.MeanAge = time.Duration(ageInt / pageTime * float64(time.Second))
	}
	return a
}

// MarshalJSON writes ages in seconds (mean_age_s, max_age_s).
func (s Snapshot) MarshalJSON() ([]byte, error) {
	type plain Snapshot
	return json.Marshal(struct {
		plain
		MeanAge float64 `json:"mean_age_s"`
		MaxAge  float64 `json:"max_age_s"`
	}{plain(s), s.MeanAge.Seconds(), s.MaxAge.Seconds()})
}

// MarshalJSON writes durations in seconds (page_time_s, mean_age_s).
func (a Average) MarshalJSON() ([]byte, error) {
	type plain Average
	return json.Marshal(struct {
		plain
		PageTime float64 `json:"page_time_s"`
		MeanAge  float64 `json:"mean_age_s"`
	}{plain(a), a.PageTime.Seconds(), a.MeanAge.Seconds()})
}
