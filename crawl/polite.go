package crawl

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// Politeness across processes (issue #17). Crawlers that share a table
// (percolator/bigtable, many processes) keep each host's politeness in
// the table too, so that N crawlers never hit a host N times faster than
// one. A host's row politeRow(key) holds plain store cells, not Percolator
// columns (they are not data, and a transaction per fetch would cost more
// than the fetch), in the family politeFamily:
//
//   - next: one live version, whose timestamp (Unix ms) is the earliest
//     time any crawler may start a request to the host;
//   - run/K, K < Parallel: a live version whose timestamp (Unix ms) is in
//     the future is a request slot held until then by the crawler whose
//     id it holds; the slots bound the requests in flight to the host,
//     whatever the number of crawlers.
//
// The timestamps carry the times so that a Bigtable CheckAndMutateRow
// (which tests cells, not values) can take a slot in one round trip: "if
// no next and no run/K is later than now, set next to now+delay and run/K
// to now+slotTTL". A second call when the fetch ends frees the slot and
// moves next to the last request's start + delay (or a Retry-After), so
// the gap holds from when the request went out, however long the claim
// took. Nothing is held by a crawler that crashes: next passes by itself
// and a slot expires after slotTTL.
//
// Times are the writers' wall clocks. A crawler whose clock runs s behind
// the others shortens the gap after its own requests by s, one ahead
// lengthens it (and can keep the others off the host for s); with NTP's
// milliseconds that is nothing beside a delay of a second.
//
// A crawler on an ExclusiveStore (the embedded Badger store: one process)
// keeps politeness in memory only, as does a crawler for a host with
// neither Delay nor Crawl-delay once it has read the host's robots.txt:
// then there is nothing to space out, and only each process bounds its
// requests in flight.
const (
	politeFamily = "polite"
	politeNext   = "next"
	politeRun    = "run/"
)

var politeFamilies = []percolator.Family{{Name: politeFamily, LocalityGroup: politeFamily}}

// politeRow is the politeness row of a host (webtable.HostOfRow of its
// pages); "\x00" sorts it before every page and bookkeeping row.
func politeRow(key string) string { return "\x00crawl/host/" + key }

// sharedHosts keeps the per-host politeness in the table. It is safe for
// concurrent use.
type sharedHosts struct {
	st    percolator.Store
	owner []byte        // the crawler id, in the slots it holds
	ttl   time.Duration // how long a slot is held unless freed
}

// hostSlot is a request slot taken on a host by reserve.
type hostSlot struct {
	row  string
	next uint64 // the version of next the reservation wrote; 0 if none
	run  string // the slot's column
	exp  uint64 // the slot's version: its expiry, Unix ms
}

func ms(t time.Time) uint64 { return uint64(t.UnixMilli()) }

// ceilMs is d in whole milliseconds, rounded up.
func ceilMs(d time.Duration) uint64 { return uint64((d + time.Millisecond - 1) / time.Millisecond) }

// reserve takes one of par request slots on the host of row and, with a
// delay, the time until now+delay. It tries slot hint first, then a free
// one. When another crawler holds the host it returns a nil slot and
// when to try again.
func (sh *sharedHosts) reserve(ctx context.Context, row string, now time.Time, delay time.Duration, par, hint int) (*hostSlot, time.Time, error) {
	nowMs := ms(now)
	k := hint
	for try := 0; ; try++ {
		s := &hostSlot{row: row, run: politeRun + strconv.Itoa(k), exp: nowMs + ceilMs(sh.ttl)}
		// Versions at or below now are past: delete them as we write.
		// (A version later written below this bound, by a done or a
		// reserve on a clock behind ours, is in the past anyway.)
		muts := []percolator.Mutation{
			{Op: percolator.DeleteOlder, Family: politeFamily, Column: s.run, Ts: nowMs + 1},
			{Op: percolator.SetCell, Family: politeFamily, Column: s.run, Ts: s.exp, Value: sh.owner},
		}
		if delay > 0 {
			// +1: a start at nowMs+0.9 ms is still delay from the next.
			s.next = nowMs + ceilMs(delay) + 1
			muts = append(muts,
				percolator.Mutation{Op: percolator.DeleteOlder, Family: politeFamily, Column: politeNext, Ts: nowMs + 1},
				percolator.Mutation{Op: percolator.SetCell, Family: politeFamily, Column: politeNext, Ts: s.next, Value: sh.owner})
		}
		busy, err := sh.st.CheckAndMutateRow(ctx, row, []percolator.Filter{
			{Family: politeFamily, Column: politeNext, MinTs: nowMs + 1},
			{Family: politeFamily, Column: s.run, MinTs: nowMs + 1},
		}, nil, muts)
		if err != nil || !busy {
			return s, time.Time{}, err
		}
		// Taken: read when the host is free, or which slot is.
		cells, err := sh.st.ReadRow(ctx, row, percolator.Filter{Family: politeFamily, Latest: true})
		if err != nil {
			return nil, time.Time{}, err
		}
		var next uint64
		held := make([]uint64, par) // expiry of each slot, 0 if free
		for _, c := range cells {
			if c.Column == politeNext {
				next = c.Ts
			} else if i, err := strconv.Atoi(strings.TrimPrefix(c.Column, politeRun)); err == nil && i >= 0 && i < par && c.Ts > nowMs {
				held[i] = c.Ts
			}
		}
		if next > nowMs {
			return nil, time.UnixMilli(int64(next)), nil
		}
		free := -1
		for i, exp := range held {
			if exp == 0 && i != k {
				free = i
				break
			}
		}
		if free < 0 || try > 0 {
			// Slots free as fetches end, which the table does not
			// signal: look again after a delay, or at the first expiry.
			retry := now.Add(max(delay, 100*time.Millisecond))
			for _, exp := range held {
				if t := time.UnixMilli(int64(exp)); exp > 0 && t.Before(retry) {
					retry = t
				}
			}
			return nil, retry, nil
		}
		k = free
	}
}

