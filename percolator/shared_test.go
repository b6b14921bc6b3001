package percolator_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

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

// TestBankTransferBigtable runs the bank on the Bigtable store, on the
// emulator (BIGTABLE_EMULATOR_HOST, or one this test starts).
func TestBankTransferBigtable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the Bigtable emulator; -short skips it")
	}
	if os.Getenv(percolatortest.EnvShared) != "" {
		t.Skip("run by the parent process")
	}
	if os.Getenv(emulator.EnvHost) == "" {
		e, err := emulator.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := e.Stop(); err != nil {
				t.Error(err)
			}
		})
		t.Setenv(emulator.EnvHost, e.Addr)
	}
	st, err := bigtable.Open(t.Context(), bigtable.Config{Project: "caffeine", Instance: "test", Table: "bank"})
	if err != nil {
		t.Fatal(err)
	}
	db := percolatortest.OpenOn(t, st, percolator.Options{})
	runBankOn(t, db, 1500*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := percolatortest.Check(ctx, db); err != nil {
		t.Error(err)
	}
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
