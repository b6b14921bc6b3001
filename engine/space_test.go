//go:build linux

package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/diskspace"
	"github.com/caffeine-go/caffeine/internal/diskspace/diskspacetest"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestRunStopsOnFullDisk fills the engine's table on a 64 MiB tmpfs
// while it runs: Run returns the table's ErrDiskFull, naming the
// directory, instead of running on with every write failing; Open on the
// still-full disk fails the same way; once space is freed every committed
// write is there.
func TestRunStopsOnFullDisk(t *testing.T) {
	mnt := t.TempDir()
	err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m")
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("mount tmpfs on %s: %v: the disk-full test needs root (CAP_SYS_ADMIN) to mount a small file system", mnt, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "data")
	// 1 MiB memtables and the reserve they need (about 14 MiB).
	cfg := Config{Dir: dir, CacheBytes: 3 << 20, DiskReserve: 1, GCInterval: -1}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()

	value := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 16000) }
	row := func(i int) string { return fmt.Sprintf("http://site.test/%d", i) }
	var n int // transactions committed
	for ; ; n++ {
		err = e.DB.Update(ctx, func(tx *percolator.Tx) error { return tx.Set(row(n), webtable.ExportLast, value(n)) })
		if err != nil {
			break
		}
	}
	if !errors.Is(err, diskspace.ErrFull) {
		t.Fatalf("write %d: %v, want a full disk", n, err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, badger.ErrDiskFull) || !strings.Contains(err.Error(), dir+" has ") {
			t.Fatalf("Run = %v, want the table's ErrDiskFull naming %s", err, dir)
		}
		t.Logf("%d writes committed; Run: %v", n, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run goes on on a full disk")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Closing gives back the space of the memtables' files: the rest of
	// the disk taken, as by another process, before the restart.
	filler := filepath.Join(mnt, "filler")
	diskspacetest.Fill(t, filler)
	if _, err := Open(context.Background(), cfg); !errors.Is(err, diskspace.ErrFull) {
		t.Fatalf("Open on the full disk: %v, want ErrFull", err)
	}
	for _, f := range []string{ballast, filler} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	e, err = Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := range n {
		err := e.DB.View(context.Background(), func(tx *percolator.Tx) error {
			v, err := tx.Get(context.Background(), row(i), webtable.ExportLast)
			if err == nil && !bytes.Equal(v, value(i)) {
				err = fmt.Errorf("holds %.20q…", v)
			}
			return err
		})
		if err != nil {
			t.Fatalf("committed write %d of %d after restart: %v", i, n, err)
		}
	}
}
