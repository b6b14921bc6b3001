package emulator

import "syscall"

// ChildAttr returns the attributes of a child process that must not
// outlive the process starting it (a test that times out and exits
// without its cleanups): on Linux, the kernel kills it then.
func ChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
