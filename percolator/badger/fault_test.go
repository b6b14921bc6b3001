//go:build linux

package badger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/caffeine-go/caffeine/internal/diskspace"
	"github.com/caffeine-go/caffeine/internal/diskspace/diskspacetest"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

// The fault tests run the store in a child process (this test binary with
// envFaultChild set), since the faults they provoke, exhausted file
// descriptors and a full disk, would otherwise hit every test running
// beside them, and a store that failed them could take the process down.
const envFaultChild = "BADGER_FAULT_CHILD" // "mode dir"

func TestMain(m *testing.M) {
	if arg := os.Getenv(envFaultChild); arg != "" {
		mode, dir, _ := strings.Cut(arg, " ")
		if err := faultChild(mode, dir); err != nil {
			fmt.Fprintln(os.Stderr, "fault child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild runs the fault child mode on dir and returns its stdout. A
// child that fails or dies by a signal fails the test.
func runChild(t *testing.T, mode, dir string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envFaultChild+"="+mode+" "+dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child %s: %v\nstdout:\n%s\nstderr:\n%s", mode, err, stdout.String(), tail(stderr.String(), 4000))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func faultChild(mode, dir string) error {
	switch mode {
	case "compact-emfile":
		return compactEMFILEChild(dir)
	case "fill":
		return fillChild(dir)
	case "open-full":
		return openFullChild(dir)
	case "verify":
		return verifyChild(dir) // "N dir"
	}
	return fmt.Errorf("unknown mode %q", mode)
}

func faultRow(i int) string { return fmt.Sprintf("row%06d", i) }

func faultValue(i int) string {
	if i%2 == 0 {
		return strings.Repeat(strconv.Itoa(i%10), 16000) // a blob, in the value log
	}
	return "v" + strconv.Itoa(i)
}

func putRow(ctx context.Context, s *badger.Store, i int) error { return putFaultRows(ctx, s, i, i+1) }

// putFaultRows writes rows from..to-1 in one call.
func putFaultRows(ctx context.Context, s *badger.Store, from, to int) error {
	var rows []percolator.RowMutation
	for i := from; i < to; i++ {
		rows = append(rows, percolator.RowMutation{Row: faultRow(i), Mutations: []percolator.Mutation{set("d", "c", 5, faultValue(i))}})
	}
	return s.MutateRows(ctx, rows)
}

// checkRows checks that rows 0..n-1 hold their values.
func checkRows(ctx context.Context, s *badger.Store, n int) error {
	for i := range n {
		cs, err := s.ReadRow(ctx, faultRow(i), percolator.Filter{Family: "d"})
		if err != nil {
			return err
		}
		if len(cs) != 1 || string(cs[0].Value) != faultValue(i) {
			return fmt.Errorf("row %d of %d: %d cells (%.20q…), want its value", i, n, len(cs), fmt.Sprint(cs))
		}
	}
	return nil
}

// exhaustFiles lowers the soft descriptor limit to 512 and opens
// /dev/null until no descriptor is left; release closes them and restores
// the limit.
func exhaustFiles() (release func(), err error) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		return nil, err
	}
	lim := old
	lim.Cur = min(old.Cur, 512)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil, err
	}
	var fds []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		fds = append(fds, f)
	}
	return func() {
		for _, f := range fds {
			f.Close()
		}
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}, nil
}

// TestCompactWithoutFiles: with no file descriptor left, Compact does not
// start a memtable flush it could not finish; forced to (the margin
// checked before it set to 0), the flush fails midway inside Badger and
// the store is broken: every later call returns ErrBroken, none touches
// Badger (before, the next one dereferenced a released memtable), and
// Close returns. Everything written before is there after a restart.
func TestCompactWithoutFiles(t *testing.T) {
	dir := t.TempDir()
	out := runChild(t, "compact-emfile", dir)
	t.Logf("child:\n%s", out)
	ctx := context.Background()
	s := open(t, dir, badger.Options{})
	if err := checkRows(ctx, s, 200); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if cs := read(t, s, "after", percolator.Filter{Family: "d"}); len(cs) != 0 {
		t.Errorf("a write refused by the broken store is there: %v", cs)
	}
}

func compactEMFILEChild(dir string) error {
	ctx := context.Background()
	s, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return err
	}
	if err := s.EnsureFamilies(ctx, storetest.Families); err != nil {
		return err
	}
	for i := range 100 {
		if err := putRow(ctx, s, i); err != nil {
			return err
		}
	}

	// The margin: nothing flushed, the store goes on.
	release, err := exhaustFiles()
	if err != nil {
		return err
	}
	err = s.Compact(ctx, 1)
	release()
	if err == nil || errors.Is(err, badger.ErrBroken) || !strings.Contains(err.Error(), "file descriptors free") {
		return fmt.Errorf("Compact with no descriptor left: %v, want the margin's error", err)
	}
	fmt.Println("margin:", err)
	for i := 100; i < 200; i++ {
		if err := putRow(ctx, s, i); err != nil {
			return fmt.Errorf("write after the margin's refusal: %w", err)
		}
	}
	if err := checkRows(ctx, s, 200); err != nil {
		return fmt.Errorf("after the margin's refusal: %w", err)
	}

	// No margin: the flush fails inside Badger.
	defer badger.SetMinSpareFiles(0)()
	release, err = exhaustFiles()
	if err != nil {
		return err
	}
	err = s.Compact(ctx, 2)
	release()
	if !errors.Is(err, badger.ErrBroken) || !strings.Contains(err.Error(), "too many open files") {
		return fmt.Errorf("Compact failing midway: %v, want ErrBroken with the cause", err)
	}
	fmt.Println("broken:", err)
	calls := map[string]error{
		"Health":  s.Health(),
		"Compact": s.Compact(ctx, 3),
		"MutateRows": s.MutateRows(ctx, []percolator.RowMutation{{Row: "after",
			Mutations: []percolator.Mutation{set("d", "c", 6, "x")}}}),
		"EnsureFamilies": s.EnsureFamilies(ctx, []percolator.Family{{Name: "new"}}),
		"ReadRows":       s.ReadRows(ctx, "", "", func(string, []percolator.Cell) bool { return true }),
	}
	_, calls["ReadRow"] = s.ReadRow(ctx, faultRow(1))
	_, calls["CheckAndMutateRow"] = s.CheckAndMutateRow(ctx, "after", nil, nil, []percolator.Mutation{set("d", "c", 6, "x")})
	_, calls["Increment"] = s.Increment(ctx, "after", "m", "n", 1)
	for name, err := range calls {
		if !errors.Is(err, badger.ErrBroken) {
			return fmt.Errorf("%s on the broken store: %v, want ErrBroken", name, err)
		}
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("Close of the broken store: %w", err)
	}
	return nil
}

