package budget

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The limit follows a live heap that outgrows the budget, and comes back
// to the budget when it shrinks.
func TestApplyFollowsLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(math.MaxInt64)
	b := &Budget{MB: 16}
	b.Apply(t.Context())
	if got := debug.SetMemoryLimit(-1); got != 16<<20 {
		t.Fatalf("limit %d, want the budget %d", got, 16<<20)
	}
	live := make([]byte, 128<<20)
	for i := range live {
		live[i] = 1
	}
	waitLimit(t, func(l int64) bool { return l >= 128<<20+64<<20 }, "above the 128 MiB live heap")
	runtime.KeepAlive(live)
	live = nil
	waitLimit(t, func(l int64) bool { runtime.GC(); return l == 16<<20 }, "back at the budget")
}

func waitLimit(t *testing.T, ok func(int64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l := debug.SetMemoryLimit(-1)
		if ok(l) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB after 30 s, want it %s", l>>20, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With mapped files to trim, the heap's limit leaves them their quarter:
// the heap at its limit and the files at theirs make the budget.
func TestApplyLeavesTheMappedFilesTheirQuarter(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(math.MaxInt64)
	b := &Budget{MB: 64}
	b.Apply(t.Context(), t.TempDir())
	want := int64(64 << 20)
	if canTrim {
		want = 48 << 20
	}
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Fatalf("limit %d MiB, want %d", got>>20, want>>20)
	}
}

func TestZeroBudgetSetsNothing(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	(&Budget{}).Apply(t.Context())
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("a zero budget set the limit to %d", got)
	}
	if (&Budget{}).TableBytes() != 0 {
		t.Fatal("a zero budget gives the table a share")
	}
}
