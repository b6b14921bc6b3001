package crawl

import (
	"sync"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a crawler's progress in its current or last Run.
type Stats struct {
	Fetched     int64         // pages loaded (any status)
	Errors      int64         // failed fetches (network, 5xx/429 after retries) and failed loads
	NotModified int64         // 304 responses
	Discovered  int64         // rows added to the frontier
	Bytes       int64         // body bytes fetched
	InFlight    int64         // pages being fetched now
	Queue       int64         // due pages seen by the last full frontier pass
	Claimed     int64         // pages leased for a fetch
	Late        time.Duration // summed over claimed pages: how long past due each was claimed
	Elapsed     time.Duration // since Run started
	WARCRecords int64         // records written with Options.WARCDir
	WARCDropped int64         // fetches not archived: the writer's queue stayed full, or a write failed
	HostBusy    int64         // fetches put off because another crawler on the table held the host
}

// Rate returns pages fetched per second.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Fetched) / s.Elapsed.Seconds()
}

// MeanLate returns how long past its due time a page waited, on average,
// for the crawler to claim it: how far behind schedule the crawl runs.
func (s Stats) MeanLate() time.Duration {
	if s.Claimed == 0 {
		return 0
	}
	return s.Late / time.Duration(s.Claimed)
}

type counters struct {
	fetched, errors, notModified, discovered, bytes, inflight, queue, claimed, late atomic.Int64
	warcRecords, warcDropped, hostBusy                                              atomic.Int64

	mu             sync.Mutex // guards started and ended
	started, ended time.Time
}

func (s *counters) begin() {
	for _, v := range []*atomic.Int64{&s.fetched, &s.errors, &s.notModified, &s.discovered, &s.bytes, &s.inflight, &s.queue, &s.claimed, &s.late, &s.warcRecords, &s.warcDropped, &s.hostBusy} {
		v.Store(0)
	}
	s.mu.Lock()
	s.started, s.ended = time.Now(), time.Time{}
	s.mu.Unlock()
}

func (s *counters) end() {
	s.mu.Lock()
	s.ended = time.Now()
	s.mu.Unlock()
}

// Stats returns the progress of the current or last Run. It is safe to call
// from any goroutine while Run runs.
func (c *Crawler) Stats() Stats {
	s := &c.stats
	s.mu.Lock()
	started, ended := s.started, s.ended
	s.mu.Unlock()
	if ended.IsZero() {
		ended = time.Now()
	}
	var elapsed time.Duration
	if !started.IsZero() {
		elapsed = ended.Sub(started)
	}
	return Stats{
		Fetched: s.fetched.Load(), Errors: s.errors.Load(), NotModified: s.notModified.Load(),
		Discovered: s.discovered.Load(), Bytes: s.bytes.Load(), InFlight: s.inflight.Load(),
		Queue: s.queue.Load(), Claimed: s.claimed.Load(), Late: time.Duration(s.late.Load()), Elapsed: elapsed,
		WARCRecords: s.warcRecords.Load(), WARCDropped: s.warcDropped.Load(), HostBusy: s.hostBusy.Load(),
	}
}
