//go:build !linux

package badger

import "unsafe"

// adviseHuge does nothing: huge pages are only asked for on Linux.
func adviseHuge(p unsafe.Pointer, n uintptr) {}
