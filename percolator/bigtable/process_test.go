package bigtable_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
)

// Tests of several OS processes on one emulator table. The parent runs
// this test binary again as children (envChild names the child's part,
// envTable the table) and talks to them over their stdin and stdout.
const (
	envChild = "CAFFEINE_BT_CHILD"
	envTable = "CAFFEINE_BT_TABLE"
)

// Options of every process of these tests: a short lock TTL, so that a
// killed process's locks are cleaned up soon.
var processOptions = percolator.Options{LockTTL: time.Second, ClockSkew: 200 * time.Millisecond}

// child is a running child process.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startChild starts the child part of the test named kind on table, with
// env (KEY=VALUE) added to its environment.
func startChild(t testing.TB, kind, table string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+kind, envTable+"="+table)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = emulator.ChildAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if got := c.line(t); got != "ready" {
		t.Fatalf("child %s: said %q, want ready", kind, got)
	}
	return c
}

// line returns the child's next line of output that is not the test
// framework's.
func (c *child) line(t testing.TB) string {
	t.Helper()
	for c.out.Scan() {
		s := c.out.Text()
		if strings.HasPrefix(s, "=== ") || strings.HasPrefix(s, "--- ") || s == "PASS" || s == "FAIL" || strings.HasPrefix(s, "ok ") {
			continue
		}
		return s
	}
	t.Fatalf("child exited: %v", c.out.Err())
	return ""
}

// ask sends a command and returns the reply.
func (c *child) ask(t testing.TB, cmd string) string {
	t.Helper()
	if _, err := fmt.Fprintln(c.in, cmd); err != nil {
		t.Fatal(err)
	}
	return c.line(t)
}

// TestChildProcess is the children's entry: it does nothing in a normal
// run.
func TestChildProcess(t *testing.T) {
	kind := os.Getenv(envChild)
	if kind == "" {
		t.Skip("run by the multi-process tests")
	}
	ctx := context.Background()
	if kind == "oracleserver" { // no DB of its own
		if err := oracleServerChild(ctx); err != nil {
			fmt.Println("error:", err)
			t.Fatal(err)
		}
		return
	}
	st, err := bigtable.Open(ctx, bigtable.Config{Project: project, Instance: instance, Table: os.Getenv(envTable)})
	if err != nil {
		t.Fatal(err)
	}
	opt := processOptions
	if kind == "mark" {
		opt.Observed = []string{"in"}
	}
	db, err := percolator.Open(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	switch kind {
	case "oracle":
		err = oracleChild(ctx, db)
	case "bank":
		err = bankChild(ctx, db)
	case "oraclebench":
		err = oracleBenchChild(ctx, db)
	case "oracleload":
		err = oracleLoadChild(ctx, db)
	case "duty":
		err = dutyChild(ctx, db)
	case "mark":
		err = markChild(ctx, db)
	default:
		err = fmt.Errorf("unknown child %q", kind)
	}
	db.Close()
	st.Close()
	if err != nil {
		fmt.Println("error:", err)
		t.Fatal(err)
	}
}

// oracleChild answers commands: "next" (a timestamp), "set V" (commits
// row=V), "get" (reads row in a new transaction), "quit". Meanwhile four
// goroutines take timestamps as fast as they can, checking that each
// goroutine's keep increasing; at quit it prints how many they took and
// the file holding them (8-byte big-endian each).
func oracleChild(ctx context.Context, db *percolator.DB) error {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var all []uint64
	var bad atomic.Value
	for range 4 {
		wg.Go(func() {
			var mine []uint64
			defer func() { mu.Lock(); all = append(all, mine...); mu.Unlock() }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ts, err := db.Oracle().Next(ctx)
				if err != nil {
					bad.Store(err.Error())
					return
				}
				if n := len(mine); n > 0 && ts <= mine[n-1] {
					bad.Store(fmt.Sprintf("timestamp %d after %d", ts, mine[n-1]))
				}
				mine = append(mine, ts)
			}
		})
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "next":
			ts, err := db.Oracle().Next(ctx)
			if err != nil {
				return err
			}
			fmt.Println(ts)
		case "set":
			err := db.Update(ctx, func(tx *percolator.Tx) error { return tx.Set("row", "c", []byte(arg)) })
			if err != nil {
				return err
			}
			fmt.Println("done")
		case "get":
			var v []byte
			err := db.View(ctx, func(tx *percolator.Tx) error {
				var err error
				v, err = tx.Get(ctx, "row", "c")
				return err
			})
			if err != nil {
				return err
			}
			fmt.Println(string(v))
		case "quit":
			close(stop)
			wg.Wait()
			if b := bad.Load(); b != nil {
				return fmt.Errorf("%s", b)
			}
			f, err := os.CreateTemp("", "oracle-child")
			if err != nil {
				return err
			}
			w := bufio.NewWriter(f)
			for _, ts := range all {
				binary.Write(w, binary.BigEndian, ts)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			f.Close()
			fmt.Println(len(all), f.Name())
			return nil
		}
	}
	return in.Err()
}

