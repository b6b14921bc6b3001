package bigtable_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	gbigtable "cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

func TestMain(m *testing.M) { os.Exit(emulator.Main(m)) }

const project, instance = "caffeine", "test"

var tables atomic.Int64

// newTable returns the name of a new table of the emulator, whose tables
// are deleted when the test ends (after whatever uses them is closed).
func newTable(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%d", os.Getpid(), tables.Add(1))
	t.Cleanup(func() {
		ctx := context.Background()
		admin, err := gbigtable.NewAdminClient(ctx, project, instance)
		if err != nil {
			t.Errorf("admin client: %v", err)
			return
		}
		defer admin.Close()
		for _, tbl := range []string{name, name + "-index"} {
			if err := admin.DeleteTable(ctx, tbl); err != nil {
				t.Errorf("delete table %q: %v", tbl, err)
			}
		}
	})
	return name
}

// open returns a store on a new table of the emulator (see newTable).
func open(t testing.TB, opts ...option.ClientOption) percolator.Store {
	t.Helper()
	name := newTable(t)
	s, err := bigtable.Open(t.Context(), bigtable.Config{Project: project, Instance: instance, Table: name, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) percolator.Store { return open(t) })
}

// TestStoreUnknownOutcome runs the conditional cases of the suite on a
// connection that fails two CheckAndMutateRow calls in eight with an
// unknown outcome: one before it reaches the emulator, one after the
// emulator applied it.
func TestStoreUnknownOutcome(t *testing.T) {
	var calls, before, after atomic.Int64
	faulty := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method != "/google.bigtable.v2.Bigtable/CheckAndMutateRow" {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		switch calls.Add(1) % 8 {
		case 1:
			before.Add(1)
			return status.Error(codes.Unavailable, "injected: lost before the server")
		case 5:
			after.Add(1)
			if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
				return err
			}
			return status.Error(codes.DeadlineExceeded, "injected: reply lost")
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	storetest.RunConditional(t, func(t *testing.T) percolator.Store {
		conn, err := grpc.NewClient(os.Getenv(emulator.EnvHost),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithUnaryInterceptor(faulty))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return open(t, option.WithGRPCConn(conn))
	})
	t.Logf("CheckAndMutateRow calls: %d, failed before the server: %d, after: %d", calls.Load(), before.Load(), after.Load())
	if before.Load() == 0 || after.Load() == 0 {
		t.Errorf("no fault injected (%d before, %d after)", before.Load(), after.Load())
	}
}
