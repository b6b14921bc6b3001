package percolator_test

import (
	"context"
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
