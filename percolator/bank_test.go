package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// The bank: accounts are cells, ten to a row, so most transfers span two
// rows (two-phase commit) and some stay in one (one-phase commit). Every
// transfer keeps the total; snapshot readers must always see it exact, even
// while transfers are abandoned at every step of commit.
const (
	bankAccounts = 1000
	bankInitial  = 100
	bankPerRow   = 10
)

func account(i int) (row, col string) {
	return fmt.Sprintf("bank/%03d", i/bankPerRow), fmt.Sprintf("acct%04d", i)
}

func TestBankTransfer(t *testing.T) { runBank(t, 1500*time.Millisecond) }

func TestBankTransferLong(t *testing.T) {
	if testing.Short() {
		t.Skip("long run; -short skips it")
	}
	runBank(t, 20*time.Second)
}

func runBank(t *testing.T, d time.Duration) { runBankOn(t, openDB(t, percolator.Options{}), d) }

// runBankOn runs the bank on db for d.
func runBankOn(t *testing.T, db *percolator.DB, d time.Duration) {
	ctx := context.Background()

	for base := 0; base < bankAccounts; base += 100 {
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			for i := base; i < base+100; i++ {
				row, col := account(i)
				if err := tx.Set(row, col, []byte(strconv.Itoa(bankInitial))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	var (
		stop                                atomic.Bool
		commits, conflicts, crashes, checks atomic.Int64
		wg                                  sync.WaitGroup
		failed                              = make(chan error, 64)
	)
	fail := func(err error) {
		select {
		case failed <- err:
		default:
		}
		stop.Store(true)
	}
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 42))
			for !stop.Load() {
				err := transfer(ctx, db, r)
				switch {
				case err == nil:
					commits.Add(1)
				case errors.Is(err, percolator.ErrCrashed):
					crashes.Add(1)
				case errors.Is(err, percolator.ErrConflict), errors.Is(err, percolator.ErrLocked):
					conflicts.Add(1)
				default:
					fail(fmt.Errorf("transfer: %w", err))
				}
			}
		}()
	}
	for rd := 0; rd < 4; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				total, n, err := bankTotal(ctx, db, rd%2 == 0)
				if err != nil {
					fail(fmt.Errorf("read: %w", err))
					return
				}
				if total != bankAccounts*bankInitial || n != bankAccounts {
					fail(fmt.Errorf("snapshot saw total %d over %d accounts, want %d over %d", total, n, bankAccounts*bankInitial, bankAccounts))
					return
				}
				checks.Add(1)
			}
		}()
	}
	// Run for d, and on while too little happened to prove anything (a
	// loaded machine, a store of round trips), up to a minute.
	enough := func() bool { return commits.Load() >= 50 && crashes.Load() >= 5 && checks.Load() >= 4 }
	deadline := time.Now().Add(max(d, time.Minute))
	time.Sleep(d)
	for !stop.Load() && !enough() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Fatal(err)
	}

	// Later transactions clean up after every abandoned one.
	total, n, err := bankTotal(ctx, db, true)
	if err != nil {
		t.Fatal(err)
	}
	if total != bankAccounts*bankInitial || n != bankAccounts {
		t.Fatalf("final total %d over %d accounts", total, n)
	}
	if locks, err := percolator.CountLocks(db); err != nil || locks != 0 {
		t.Fatalf("%d locks left after a full read (err %v)", locks, err)
	}
	t.Logf("%d transfers committed, %d conflicted, %d abandoned mid-commit; %d snapshot checks", commits.Load(), conflicts.Load(), crashes.Load(), checks.Load())
	if !enough() {
		t.Fatalf("too little happened to prove anything")
	}
}

// transfer moves a random amount between two random accounts; one in ten is
// abandoned at a random step of its commit.
func transfer(ctx context.Context, db *percolator.DB, r *rand.Rand) error {
	a, b := r.IntN(bankAccounts), r.IntN(bankAccounts)
	for b == a {
		b = r.IntN(bankAccounts)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if r.IntN(10) == 0 {
		at := percolator.CrashPoint(1 + r.IntN(5))
		percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == at })
	}
	ra, ca := account(a)
	rb, cb := account(b)
	va, err := readInt(ctx, tx, ra, ca)
	if err != nil {
		return err
	}
	vb, err := readInt(ctx, tx, rb, cb)
	if err != nil {
		return err
	}
	amt := r.IntN(20)
	tx.Set(ra, ca, []byte(strconv.Itoa(va-amt)))
	tx.Set(rb, cb, []byte(strconv.Itoa(vb+amt)))
	return tx.Commit(ctx)
}

func readInt(ctx context.Context, tx *percolator.Tx, row, col string) (int, error) {
	v, err := tx.Get(ctx, row, col)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, fmt.Errorf("account %s %s missing", row, col)
	}
	return strconv.Atoi(string(v))
}

// bankTotal sums all balances in one snapshot, by a scan or by point reads.
func bankTotal(ctx context.Context, db *percolator.DB, scan bool) (total, n int, err error) {
	err = db.View(ctx, func(tx *percolator.Tx) error {
		if scan {
			var convErr error
			err := tx.Scan(ctx, "bank/", "bank0", "acct", func(_, _ string, v []byte) bool {
				x, err := strconv.Atoi(string(v))
				if err != nil {
					convErr = err
					return false
				}
				total += x
				n++
				return true
			})
			if err != nil {
				return err
			}
			return convErr
		}
		for i := 0; i < bankAccounts; i++ {
			row, col := account(i)
			x, err := readInt(ctx, tx, row, col)
			if err != nil {
				return err
			}
			total += x
			n++
		}
		return nil
	})
	return total, n, err
}
