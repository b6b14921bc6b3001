//go:build unix

package badger

import (
	"os"
	"syscall"
)

// diskUsage returns the disk space a file occupies, which for Badger's
// sparse, preallocated files is much less than its size.
func diskUsage(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
