//go:build !linux

package budget

import "errors"

func pageOut(start, end uintptr) error { return errors.ErrUnsupported }

func drop(start, end uintptr) error { return errors.ErrUnsupported }

const canTrim = false