// unused gives back a slot that made no request: the host is free again
// (as far as this slot held it).
func (sh *sharedHosts) unused(ctx context.Context, s *hostSlot) error {
	muts := []percolator.Mutation{{Op: percolator.DeleteCell, Family: politeFamily, Column: s.run, Ts: s.exp}}
	if s.next > 0 {
		// No other crawler writes this version: they write next only
		// after it has passed, and later.
		muts = append(muts, percolator.Mutation{Op: percolator.DeleteCell, Family: politeFamily, Column: politeNext, Ts: s.next})
	}
	return sh.st.MutateRows(ctx, []percolator.RowMutation{{Row: s.row, Mutations: muts}})
}

// done frees a slot after its requests and keeps the host's next start
// at least until, unless it is later already.
func (sh *sharedHosts) done(ctx context.Context, s *hostSlot, until time.Time) error {
	free := []percolator.Mutation{{Op: percolator.DeleteCell, Family: politeFamily, Column: s.run, Ts: s.exp}}
	if until.IsZero() {
		return sh.st.MutateRows(ctx, []percolator.RowMutation{{Row: s.row, Mutations: free}})
	}
	t := ms(until) + 1
	_, err := sh.st.CheckAndMutateRow(ctx, s.row,
		[]percolator.Filter{{Family: politeFamily, Column: politeNext, MinTs: t}},
		free,
		append([]percolator.Mutation{
			{Op: percolator.DeleteOlder, Family: politeFamily, Column: politeNext, Ts: t},
			{Op: percolator.SetCell, Family: politeFamily, Column: politeNext, Ts: t, Value: sh.owner},
		}, free...))
	return err
}

// reserveHost takes j's host across processes, when the table is shared
// and the host has a delay (or its robots.txt is not read yet, which may
// set one). It reports false when another crawler holds the host, with
// when to look again.
func (c *Crawler) reserveHost(ctx context.Context, j *job) (bool, time.Time) {
	if c.shared == nil {
		return true, time.Time{}
	}
	delay, par, hint, need := c.hosts.sharedSlot(j.host)
	if !need {
		return true, time.Time{}
	}
	s, retry, err := c.shared.reserve(ctx, politeRow(j.host.key), time.Now(), delay, par, hint)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Info("host not reserved", "host", j.host.origin, "err", err)
		}
		return false, time.Now().Add(time.Second)
	}
	if s == nil {
		c.stats.hostBusy.Add(1)
		return false, retry
	}
	j.slot = s
	return true, time.Time{}
}

// freeHost frees j's slot on its host across processes: given back if
// no request went out, else with the next request to the host kept a
// delay after the last (or after a Retry-After).
func (c *Crawler) freeHost(ctx context.Context, j *job) {
	if j.slot == nil {
		return
	}
	s := j.slot
	j.slot = nil
	var err error
	if j.sent.IsZero() && j.holdUntil.IsZero() {
		err = c.shared.unused(ctx, s)
	} else {
		until := j.holdUntil
		if d := c.hosts.delayOf(j.host); d > 0 && !j.sent.IsZero() && j.sent.Add(d).After(until) {
			until = j.sent.Add(d)
		}
		err = c.shared.done(ctx, s, until)
	}
	if err != nil {
		c.log.Info("host slot not freed; it expires", "host", j.host.origin, "err", err)
	}
}
