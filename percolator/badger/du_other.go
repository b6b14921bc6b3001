//go:build !unix

package badger

import "os"

// diskUsage returns the size of a file.
func diskUsage(fi os.FileInfo) int64 { return fi.Size() }
