//go:build !linux

package emulator

import "syscall"

// ChildAttr returns the attributes of a child process that must not
// outlive the process starting it; outside Linux there are none.
func ChildAttr() *syscall.SysProcAttr { return nil }
