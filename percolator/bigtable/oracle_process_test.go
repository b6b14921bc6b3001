package bigtable_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
)

// Client and server processes of the oracle server. An "oracleload"
// child takes timestamps from the table's oracle row and from the oracle
// servers named by envOracle; an "oracleserver" child is an oracle server
// (the defaults of `indexer oracle`).
const envOracle = "CAFFEINE_BT_ORACLE"

// oracleGoroutines is how many goroutines of an oracleload child take
// timestamps at once.
const oracleGoroutines = 4

// stamp is one timestamp taken by an oracleload child, with the wall
// clock (Unix ns) before Next was called and after it returned.
type stamp struct{ ts, asked, got uint64 }

// oracleLoadChild answers "run row" or "run server" (start taking
// timestamps from the oracle row or the oracle server with
// oracleGoroutines goroutines, as fast as they can) and "stop" (stop
// them; print how many they took, the seconds they ran and the file
// holding the stamps, 24 bytes each: ts, asked, got, big-endian). Each
// goroutine checks that its timestamps increase.
func oracleLoadChild(ctx context.Context, rowDB *percolator.DB) error {
	var serverDB *percolator.DB
	if addrs := os.Getenv(envOracle); addrs != "" {
		c, err := percolator.NewOracleClient(strings.Split(addrs, ","))
		if err != nil {
			return err
		}
		st, err := bigtable.Open(ctx, bigtable.Config{Project: project, Instance: instance, Table: os.Getenv(envTable), Timestamps: c})
		if err != nil {
			return err
		}
		defer st.Close()
		serverDB, err = percolator.Open(ctx, st, processOptions)
		if err != nil {
			return err
		}
		defer serverDB.Close()
	}
	fmt.Println("ready")
	var (
		stop  chan struct{}
		wg    sync.WaitGroup
		mu    sync.Mutex
		all   []stamp
		errs  []error
		start time.Time
	)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch cmd := in.Text(); cmd {
		case "run row", "run server":
			db := rowDB
			if cmd == "run server" {
				db = serverDB
			}
			if db == nil {
				return fmt.Errorf("%s: no oracle server named in %s", cmd, envOracle)
			}
			stop, all, errs, start = make(chan struct{}), nil, nil, time.Now()
			for range oracleGoroutines {
				wg.Go(func() {
					var mine []stamp
					var err error
					defer func() {
						mu.Lock()
						all = append(all, mine...)
						if err != nil {
							errs = append(errs, err)
						}
						mu.Unlock()
					}()
					for {
						select {
						case <-stop:
							return
						default:
						}
						asked := time.Now().UnixNano()
						ts, nerr := db.Oracle().Next(ctx)
						got := time.Now().UnixNano()
						if nerr != nil {
							err = nerr
							return
						}
						if n := len(mine); n > 0 && ts <= mine[n-1].ts {
							err = fmt.Errorf("timestamp %d after %d in one goroutine", ts, mine[n-1].ts)
							return
						}
						mine = append(mine, stamp{ts, uint64(asked), uint64(got)})
					}
				})
			}
		case "stop":
			close(stop)
			wg.Wait()
			secs := time.Since(start).Seconds()
			if len(errs) > 0 {
				return errs[0]
			}
			f, err := os.CreateTemp("", "oracle-load")
			if err != nil {
				return err
			}
			w := bufio.NewWriter(f)
			var b [24]byte
			for _, s := range all {
				binary.BigEndian.PutUint64(b[0:], s.ts)
				binary.BigEndian.PutUint64(b[8:], s.asked)
				binary.BigEndian.PutUint64(b[16:], s.got)
				w.Write(b[:])
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Println(len(all), secs, f.Name())
		default:
			return fmt.Errorf("unknown command %q", cmd)
		}
	}
	return in.Err()
}

// oracleServerChild serves the oracle of the table on 127.0.0.1 with the
// defaults of `indexer oracle` and answers "addr" (its address) and
// "holding" (yes or no) until it is killed or its stdin closes.
func oracleServerChild(ctx context.Context) error {
	st, err := bigtable.Open(ctx, bigtable.Config{Project: project, Instance: instance, Table: os.Getenv(envTable)})
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := percolator.NewOracleServer(st, percolator.OracleServerOptions{})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "addr":
			fmt.Println(ln.Addr())
		case "holding":
			fmt.Println(map[bool]string{true: "yes", false: "no"}[srv.Holding()])
		default:
			fmt.Println("unknown command")
		}
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	return in.Err()
}

// startLoad has the children take timestamps from kind ("row" or
// "server") until stopLoad.
func startLoad(kids []*child, kind string) {
	for _, c := range kids {
		fmt.Fprintln(c.in, "run "+kind)
	}
}

// stopLoad stops the children and returns their stamps and the sum of
// their rates (timestamps a second).
func stopLoad(t testing.TB, kids []*child) ([]stamp, float64) {
	t.Helper()
	for _, c := range kids {
		fmt.Fprintln(c.in, "stop")
	}
	var all []stamp
	var rate float64
	for k, c := range kids {
		reply := c.line(t)
		var n int
		var secs float64
		var file string
		if _, err := fmt.Sscan(reply, &n, &secs, &file); err != nil {
			t.Fatalf("process %d: %q", k, reply)
		}
		b, err := os.ReadFile(file)
		os.Remove(file)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+24 <= len(b); i += 24 {
			all = append(all, stamp{binary.BigEndian.Uint64(b[i:]), binary.BigEndian.Uint64(b[i+8:]), binary.BigEndian.Uint64(b[i+16:])})
		}
		rate += float64(n) / secs
	}
	return all, rate
}

