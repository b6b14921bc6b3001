package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator/badger"
)

// failingCompact is a real Badger store whose compactions fail with err.
type failingCompact struct {
	*badger.Store
	err   error
	calls atomic.Int32
}

func (s *failingCompact) Compact(ctx context.Context, safeTs uint64) error {
	s.calls.Add(1)
	return s.err
}

// TestGCStoreFault: a GC pass that the system failed (out of file
// descriptors) stops the engine with its error; any other failure is
// logged and the next pass tried.
func TestGCStoreFault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		stops bool
	}{
		{"emfile", fmt.Errorf("badger: compact: %w", &os.PathError{Op: "open", Path: "000042.sst", Err: syscall.EMFILE}), true},
		{"other", errors.New("badger: compact: something"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs, err := badger.Open(t.TempDir(), badger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st := &failingCompact{Store: bs, err: tc.err}
			e, err := Open(context.Background(), Config{Dir: t.TempDir(), Store: st, Table: "t", GCInterval: 20 * time.Millisecond, GCGrace: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err = e.Run(ctx)
			switch {
			case tc.stops && !errors.Is(err, syscall.EMFILE):
				t.Errorf("Run = %v, want the compaction's EMFILE", err)
			case !tc.stops && err != nil:
				t.Errorf("Run = %v, want nil (the failure logged, GC retried)", err)
			case !tc.stops && st.calls.Load() < 2:
				t.Errorf("%d compactions in 2s, want GC retried after a failure", st.calls.Load())
			}
		})
	}
}
