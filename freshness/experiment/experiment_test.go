package experiment_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/freshness/changingweb"
	"github.com/caffeine-go/caffeine/freshness/experiment"
)

// TestTinyExperiment runs both modes on a 30-page fixture for a couple of
// seconds each: the harness end to end (crawler, chain or batch, index,
// metrics), not a measurement.
func TestTinyExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the engine for several seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opt := experiment.Options{
		Web:      changingweb.Options{Pages: 30, Duplicates: 2, HotFraction: 0.3, HotRate: 1, Seed: 1},
		Duration: 2 * time.Second, Settle: time.Second, CrawlRate: 30,
		MinInterval: 500 * time.Millisecond, Dir: t.TempDir(),
	}
	rs, err := experiment.Run(ctx, opt, experiment.Incremental, experiment.Batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		t.Logf("%s: fetched %d (%.1f/s), %d changes, latency %+v, freshness %.3f, age %v, batches %d",
			r.Mode, r.Fetched, r.FetchRate, r.Changes, r.Latency, r.Average.Freshness, r.Average.MeanAge, r.Batches)
		if r.Fetched == 0 || r.Changes == 0 || r.Average.PageTime < 25*opt.Duration || len(r.Series) < 2 {
			t.Errorf("%s: fetched %d, changes %d, page-time %v, %d samples", r.Mode, r.Fetched, r.Changes, r.Average.PageTime, len(r.Series))
		}
		if r.Latency.Count == 0 || r.Latency.P50 <= 0 {
			t.Errorf("%s: no latency measured: %+v", r.Mode, r.Latency)
		}
	}
	if rs[1].Batches == 0 {
		t.Error("batch mode swapped no index in the window")
	}
	line := experiment.Line(rs[0], rs[1])
	if !regexp.MustCompile(`^incremental_p50_s=[0-9.]+ batch_p50_s=[0-9.]+ latency_ratio=[0-9.]+ age_incremental_s=[0-9.]+ age_batch_s=[0-9.]+ age_reduction=-?[0-9.]+$`).MatchString(line) {
		t.Errorf("summary line %q", line)
	}
	if err := experiment.Plot(filepath.Join(opt.Dir, "exp.svg"), rs); err != nil {
		t.Error(err)
	}
}