// TestOracleProcesses runs the oracle in three OS processes on one table:
// timestamps asked for one after another, from process to process, keep
// increasing; a transaction begun after another process's commit (told
// over the pipes) sees it; and of the timestamps the processes take
// concurrently none is handed out twice.
func TestOracleProcesses(t *testing.T) {
	table := newTable(t)
	var kids []*child
	for range 3 {
		kids = append(kids, startChild(t, "oracle", table))
	}
	var last uint64
	for i := range 600 {
		ts, err := strconv.ParseUint(kids[i%3].ask(t, "next"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if ts <= last {
			t.Fatalf("ask %d (process %d): timestamp %d after %d", i, i%3, ts, last)
		}
		last = ts
	}
	for i := range 150 {
		want := strconv.Itoa(i)
		if got := kids[i%3].ask(t, "set "+want); got != "done" {
			t.Fatalf("set: %s", got)
		}
		if got := kids[(i+1)%3].ask(t, "get"); got != want {
			t.Fatalf("round %d: process %d read %q after process %d committed %q", i, (i+1)%3, got, i%3, want)
		}
	}
	seen := make(map[uint64]int)
	total := 0
	for k, c := range kids {
		reply := c.ask(t, "quit")
		var n int
		var file string
		if _, err := fmt.Sscan(reply, &n, &file); err != nil {
			t.Fatalf("process %d: %q", k, reply)
		}
		b, err := os.ReadFile(file)
		os.Remove(file)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+8 <= len(b); i += 8 {
			ts := binary.BigEndian.Uint64(b[i:])
			if p, dup := seen[ts]; dup {
				t.Fatalf("timestamp %d handed out to process %d and process %d", ts, p, k)
			}
			seen[ts] = k
		}
		total += n
	}
	t.Logf("%d timestamps taken concurrently by 3 processes, all distinct", total)
}

// oracleBenchChild takes timestamps from 16 goroutines for 2 s at every
// "go" and prints how many it took a second (BenchmarkOracleProcesses).
func oracleBenchChild(ctx context.Context, db *percolator.DB) error {
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var n atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(2 * time.Second)
		for range 16 {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					if _, err := db.Oracle().Next(ctx); err != nil {
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		fmt.Println(float64(n.Load()) / time.Since(start).Seconds())
	}
	return in.Err()
}

// The bank: accounts whose total never changes, in the table.
const (
	accounts     = 20
	startBalance = 1000
)

func account(i int) string { return fmt.Sprintf("acct%02d", i) }

// bankTotal returns the sum of the accounts in one read-only transaction.
func bankTotal(ctx context.Context, db *percolator.DB) (int, error) {
	total := 0
	err := db.View(ctx, func(tx *percolator.Tx) error {
		total = 0
		for i := range accounts {
			v, err := tx.Get(ctx, account(i), "bal")
			if err != nil {
				return err
			}
			n, _ := strconv.Atoi(string(v))
			total += n
		}
		return nil
	})
	return total, err
}

// bankChild transfers money between random accounts until its stdin
// closes, and checks in read-only transactions that the total stays
// exact. It prints "transfers N audits M" at the end, or an error.
func bankChild(ctx context.Context, db *percolator.DB) error {
	fmt.Println("ready")
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	var transfers, audits atomic.Int64
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if g == 0 {
					total, err := bankTotal(ctx, db)
					if err != nil {
						errs <- err
						return
					}
					if total != accounts*startBalance {
						errs <- fmt.Errorf("audit: total %d, want %d", total, accounts*startBalance)
						return
					}
					audits.Add(1)
					continue
				}
				from, to := rand.IntN(accounts), rand.IntN(accounts)
				if from == to {
					continue
				}
				amount := rand.IntN(50)
				err := db.Update(ctx, func(tx *percolator.Tx) error {
					a, err := tx.Get(ctx, account(from), "bal")
					if err != nil {
						return err
					}
					b, err := tx.Get(ctx, account(to), "bal")
					if err != nil {
						return err
					}
					x, _ := strconv.Atoi(string(a))
					y, _ := strconv.Atoi(string(b))
					if err := tx.Set(account(from), "bal", []byte(strconv.Itoa(x-amount))); err != nil {
						return err
					}
					return tx.Set(account(to), "bal", []byte(strconv.Itoa(y+amount)))
				})
				if err == nil {
					transfers.Add(1)
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	fmt.Println("transfers", transfers.Load(), "audits", audits.Load())
	return nil
}

// TestBankProcesses runs the bank in three OS processes on one table and
// kills one with SIGKILL midway, then starts a replacement: every audit
// in every process sees the exact total, the total is exact at the end,
// and no lock is left once the lock TTL has passed.
func TestBankProcesses(t *testing.T) {
	table := newTable(t)
	ctx := t.Context()
	st, err := bigtable.Open(ctx, bigtable.Config{Project: project, Instance: instance, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	db, err := percolator.Open(ctx, st, processOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer db.Close()
	err = db.Update(ctx, func(tx *percolator.Tx) error {
		for i := range accounts {
			if err := tx.Set(account(i), "bal", []byte(strconv.Itoa(startBalance))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var kids []*child
	for range 3 {
		kids = append(kids, startChild(t, "bank", table))
	}
	time.Sleep(2 * time.Second)
	kids[0].cmd.Process.Signal(os.Kill)
	kids[0].cmd.Wait()
	kids[0] = startChild(t, "bank", table)
	time.Sleep(3 * time.Second)
	for i, c := range kids {
		c.in.Close()
		t.Logf("process %d: %s", i, c.line(t))
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	// The killed process's locks: readers roll them back or forward once
	// its heartbeat is stale; CleanLocks does it for those no one read.
	time.Sleep(processOptions.LockTTL + processOptions.ClockSkew)
	if _, err := db.CleanLocks(ctx); err != nil {
		t.Fatal(err)
	}
	locks, err := db.Locks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) > 0 {
		t.Errorf("%d locks left after the TTL: %v", len(locks), locks)
	}
	total, err := bankTotal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if total != accounts*startBalance {
		t.Errorf("total %d, want %d", total, accounts*startBalance)
	}
}