// checkStamps checks the oracle's invariant over stamps taken by several
// processes of one machine (one clock): a timestamp asked for after
// another was returned is greater than it. So no timestamp is handed out
// twice, and none goes back, across processes and fail-overs.
func checkStamps(t testing.TB, stamps []stamp) {
	t.Helper()
	byTs := slices.Clone(stamps)
	slices.SortFunc(byTs, func(a, b stamp) int { return compare(a.ts, b.ts) })
	for i := 1; i < len(byTs); i++ {
		if byTs[i].ts == byTs[i-1].ts {
			t.Fatalf("timestamp %d handed out twice", byTs[i].ts)
		}
	}
	// byGot sorted by return time; newest[i] is the greatest timestamp of
	// byGot[:i+1].
	byGot := slices.Clone(stamps)
	slices.SortFunc(byGot, func(a, b stamp) int { return compare(a.got, b.got) })
	newest := make([]uint64, len(byGot))
	for i, s := range byGot {
		newest[i] = s.ts
		if i > 0 {
			newest[i] = max(newest[i], newest[i-1])
		}
	}
	for _, s := range stamps {
		// The stamps returned before s was asked for: byGot[:i].
		i, _ := slices.BinarySearchFunc(byGot, s.asked, func(a stamp, asked uint64) int { return compare(a.got, asked) })
		if i > 0 && newest[i-1] >= s.ts {
			t.Fatalf("timestamp %d asked for at %d, after %d was returned", s.ts, s.asked, newest[i-1])
		}
	}
}

func compare(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// longestGap returns the longest time between two stamps returned one
// after the other, and when it began (Unix ns).
func longestGap(stamps []stamp) (time.Duration, uint64) {
	gots := make([]uint64, len(stamps))
	for i, s := range stamps {
		gots[i] = s.got
	}
	slices.Sort(gots)
	var gap, at uint64
	for i := 1; i < len(gots); i++ {
		if d := gots[i] - gots[i-1]; d > gap {
			gap, at = d, gots[i-1]
		}
	}
	return time.Duration(gap), at
}

// startOracleServers starts n oracle server processes on table and waits
// until one holds the lease; it returns them and their addresses.
func startOracleServers(t testing.TB, table string, n int) ([]*child, []string) {
	t.Helper()
	var srvs []*child
	var addrs []string
	for range n {
		s := startChild(t, "oracleserver", table)
		srvs = append(srvs, s)
		addrs = append(addrs, s.ask(t, "addr"))
		waitServerHolding(t, srvs[0])
	}
	return srvs, addrs
}

// waitServerHolding waits until the server process holds the lease.
func waitServerHolding(t testing.TB, s *child) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); s.ask(t, "holding") != "yes"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the oracle server process took no lease")
		}
	}
}

// TestOracleServerFailoverProcesses kills -9 the serving oracle server
// process while four client processes take timestamps from it: the
// standby server process takes the lease over, the clients go on without
// an error, and no timestamp is handed out twice or goes back across the
// fail-over (checkStamps). It logs the longest time without a timestamp.
func TestOracleServerFailoverProcesses(t *testing.T) {
	table := newTable(t)
	srvs, addrs := startOracleServers(t, table, 2)
	var kids []*child
	for range 4 {
		kids = append(kids, startChild(t, "oracleload", table, envOracle+"="+strings.Join(addrs, ",")))
	}
	startLoad(kids, "server")
	time.Sleep(time.Second)
	srvs[0].cmd.Process.Kill()
	srvs[0].cmd.Wait()
	killed := uint64(time.Now().UnixNano())
	waitServerHolding(t, srvs[1])
	took := time.Duration(uint64(time.Now().UnixNano()) - killed)
	time.Sleep(time.Second)
	stamps, _ := stopLoad(t, kids)
	checkStamps(t, stamps)
	var before, after int
	for _, s := range stamps {
		switch {
		case s.got < killed:
			before++
		case s.asked > killed+uint64(took):
			after++
		}
	}
	gap, at := longestGap(stamps)
	t.Logf("%d timestamps from 4 processes: %d before the kill, %d after the standby held the lease (%v after the kill); longest gap %v, from %v after the kill",
		len(stamps), before, after, took.Round(time.Millisecond), gap.Round(time.Millisecond), time.Duration(int64(at)-int64(killed)).Round(time.Millisecond))
	if before == 0 || after == 0 {
		t.Errorf("no timestamps before the kill (%d) or after the fail-over (%d)", before, after)
	}
}

// BenchmarkOracleServerProcesses measures timestamps a second taken by 1,
// 4 and 16 client processes (oracleGoroutines goroutines each, for 2 s)
// from the table's oracle row and from an oracle server process (with a
// standby beside it, as deployed), side by side in each round, and checks
// every round's timestamps with checkStamps. It reports the medians of
// the rounds (b.N):
//
//	go test -run '^$' -bench OracleServerProcesses -benchtime 3x ./percolator/bigtable/
func BenchmarkOracleServerProcesses(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("processes=%d", n), func(b *testing.B) {
			table := newTable(b)
			_, addrs := startOracleServers(b, table, 2)
			var kids []*child
			for range n {
				kids = append(kids, startChild(b, "oracleload", table, envOracle+"="+strings.Join(addrs, ",")))
			}
			rates := map[string][]float64{}
			for range b.N {
				for _, kind := range []string{"row", "server"} {
					startLoad(kids, kind)
					time.Sleep(2 * time.Second)
					stamps, rate := stopLoad(b, kids)
					checkStamps(b, stamps)
					rates[kind] = append(rates[kind], rate)
				}
			}
			for kind, rs := range rates {
				slices.Sort(rs)
				b.ReportMetric(rs[len(rs)/2], kind+"-ts/s")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
