package engine

import (
	"context"
	"slices"
	"time"

	"github.com/caffeine-go/caffeine/serving"
)

// History returns the status page's time series, oldest first.
func (e *Engine) History() []serving.Sample {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return slices.Clone(e.samples)
}

// sample appends a point to the time series.
func (e *Engine) sample(ctx context.Context) {
	s, err := e.Stats(ctx)
	if err != nil {
		return
	}
	var fetched, loaded int64
	if e.Crawler != nil {
		fetched = e.Crawler.Stats().Fetched
	}
	if e.Feeder != nil {
		loaded = e.Feeder.Applied()
	}
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	now := time.Now()
	p := serving.Sample{Time: now.UTC(), Pages: s.Pages, Indexed: s.Indexed, Pending: s.PendingNotifications,
		LatencyP50: s.Latency.P50, LatencyP90: s.Latency.P90, LatencyP99: s.Latency.P99}
	if ls := e.lastSamp; !ls.at.IsZero() {
		dt := now.Sub(ls.at).Seconds()
		p.Fetched = float64(max(fetched-ls.fetched, 0)) / dt
		p.Exported = float64(max(loaded-ls.loaded, 0)) / dt
	}
	e.lastSamp.at, e.lastSamp.fetched, e.lastSamp.loaded = now, fetched, loaded
	const keep = 720
	if len(e.samples) == keep {
		e.samples = slices.Delete(e.samples, 0, 1)
	}
	e.samples = append(e.samples, p)
}
