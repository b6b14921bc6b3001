package diskspace

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFree(t *testing.T) {
	dir := t.TempDir()
	n, err := Free(dir)
	if err != nil || n <= 0 {
		t.Fatalf("Free(%s) = %d, %v; want a positive size", dir, n, err)
	}
	// A directory not made yet: its nearest existing ancestor's.
	m, err := Free(filepath.Join(dir, "a", "b"))
	if err != nil || m <= 0 {
		t.Fatalf("Free of a missing directory = %d, %v; want its parent's", m, err)
	}
}

func TestGuard(t *testing.T) {
	dir := t.TempDir()
	errTest := fmt.Errorf("test: %w", ErrFull)
	_, err := Start(Options{Dir: dir, Reserve: math.MaxInt64, Err: errTest})
	if !errors.Is(err, errTest) || !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), dir+" has ") {
		t.Fatalf("Start with an impossible reserve: %v; want the full error naming %s", err, dir)
	}

	g, err := Start(Options{Dir: dir, Reserve: 1, Period: time.Hour, Step: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Err(); err != nil {
		t.Fatalf("Err with room: %v", err)
	}
	if err := g.Need(math.MaxInt64 / 2); !errors.Is(err, ErrFull) {
		t.Fatalf("Need(huge) = %v; want ErrFull", err)
	}
	// Need leaves the state alone.
	if err := g.Err(); err != nil {
		t.Fatalf("Err after Need: %v", err)
	}
	// The reserve grows past the free space: the next look, made due by
	// writes, reports the disk full.
	g.mu.Lock()
	g.opt.Reserve = math.MaxInt64
	g.mu.Unlock()
	g.Wrote(100)
	for deadline := time.Now().Add(10 * time.Second); g.Err() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no look after Step bytes written")
		}
	}
	if err := g.Err(); !errors.Is(err, ErrFull) {
		t.Fatalf("Err = %v; want ErrFull", err)
	}
	// Check looks at once: with the reserve back, the disk has room.
	g.mu.Lock()
	g.opt.Reserve = 1
	g.mu.Unlock()
	if err := g.Check(); err != nil {
		t.Fatalf("Check with room: %v", err)
	}
}
