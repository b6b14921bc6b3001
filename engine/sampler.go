package engine

import (
	"context"
	"slices"
	"time"

	"github.com/caffeine-go/caffeine/web"
)

// History returns the status page's time series, oldest first. It
// survives a restart: the sampler keeps it in HistoryFile too.
func (e *Engine) History() []web.Sample {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return slices.Clone(e.samples)
}

// progress returns the pages this process fetched and the export queue
// entries it applied.
func (e *Engine) progress() (fetched, applied int64) {
	if e.Crawler != nil {
		fetched = e.Crawler.Stats().Fetched
	}
	if e.Feeder != nil {
		applied = e.Feeder.Applied()
	}
	return fetched, applied
}

// sampleBase makes now, with nothing fetched or applied yet, the point
// the first sample's rates count from: a crawl of a small site is over
// before the first sample, whose rates would otherwise show nothing.
func (e *Engine) sampleBase() {
	fetched, loaded := e.progress()
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	e.lastSamp.at, e.lastSamp.fetched, e.lastSamp.loaded = time.Now(), fetched, loaded
}

// sample appends a point to the time series, in memory and in the
// history file. A failed write is logged; the page keeps the point.
func (e *Engine) sample(ctx context.Context) {
	s, err := e.Stats(ctx)
	if err != nil {
		return
	}
	fetched, loaded := e.progress()
	e.statsMu.Lock()
	now := time.Now()
	p := web.Sample{Time: now.UTC(), Pages: s.Pages, Indexed: s.Indexed, Pending: s.PendingNotifications,
		LatencyP50: s.Latency.P50, LatencyP90: s.Latency.P90, LatencyP99: s.Latency.P99}
	if ls := e.lastSamp; !ls.at.IsZero() {
		dt := now.Sub(ls.at).Seconds()
		p.Fetched = float64(max(fetched-ls.fetched, 0)) / dt
		p.Exported = float64(max(loaded-ls.loaded, 0)) / dt
	}
	e.lastSamp.at, e.lastSamp.fetched, e.lastSamp.loaded = now, fetched, loaded
	if len(e.samples) >= keepSamples {
		e.samples = slices.Delete(e.samples, 0, len(e.samples)-keepSamples+1)
	}
	e.samples = append(e.samples, p)
	var kept []web.Sample
	if e.history.lines+1 >= 2*keepSamples {
		kept = slices.Clone(e.samples)
	}
	e.statsMu.Unlock()
	if err := e.history.add(p, kept); err != nil {
		e.log.Warn("status history not saved", "err", err)
	}
}
