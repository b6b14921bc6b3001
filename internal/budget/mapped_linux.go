package budget

import (
	"errors"

	"golang.org/x/sys/unix"
)

// pageOut asks the kernel to page out [start, end) (MADV_PAGEOUT). A
// range unmapped meanwhile (ENOMEM) is no error; a kernel that does not
// know MADV_PAGEOUT (EINVAL) is.
func pageOut(start, end uintptr) error {
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_PAGEOUT)
	if errno == 0 || errors.Is(errno, unix.ENOMEM) || errors.Is(errno, unix.EAGAIN) {
		return nil
	}
	return errno
}

// drop drops the resident pages of [start, end) from the page tables
// (MADV_DONTNEED): only for a range a Holder holds (see Holder). A
// shared file mapping loses nothing: the page cache keeps the pages,
// dirty ones for writeback.
func drop(start, end uintptr) error {
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_DONTNEED)
	if errno == 0 || errors.Is(errno, unix.EAGAIN) {
		return nil
	}
	return errno
}

const canTrim = true