// mountTmpfs mounts a tmpfs of size bytes on dir until the test ends, or
// skips the test where mounting is not permitted.
func mountTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size))
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("mount tmpfs on %s: %v: the disk-full test needs root (CAP_SYS_ADMIN) to mount a small file system", dir, err)
	}
	if err != nil {
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// The disk-full tests' store: 1 MiB memtables, and the reserve Badger
// needs for them (about 14 MiB) rather than DefaultDiskReserve.
var fullOpts = badger.Options{CacheBytes: 3 << 20, DiskReserve: 1}

// TestDiskFull fills a 64 MiB tmpfs with a store: writes are refused with
// ErrDiskFull naming the directory before Badger meets the end of the
// disk (which it answers with SIGBUS); reads go on; a restart on the
// still-full disk fails at Open with the same error; once space is freed
// every acknowledged write is there and writes are accepted again.
func TestDiskFull(t *testing.T) {
	mnt := t.TempDir()
	mountTmpfs(t, mnt, 64<<20)
	dir := filepath.Join(mnt, "table")
	// Space to free at the end, as an operator would.
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}

	out := runChild(t, "fill", dir)
	t.Logf("fill:\n%s", out)
	var n int
	if _, err := fmt.Sscanf(out, "acknowledged %d", &n); err != nil || n < 500 {
		t.Fatalf("the child acknowledged %d writes (%v): too few to have tested anything", n, err)
	}

	// Take the rest of the disk, as another process would.
	filler := filepath.Join(mnt, "filler")
	diskspacetest.Fill(t, filler)
	out = runChild(t, "open-full", dir)
	t.Logf("open on a full disk:\n%s", out)

	for _, f := range []string{filler, ballast} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	out = runChild(t, "verify", strconv.Itoa(n)+" "+dir)
	t.Logf("verify:\n%s", out)
}

func fillChild(dir string) error {
	ctx := context.Background()
	s, err := badger.Open(dir, fullOpts)
	if err != nil {
		return err
	}
	if err := s.EnsureFamilies(ctx, storetest.Families); err != nil {
		return err
	}
	var n int // rows acknowledged
	for ; ; n += 10 {
		if err = putFaultRows(ctx, s, n, n+10); err != nil {
			break
		}
	}
	if !errors.Is(err, badger.ErrDiskFull) || !errors.Is(err, diskspace.ErrFull) {
		return fmt.Errorf("write %d: %v, want ErrDiskFull", n, err)
	}
	if !strings.Contains(err.Error(), dir+" has ") || !strings.Contains(err.Error(), "MiB free, needs at least") {
		return fmt.Errorf("the error does not name the directory and the space needed: %v", err)
	}
	fmt.Printf("acknowledged %d\nrefused: %v\nreserve: %d MiB\n", n, err, s.DiskReserve()>>20)
	if err := putRow(ctx, s, n); !errors.Is(err, badger.ErrDiskFull) {
		return fmt.Errorf("a write after the refusal: %v, want ErrDiskFull", err)
	}
	if err := s.Health(); !errors.Is(err, badger.ErrDiskFull) {
		return fmt.Errorf("Health: %v, want ErrDiskFull", err)
	}
	if err := checkRows(ctx, s, n); err != nil {
		return fmt.Errorf("reads on the full disk: %w", err)
	}
	err = s.Compact(ctx, 1)
	fmt.Printf("compact: %v\n", err)
	if err != nil && !errors.Is(err, badger.ErrDiskFull) {
		return fmt.Errorf("Compact on the full disk: %w", err)
	}
	return s.Close()
}

func openFullChild(dir string) error {
	s, err := badger.Open(dir, fullOpts)
	if err == nil {
		s.Close()
		return errors.New("Open on a full disk succeeded")
	}
	if !errors.Is(err, badger.ErrDiskFull) || !strings.Contains(err.Error(), dir+" has ") {
		return fmt.Errorf("Open on a full disk: %v, want ErrDiskFull naming %s", err, dir)
	}
	fmt.Println("refused:", err)
	return nil
}

func verifyChild(arg string) error {
	ns, dir, _ := strings.Cut(arg, " ")
	n, _ := strconv.Atoi(ns)
	ctx := context.Background()
	s, err := badger.Open(dir, fullOpts)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := checkRows(ctx, s, n); err != nil {
		return err
	}
	if err := putRow(ctx, s, n); err != nil {
		return fmt.Errorf("a write once space is back: %w", err)
	}
	fmt.Printf("%d rows whole; writes accepted\n", n)
	return nil
}
