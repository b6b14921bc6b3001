package percolator_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// sharedSuites are the suites TestSharedStore runs again on a store that is
// not an ExclusiveStore: every commit two-phase, locks of other writers
// judged by heartbeats and TTLs.
var sharedSuites = []string{
	"TestBankTransfer", "TestHistory", "TestOracleConcurrent", "TestGCKeepsSnapshots",
	"TestAtMostOneCommitPerChange", "TestMessageCollapsing", "TestNoLostWork", "TestObserverChain",
	"TestWeakNotificationsUnderContention", "TestFailingObserverIsParked", "TestTxNotifySurvivesCrash",
	"TestTxNotifyHotRowNoConflicts", "TestPendingGauge", "TestWatch", "TestStuckWriterIsRolledBack",
	"TestTxBasics", "TestSnapshotIsolation", "TestExactlyOneWinner", "TestLockCleanup", "TestReaderWaitsForLiveWriter",
	"TestScan", "TestUpdateRetriesAndGivesUp",
}

// TestSharedStore runs sharedSuites in a child test process with
// percolatortest.EnvShared set, so their DBs are opened on Badger with
// its ExclusiveStore hidden (percolatortest.Shared), as on Bigtable.
func TestSharedStore(t *testing.T) {
	if os.Getenv(percolatortest.EnvShared) != "" {
		t.Skip("already on a shared store")
	}
	args := []string{"-test.run=^(" + strings.Join(sharedSuites, "|") + ")$", "-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), percolatortest.EnvShared+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || testing.Verbose() {
		t.Logf("child test process (%s=1 %s):\n%s", percolatortest.EnvShared, strings.Join(args, " "), out)
	}
	if err != nil {
		t.Fatalf("suites on a shared store: %v", err)
	}
}

// skipShared skips a test of what only the one process of an
// ExclusiveStore has, when percolatortest.EnvShared reruns the package on
// a shared store: there the oracle is the table's row (oracle_shared.go),
// whose timestamps trail the clock by up to its lag tolerance.
func skipShared(t *testing.T, what string) {
	t.Helper()
	if os.Getenv(percolatortest.EnvShared) != "" {
		t.Skipf("%s: a shared store has none", what)
	}
}

// bigtableStore opens the Bigtable store on a new table of the emulator
// (BIGTABLE_EMULATOR_HOST, or one it starts for the test).
func bigtableStore(t *testing.T, table string, opts ...option.ClientOption) *bigtable.Store {
	t.Helper()
	if os.Getenv(percolatortest.EnvShared) != "" {
		t.Skip("run by the parent process")
	}
	emulator.Ensure(t)
	st, err := bigtable.Open(t.Context(), bigtable.Config{Project: "caffeine", Instance: "test", Table: table, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBankTransferBigtable runs the bank on the Bigtable store on the
// emulator.
func TestBankTransferBigtable(t *testing.T) {
	db := percolatortest.OpenOn(t, bigtableStore(t, "bank"), percolator.Options{})
	runBankOn(t, db, 1500*time.Millisecond)
}

// TestBankTransferBigtableUnknownOutcomes runs the bank on the Bigtable
// store over a connection that fails one CheckAndMutateRow in eight before
// the emulator sees it and one in eight after it applied it: prewrites,
// commit points, roll-forwards and rollbacks of unknown outcome, which the
// store decides by re-reading. The total must stay exact.
func TestBankTransferBigtableUnknownOutcomes(t *testing.T) {
	var calls atomic.Int64
	faulty := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method != "/google.bigtable.v2.Bigtable/CheckAndMutateRow" {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		switch calls.Add(1) % 8 {
		case 1:
			return status.Error(codes.Unavailable, "injected: lost before the server")
		case 5:
			if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
				return err
			}
			return status.Error(codes.DeadlineExceeded, "injected: reply lost")
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	// A first store makes sure the emulator runs, so its address is known.
	plain := bigtableStore(t, "bank-setup")
	plain.Close()
	conn, err := grpc.NewClient(os.Getenv(emulator.EnvHost),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(faulty))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	db := percolatortest.OpenOn(t, bigtableStore(t, "bank-faults", option.WithGRPCConn(conn)), percolator.Options{})
	runBankOn(t, db, 1500*time.Millisecond)
	t.Logf("%d CheckAndMutateRow calls, a quarter of them failed", calls.Load())
}

// TestOtherProcessLocks runs two DBs on one shared store, as two processes
// on one Bigtable table: a reader waits for the fresh lock of a writer whose
// heartbeat is fresh, and cleans it up at once when that writer has closed
// (its heartbeat row deleted), without waiting for the TTL.
func TestOtherProcessLocks(t *testing.T) {
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	t.Cleanup(func() { st.Close() })
	opt := percolator.Options{LockTTL: time.Minute}
	writer, err := percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	set(t, writer, "a", "c", "old")
	tx, err := writer.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	tx.Set("a", "c", []byte("new"))
	tx.Set("b", "c", []byte("new"))
	percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == percolator.CrashAfterPrewrites })
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatalf("Commit = %v, want the crash", err)
	}
	reader, err := percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	err = reader.View(ctx, func(tx *percolator.Tx) error {
		v, err := tx.Get(ctx, "a", "c")
		if err == nil {
			t.Errorf("read %q past the fresh lock of a live writer", v)
		}
		return err
	})
	if err == nil {
		t.Fatal("the read did not wait for the live writer's lock")
	}
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if v, _ := get(t, reader, "a", "c"); v != "old" {
		t.Errorf("a = %q after the writer closed, want old (rolled back)", v)
	}
	if v, _ := get(t, reader, "b", "c"); v != "" {
		t.Errorf("b = %q after the writer closed, want nothing", v)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cleaning up a closed writer's locks took %v, as long as waiting for the TTL", d)
	}
	if n, err := percolator.CountLocks(reader); err != nil || n != 0 {
		t.Errorf("%d locks left (%v)", n, err)
	}
}
