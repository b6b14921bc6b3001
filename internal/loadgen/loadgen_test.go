package loadgen

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunDoesEveryOperationOnce(t *testing.T) {
	var done atomic.Int64
	r, err := Run(8, 1000, func(*rand.Rand) error { done.Add(1); return nil })
	if err != nil || r.Ops != 1000 || done.Load() != 1000 || r.P50 > r.P99 {
		t.Fatalf("Run = %+v, %v; %d operations done, want 1,000", r, err, done.Load())
	}
}

func TestRunCountsErrorsAndGoesOn(t *testing.T) {
	boom := errors.New("boom")
	var n atomic.Int64
	r, err := Run(4, 100, func(*rand.Rand) error {
		if k := n.Add(1); k == 50 || k == 70 {
			time.Sleep(20 * time.Millisecond) // as a query that times out
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the operation's first error", err)
	}
	if r.Ops != 100 || r.Errors != 2 || n.Load() != 100 {
		t.Fatalf("Run = %+v after %d operations, want all 100 done and 2 errors", r, n.Load())
	}
	if r.P99 < 20*time.Millisecond {
		t.Fatalf("p99 %v: the failed operations' latency is not counted", r.P99)
	}
}

func TestWords(t *testing.T) {
	got := Words([]string{"25.1. Routine Vacuuming", "VACUUM — garbage-collect", "The vacuum"})
	want := []string{"collect", "garbage", "routine", "vacuum", "vacuuming"}
	if !slices.Equal(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}
