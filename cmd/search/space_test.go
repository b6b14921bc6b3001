//go:build linux

package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// On a disk with less free space than the table's reserve, search exits
// with 1 and one line naming the directory and the space needed, rather
// than crash in Badger once the disk is full.
func TestFullDiskAtStart(t *testing.T) {
	mnt := t.TempDir()
	err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m")
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("mount tmpfs on %s: %v: the disk-full test needs root (CAP_SYS_ADMIN) to mount a small file system", mnt, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dir := filepath.Join(mnt, "data")
	var out strings.Builder
	code := run(context.Background(), []string{"-data", dir, "-addr", "127.0.0.1:0"}, &out, nil)
	want := "search: badger: disk full: " + dir + " has 64 MiB free, needs at least "
	t.Logf("exit %d: %s", code, out.String())
	if code != 1 || !strings.Contains(out.String(), want) {
		t.Fatalf("exit %d, output:\n%s\nwant exit 1 and %q", code, out.String(), want)
	}
}
