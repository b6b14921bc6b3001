package percolator_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// oracleServer is a running OracleServer on 127.0.0.1.
type oracleServer struct {
	srv  *percolator.OracleServer
	addr string
	stop context.CancelFunc
	done chan error
}

func startOracleServer(t testing.TB, st percolator.Store, id string) *oracleServer {
	t.Helper()
	srv, err := percolator.NewOracleServer(st, percolator.OracleServerOptions{ID: id, LeaseTTL: 400 * time.Millisecond, ClockSkew: 50 * time.Millisecond, Window: 1 << 12})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &oracleServer{srv: srv, addr: ln.Addr().String(), stop: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { s.kill(t, false) })
	return s
}

// kill stops the server, as a killed process (crash) or a clean stop.
func (s *oracleServer) kill(t testing.TB, crash bool) {
	if s.stop == nil {
		return
	}
	if crash {
		s.srv.Crash()
	}
	s.stop()
	s.stop = nil
	if err := <-s.done; err != nil {
		t.Errorf("oracle server %s: %v", s.addr, err)
	}
}

// waitHolding waits until one of the servers holds the lease.
func waitHolding(t testing.TB, srvs ...*oracleServer) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for _, s := range srvs {
			if s.srv.Holding() {
				return
			}
		}
	}
	t.Fatal("no oracle server took the lease")
}

// orderChecker checks the oracle's invariant over every timestamp taken:
// each is greater than every timestamp returned before it was asked for
// (so timestamps are unique, and increase in real time).
type orderChecker struct {
	t      testing.TB
	seed   uint64
	newest atomic.Uint64
	mu     sync.Mutex
	seen   map[uint64]bool
}

func (c *orderChecker) take(ctx context.Context, src percolator.TimestampSource) error {
	before := c.newest.Load()
	ts, err := src.Next(ctx)
	if err != nil {
		return err
	}
	if ts <= before {
		c.t.Errorf("seed %d: timestamp %d handed out after %d was returned", c.seed, ts, before)
	}
	for cur := c.newest.Load(); cur < ts && !c.newest.CompareAndSwap(cur, ts); cur = c.newest.Load() {
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[ts] {
		c.t.Errorf("seed %d: timestamp %d handed out twice", c.seed, ts)
	}
	c.seen[ts] = true
	return nil
}

// TestOracleServerConcurrent takes timestamps from one server with 16
// clients of 4 goroutines each.
func TestOracleServerConcurrent(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 0))
	st := openStore(t, t.TempDir())
	t.Cleanup(func() { st.Close() }) // after the servers' cleanups
	s := startOracleServer(t, st, "a")
	waitHolding(t, s)
	c := &orderChecker{t: t, seed: seed, seen: map[uint64]bool{}}
	var wg sync.WaitGroup
	for range 16 {
		cl, err := percolator.NewOracleClient([]string{s.addr})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for range 4 {
			n := 200 + r.IntN(400)
			wg.Go(func() {
				for range n {
					if err := c.take(t.Context(), cl); err != nil {
						t.Errorf("seed %d: %v", seed, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if len(c.seen) < 16*4*200 {
		t.Errorf("seed %d: %d timestamps taken", seed, len(c.seen))
	}
}

// TestOracleServerFailover runs two servers on one table while clients
// take timestamps: the holder is killed (without releasing its lease) at
// a random time and the standby takes over; then the standby is stopped
// and a new server started on the table (a restart). Every timestamp must
// exceed every one returned before it was asked for.
func TestOracleServerFailover(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 0))
	st := openStore(t, t.TempDir())
	t.Cleanup(func() { st.Close() }) // after the servers' cleanups
	a := startOracleServer(t, st, "a")
	waitHolding(t, a)
	b := startOracleServer(t, st, "b")
	c := &orderChecker{t: t, seed: seed, seen: map[uint64]bool{}}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var clients []*percolator.OracleClient
	for range 4 {
		cl, err := percolator.NewOracleClient([]string{a.addr, b.addr})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cl)
		for range 4 {
			wg.Go(func() {
				for ctx.Err() == nil {
					if err := c.take(ctx, cl); err != nil && !errors.Is(err, context.Canceled) {
						t.Errorf("seed %d: %v", seed, err)
						return
					}
				}
			})
		}
	}
	count := func() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.seen) }
	time.Sleep(time.Duration(50+r.IntN(200)) * time.Millisecond)
	n0 := count()
	a.kill(t, true)
	waitHolding(t, b)
	time.Sleep(time.Duration(50+r.IntN(200)) * time.Millisecond)
	n1 := count()
	b.kill(t, true)
	a2 := startOracleServer(t, st, "a2")
	cl, err := percolator.NewOracleClient([]string{a2.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	waitHolding(t, a2)
	for range 1000 {
		if err := c.take(t.Context(), cl); err != nil {
			t.Fatalf("seed %d: after restart: %v", seed, err)
		}
	}
	cancel()
	wg.Wait()
	for _, cl := range clients {
		cl.Close()
	}
	t.Logf("seed %d: %d timestamps before the kill, %d after the fail-over, %d in all", seed, n0, n1-n0, count())
	if n0 == 0 || n1 == n0 {
		t.Errorf("seed %d: no timestamps taken before the kill (%d) or after the fail-over (%d)", seed, n0, n1-n0)
	}
}
