// Package diskspacetest helps tests fill a file system.
package diskspacetest

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// Fill writes path until the file system has no room left, as another
// process would.
func Fill(t testing.TB, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<16)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
