package badger

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// spareFiles returns how many more files the process may open, and its
// limit; ok is false when that is unknown.
func spareFiles() (spare, limit int, ok bool) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0, 0, false
	}
	fds, err := os.ReadDir("/proc/self/fd")
	switch {
	case errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE):
		return 0, int(rl.Cur), true
	case err != nil:
		return 0, 0, false
	}
	return int(rl.Cur) - len(fds), int(rl.Cur), true
}
