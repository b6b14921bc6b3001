package bigtable_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// dutyChild holds the duty "test" and answers "held" with yes or no.
func dutyChild(ctx context.Context, db *percolator.DB) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := db.Duty("test")
	done := make(chan struct{})
	go func() { defer close(done); d.Hold(ctx) }()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "held":
			if d.Held() {
				fmt.Println("yes")
			} else {
				fmt.Println("no")
			}
		case "quit":
			cancel()
			<-done
			fmt.Println("bye")
			return nil
		}
	}
	cancel()
	<-done
	return in.Err()
}

// TestDutyProcesses: three processes compete for a duty on one emulator
// table; one holds it, never two at once; when the holder is killed (no
// release), another takes it over once its lease lapsed, and when that
// one quits cleanly, the last at its next look.
func TestDutyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	table := newTable(t)
	var cs []*child
	for range 3 {
		cs = append(cs, startChild(t, "duty", table))
	}
	dead := map[int]bool{}
	// holder returns the one live child holding the duty, -1 if none,
	// failing t if two do.
	holder := func() int {
		t.Helper()
		who := -1
		for i, c := range cs {
			if dead[i] {
				continue
			}
			if c.ask(t, "held") == "yes" {
				if who >= 0 {
					t.Fatalf("processes %d and %d both hold the duty", who, i)
				}
				who = i
			}
		}
		return who
	}
	// Lapse bound: LockTTL + ClockSkew, a standby's look (LockTTL/2),
	// and slack for a loaded machine.
	lapse := processOptions.LockTTL + processOptions.ClockSkew + processOptions.LockTTL/2 + 2*time.Second
	wait := func(limit time.Duration) (int, time.Duration) {
		t.Helper()
		began := time.Now()
		for {
			if who := holder(); who >= 0 {
				return who, time.Since(began)
			}
			if time.Since(began) > limit {
				t.Fatalf("no process took the duty in %v", limit)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first, _ := wait(lapse)
	cs[first].cmd.Process.Kill()
	cs[first].cmd.Wait()
	dead[first] = true
	second, took := wait(2 * lapse)
	t.Logf("process %d killed; process %d took over in %v", first, second, took.Round(time.Millisecond))
	if took > lapse {
		t.Errorf("take-over after a kill took %v, want under %v", took, lapse)
	}
	// Held for a while, by the same one.
	for range 20 {
		if who := holder(); who != second {
			t.Fatalf("holder %d, then %d", second, who)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := cs[second].ask(t, "quit"); got != "bye" {
		t.Fatalf("quit: %q", got)
	}
	cs[second].cmd.Wait()
	dead[second] = true
	third, took := wait(2 * lapse)
	t.Logf("process %d quit; process %d took over in %v", second, third, took.Round(time.Millisecond))
	if took > processOptions.LockTTL/2+time.Second {
		t.Errorf("take-over after a clean quit took %v, want a standby's look (%v)", took, processOptions.LockTTL/2)
	}
}
