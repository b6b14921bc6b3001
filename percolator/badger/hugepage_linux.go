package badger

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the n bytes at p, on the Go heap,
// with transparent huge pages. It is only advice: where they are off, or
// the memory is already backed by small pages, nothing changes, or the
// kernel merges the pages later.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	syscall.Madvise(unsafe.Slice((*byte)(p), n), syscall.MADV_HUGEPAGE)
}
