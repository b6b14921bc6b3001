package bigtable_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
)

// serveOracle starts an oracle server on table and returns its address.
func serveOracle(t testing.TB, table string) string {
	t.Helper()
	st, err := bigtable.Open(context.Background(), bigtable.Config{Project: project, Instance: instance, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := percolator.NewOracleServer(st, percolator.OracleServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("oracle server: %v", err)
		}
		st.Close()
	})
	for end := time.Now().Add(10 * time.Second); !srv.Holding(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the oracle server took no lease")
		}
	}
	return ln.Addr().String()
}

// openDB opens a DB on table, taking timestamps from the oracle server at
// addr, or from the table's oracle row if addr is empty.
func openDB(t testing.TB, table, addr string) *percolator.DB {
	t.Helper()
	cfg := bigtable.Config{Project: project, Instance: instance, Table: table}
	if addr != "" {
		c, err := percolator.NewOracleClient([]string{addr})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Timestamps = c
	}
	st, err := bigtable.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	db, err := percolator.Open(context.Background(), st, percolator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		st.Close()
	})
	return db
}

// TestOracleServerTransactions commits transactions with timestamps of an
// oracle server: commit timestamps increase and a commit is seen by the
// next transaction, of a DB on the oracle row of the same table too
// (the server persists its high-water mark in that row).
func TestOracleServerTransactions(t *testing.T) {
	table := newTable(t)
	addr := serveOracle(t, table)
	db := openDB(t, table, addr)
	rowDB := openDB(t, table, "")
	ctx := context.Background()
	var last uint64
	for i := range 20 {
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tx.StartTs() <= last {
			t.Fatalf("start timestamp %d after commit timestamp %d", tx.StartTs(), last)
		}
		tx.Set("r", "c", fmt.Appendf(nil, "%d", i))
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		last = tx.CommitTs()
		err = rowDB.View(ctx, func(tx *percolator.Tx) error {
			v, err := tx.Get(ctx, "r", "c")
			if err == nil && string(v) != fmt.Sprint(i) {
				err = fmt.Errorf("read %q after commit of %d", v, i)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkOracles takes timestamps from the one-row oracle and from an
// oracle server with 1, 4 and 16 goroutines of one process (one DB, so
// their calls are batched as a process batches them) and reports
// timestamps/s.
func BenchmarkOracles(b *testing.B) {
	table := newTable(b)
	addr := serveOracle(b, table)
	for _, kind := range []string{"row", "server"} {
		a := addr
		if kind == "row" {
			a = ""
		}
		db := openDB(b, table, a)
		for _, clients := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", kind, clients), func(b *testing.B) {
				ctx := context.Background()
				var wg sync.WaitGroup
				start := time.Now()
				for c := range clients {
					n := b.N / clients
					if c < b.N%clients {
						n++
					}
					wg.Go(func() {
						var prev uint64
						for range n {
							ts, err := db.Oracle().Next(ctx)
							if err != nil {
								b.Error(err)
								return
							}
							if ts <= prev {
								b.Errorf("timestamp %d after %d", ts, prev)
							}
							prev = ts
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ts/s")
			})
		}
	}
}
