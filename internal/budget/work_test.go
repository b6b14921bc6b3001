package budget

import (
	"context"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Holders never hold more than the share at once, whatever they ask for
// (more than the share is the share: it goes through alone), and every
// share comes back. Seeded: the sizes and the holding times.
func TestHoldBoundsWhatIsLent(t *testing.T) {
	const share = 10 << 20
	defer setWork(share)()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	var (
		wg     sync.WaitGroup
		inUse  atomic.Int64
		over   atomic.Int64
		sizes  = make([]int64, 64)
		pauses = make([]time.Duration, 64)
	)
	for i := range sizes {
		sizes[i] = rng.Int63n(2 * share) // some past the share
		pauses[i] = time.Duration(rng.Intn(2000)) * time.Microsecond
	}
	for i := range sizes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := Hold(context.Background(), sizes[i])
			if err != nil {
				t.Error(err)
				return
			}
			if u := inUse.Add(min(sizes[i], share)); u > share {
				over.Store(u)
			}
			time.Sleep(pauses[i])
			inUse.Add(-min(sizes[i], share))
			release()
			release() // a second call gives nothing back twice
		}()
	}
	wg.Wait()
	if o := over.Load(); o != 0 {
		t.Fatalf("%d bytes held at once, over the share of %d (seed %d)", o, share, seed)
	}
	now, peak := Lent()
	if now != 0 || peak > share || peak == 0 {
		t.Fatalf("Lent() = %d, %d; want 0 now and a peak in (0, %d] (seed %d)", now, peak, share, seed)
	}
}

// Without a budget Hold lends at once; a wait ends with its context.
func TestHoldWaitsWithinContext(t *testing.T) {
	setWork(0)
	if release, err := Hold(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	defer setWork(100)()
	release, err := Hold(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Hold(ctx, 1); err != context.DeadlineExceeded {
		t.Fatalf("Hold with the share taken returned %v, want the context's deadline", err)
	}
	release()
	if release, err := Hold(context.Background(), 1); err != nil {
		t.Fatalf("Hold after the share came back: %v", err)
	} else {
		release()
	}
}
