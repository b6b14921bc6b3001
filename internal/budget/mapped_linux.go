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

const canTrim = true
