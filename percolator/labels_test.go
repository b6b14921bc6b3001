package percolator_test

import (
	"bytes"
	"context"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/caffeine-go/caffeine/percolator"
)

// A worker labels the goroutine of each observer run with the observer's
// name (percolator.ProfileLabel), so a CPU profile tells the observers
// apart: the samples of a run that spins carry its observer's name, and
// the label is gone once the run is over.
func TestRunsCarryProfileLabel(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"c"}})
	spin := func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		end := time.Now().Add(300 * time.Millisecond)
		for x := uint64(1); time.Now().Before(end); x = x*6364136223846793005 + 1 {
			sink = x
		}
		return nil
	}
	var b bytes.Buffer
	if err := pprof.StartCPUProfile(&b); err != nil {
		t.Skip("another CPU profile runs:", err)
	}
	w := startWorker(t, db, percolator.WorkerOptions{IdleMin: time.Millisecond}, percolator.Observer{Name: "spinner", Column: "c", Run: spin})
	set(t, db, "r", "c", "x")
	waitIdle(t, w)
	pprof.StopCPUProfile()
	p, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	labeled := 0
	for _, s := range p.Sample {
		if v := s.Label[percolator.ProfileLabel]; len(v) > 0 {
			if v[0] != "spinner" {
				t.Errorf("a sample labeled %s=%q", percolator.ProfileLabel, v[0])
			}
			labeled++
		}
	}
	if labeled == 0 {
		t.Errorf("none of %d samples carries %s=spinner", len(p.Sample), percolator.ProfileLabel)
	}
}

var sink uint64
