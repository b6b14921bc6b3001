package percolator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// The kill test runs transactions in a child process on a Badger table and
// kills it (SIGKILL) at a random moment, again and again, then opens the
// table as the next process would and checks that every transaction that
// reached its commit point is whole and every other one is gone:
//
//   - The bank's total is what it was: a transfer moves amounts between
//     2 to 24 accounts, each in its own row, so a transfer cut in half
//     changes the total.
//   - Each transfer also writes a cell t:ID in every row it moves money in,
//     and a ledger row listing those rows (Caffeine's links:out and in:
//     cells): every ledger row's cells are all there, and no t:ID cell is
//     without its ledger row.
//   - No lock is left once the table is open.
//
// PERCOLATOR_KILLS sets how many kills (default 12; the long run is 1000),
// PERCOLATOR_KILL_SEED the seed (random otherwise; a failure prints it).
// A failure names the kill and the seed; the same seed gives the same kill
// times, though not the same moments in the child's commits.

const (
	killAccounts = 60
	killInitial  = 1000
	envKillChild = "PERCOLATOR_KILL_CHILD" // the table's directory, in the child
)

func killAccount(i int) string { return fmt.Sprintf("acct/%02d", i) }

func TestMain(m *testing.M) {
	if dir := os.Getenv(envKillChild); dir != "" {
		seed, _ := strconv.ParseUint(os.Getenv("PERCOLATOR_KILL_CHILD_SEED"), 10, 64)
		if err := killChild(dir, seed); err != nil {
			fmt.Fprintln(os.Stderr, "kill child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// killChild runs transfers on the table in dir until it is killed.
func killChild(dir string, seed uint64) error {
	ctx := context.Background()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return err
	}
	db, err := percolator.Open(ctx, st, percolator.Options{})
	if err != nil {
		return err
	}
	fmt.Println("open") // the parent kills only after this
	errc := make(chan error)
	for w := range 4 {
		go func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; ; i++ {
				id := fmt.Sprintf("%d-%d-%d", seed, w, i)
				err := db.Update(ctx, func(tx *percolator.Tx) error { return killTransfer(ctx, tx, r, id) })
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	return <-errc
}

// killTransfer moves random amounts between 2 to 24 accounts, keeping the
// total, and records itself as ledger/ID and t:ID cells.
func killTransfer(ctx context.Context, tx *percolator.Tx, r *rand.Rand, id string) error {
	n := 2 + r.IntN(23)
	accts := r.Perm(killAccounts)[:n]
	slices.Sort(accts)
	var rows []string
	sum := 0
	for i, a := range accts {
		v, err := tx.Get(ctx, killAccount(a), "bal")
		if err != nil {
			return err
		}
		bal := killInitial
		if v != nil {
			if bal, err = strconv.Atoi(string(v)); err != nil {
				return err
			}
		}
		d := r.IntN(21) - 10
		if i == n-1 {
			d = -sum
		}
		sum += d
		if err := tx.Set(killAccount(a), "bal", []byte(strconv.Itoa(bal+d))); err != nil {
			return err
		}
		if err := tx.Set(killAccount(a), "t:"+id, []byte("1")); err != nil {
			return err
		}
		rows = append(rows, killAccount(a))
	}
	return tx.Set("ledger/"+id, "rows", []byte(strings.Join(rows, ",")))
}

func TestKillDuringCommits(t *testing.T) {
	skipShared(t, "killing the one process of an exclusive store")
	kills := 12
	if testing.Short() {
		kills = 4
	}
	if s := os.Getenv("PERCOLATOR_KILLS"); s != "" {
		var err error
		if kills, err = strconv.Atoi(s); err != nil {
			t.Fatalf("PERCOLATOR_KILLS: %v", err)
		}
	}
	seed := rand.Uint64()
	if s := os.Getenv("PERCOLATOR_KILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("PERCOLATOR_KILL_SEED: %v", err)
		}
	}
	t.Logf("seed %d, %d kills (PERCOLATOR_KILL_SEED=%d PERCOLATOR_KILLS=%d to repeat)", seed, kills, seed, kills)
	r := rand.New(rand.NewPCG(seed, seed))
	var dir string
	ledgers := 0
	for k := range kills {
		if k%50 == 0 { // a fresh table now and then keeps the checks short
			dir = filepath.Join(t.TempDir(), "table")
		}
		after := time.Duration(20+r.IntN(400)) * time.Millisecond
		killOnce(t, dir, r.Uint64(), after)
		n, err := checkKilled(dir)
		ledgers = max(ledgers, n)
		if err != nil {
			t.Fatalf("after kill %d (%v after the table opened): %v\nrepeat with PERCOLATOR_KILL_SEED=%d PERCOLATOR_KILLS=%d", k, after, err, seed, kills)
		}
	}
	if ledgers == 0 {
		t.Fatal("no transfer committed before any kill: the test tested nothing")
	}
	t.Logf("%d transfers in the largest table", ledgers)
}

// killOnce starts a child on dir and kills it after it has run for d.
func killOnce(t *testing.T, dir string, seed uint64, d time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envKillChild+"="+dir, "PERCOLATOR_KILL_CHILD_SEED="+strconv.FormatUint(seed, 10))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "open\n" {
		cmd.Wait()
		t.Fatalf("child did not open the table: %q %v\n%s", buf, err, stderr.String())
	}
	time.Sleep(d)
	cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child ended before the kill: %v\n%s", err, stderr.String())
	}
}

// checkKilled opens the table in dir as the next process would and checks
// the invariants above. It returns how many transfers the table holds.
func checkKilled(dir string) (int, error) {
	ctx := context.Background()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	db, err := percolator.Open(ctx, st, percolator.Options{})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if n, err := percolator.CountLocks(db); err != nil || n != 0 {
		return 0, fmt.Errorf("%d locks left after Open (%v)", n, err)
	}
	ledgers := 0
	err = db.View(ctx, func(tx *percolator.Tx) error {
		total := killAccounts * killInitial
		cells := map[string]bool{} // "row t:ID"
		err := tx.Scan(ctx, "acct/", "acct0", "", func(row, col string, v []byte) bool {
			switch {
			case col == "bal":
				n, _ := strconv.Atoi(string(v))
				total -= killInitial - n
			case strings.HasPrefix(col, "t:"):
				cells[row+" "+col] = true
			}
			return true
		})
		if err != nil {
			return err
		}
		if total != killAccounts*killInitial {
			return fmt.Errorf("bank total %d, want %d: a transfer is half there", total, killAccounts*killInitial)
		}
		var problems []string
		err = tx.Scan(ctx, "ledger/", "ledger0", "rows", func(row, col string, v []byte) bool {
			ledgers++
			id := strings.TrimPrefix(row, "ledger/")
			for _, acct := range strings.Split(string(v), ",") {
				if !cells[acct+" t:"+id] {
					problems = append(problems, fmt.Sprintf("%s lists %s, which lacks t:%s", row, acct, id))
				}
				delete(cells, acct+" t:"+id)
			}
			return len(problems) < 10
		})
		if err != nil {
			return err
		}
		for c := range cells {
			if len(problems) < 20 {
				problems = append(problems, fmt.Sprintf("%s has no ledger row", c))
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("transactions not whole:\n  %s", strings.Join(problems, "\n  "))
		}
		return nil
	})
	return ledgers, err
}
