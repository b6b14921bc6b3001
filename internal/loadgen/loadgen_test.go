package loadgen

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

func TestRunDoesEveryOperationOnce(t *testing.T) {
	var done atomic.Int64
	r, err := Run(8, 1000, func(*rand.Rand) error { done.Add(1); return nil })
	if err != nil || r.Ops != 1000 || done.Load() != 1000 || r.P50 > r.P99 {
		t.Fatalf("Run = %+v, %v; %d operations done, want 1,000", r, err, done.Load())
	}
}

func TestRunReportsAnError(t *testing.T) {
	boom := errors.New("boom")
	var n atomic.Int64
	_, err := Run(4, 100, func(*rand.Rand) error {
		if n.Add(1) == 50 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the operation's error", err)
	}
}

func TestWords(t *testing.T) {
	got := Words([]string{"25.1. Routine Vacuuming", "VACUUM — garbage-collect", "The vacuum"})
	want := []string{"collect", "garbage", "routine", "vacuum", "vacuuming"}
	if !slices.Equal(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}
