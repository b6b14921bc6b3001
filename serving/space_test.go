//go:build linux

package serving

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/caffeine-go/caffeine/internal/diskspace"
	"github.com/caffeine-go/caffeine/internal/diskspace/diskspacetest"
)

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

// fillIndex applies batches of 20 random documents to ix until Apply
// fails, and returns the rows acknowledged and the error.
func fillIndex(t *testing.T, ix *Index, r *rand.Rand) ([]string, error) {
	t.Helper()
	var rows []string
	for i := 0; ; i += 20 {
		var us []Update
		for j := i; j < i+20; j++ {
			var text strings.Builder
			for range 300 {
				fmt.Fprintf(&text, "w%d ", r.IntN(100_000))
			}
			row := fmt.Sprintf("row%06d", j)
			us = append(us, Update{Export: upsert(uint64(j+1), row, fmt.Sprintf("http://x.example/%d", j), "common", text.String(), 0.1)})
		}
		if _, err := ix.Apply(us); err != nil {
			return rows, err
		}
		for _, u := range us {
			rows = append(rows, u.Row)
		}
	}
}

// checkIndexed checks that ix holds every row.
func checkIndexed(t *testing.T, ix *Index, rows []string) {
	t.Helper()
	for _, row := range rows {
		if _, ok, err := ix.Version(row); err != nil || !ok {
			t.Fatalf("row %s acknowledged but not in the index (%v)", row, err)
		}
	}
}

// TestIndexDiskFull fills a 12 MiB tmpfs with an index: Apply refuses
// with ErrDiskFull naming the directory before Bleve meets the end of the
// disk; searches go on; reopening on the full disk fails the same way;
// once space is freed every acknowledged document is there and batches
// are applied again.
func TestIndexDiskFull(t *testing.T) {
	mnt := t.TempDir()
	mountTmpfs(t, mnt, 12<<20)
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "index")
	opt := Options{DiskReserve: 4 << 20}
	ix, err := OpenIndex(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rows, err := fillIndex(t, ix, rand.New(rand.NewPCG(seed, 1)))
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, diskspace.ErrFull) || !strings.Contains(err.Error(), dir+" has ") {
		ix.Close()
		t.Fatalf("Apply on a filling disk: %v; want ErrDiskFull naming %s", err, dir)
	}
	t.Logf("%d documents acknowledged; then %v", len(rows), err)
	if len(rows) < 100 {
		t.Fatalf("only %d documents before the disk was full: the test tested little", len(rows))
	}
	if n, err := ix.Count(); err != nil || n != len(rows) {
		t.Errorf("Count = %d, %v; want %d", n, err, len(rows))
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	// The rest of the disk taken, as by another process.
	filler := filepath.Join(mnt, "filler")
	diskspacetest.Fill(t, filler)
	if _, err := OpenIndex(dir, opt); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("OpenIndex on the full disk: %v; want ErrDiskFull", err)
	}

	for _, f := range []string{filler, ballast} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	ix, err = OpenIndex(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkIndexed(t, ix, rows)
	apply(t, ix, upsert(1e9, "after", "http://x.example/after", "after", "after", 0.1))
}

// TestIndexBrokenBatch: without the reserve, Bleve meets the full disk
// in a batch. Apply returns the failure as ErrIndexBroken, and every
// later Apply too (the next batch used to panic in Bleve on the segment
// the failed one left). Reopened once space is freed, the index has every
// acknowledged document.
func TestIndexBrokenBatch(t *testing.T) {
	mnt := t.TempDir()
	mountTmpfs(t, mnt, 6<<20)
	dir := filepath.Join(mnt, "index")
	ix, err := OpenIndex(dir, Options{DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	rows, err := fillIndex(t, ix, r)
	if !errors.Is(err, ErrIndexBroken) || !strings.Contains(err.Error(), "no space left on device") {
		ix.Close()
		t.Fatalf("Apply on a full disk without a reserve: %v; want ErrIndexBroken with ENOSPC", err)
	}
	t.Logf("%d documents acknowledged; then %v", len(rows), err)
	for range 3 {
		if _, err := fillIndex(t, ix, r); !errors.Is(err, ErrIndexBroken) {
			t.Fatalf("Apply after a failed batch: %v; want ErrIndexBroken", err)
		}
	}
	if err := ix.Health(); !errors.Is(err, ErrIndexBroken) {
		t.Errorf("Health = %v; want ErrIndexBroken", err)
	}
	ix.Close()

	// Space freed: what the failed batch wrote goes with the restart.
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=64m"); err != nil {
		t.Fatalf("grow the tmpfs: %v", err)
	}
	ix, err = OpenIndex(dir, Options{DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkIndexed(t, ix, rows)
	apply(t, ix, upsert(1e9, "after", "http://x.example/after", "after", "after", 0.1))
}
