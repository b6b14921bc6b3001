package budget

import (
	"path/filepath"
	"sync"
)

// A Holder maps files (the Badger table's tables) and can hold their
// mappings in place for a while. The trimmer drops the resident pages of
// a held mapping from the page tables (MADV_DONTNEED: the page cache
// keeps them, dirty ones included), which costs the kernel one TLB
// flush for the whole range, where paging out (MADV_PAGEOUT) unmaps and
// flushes page by page: with the process busy on both cores, 800 MiB
// took the one about a second and the other ten (BenchmarkTrimBusy).
// Dropping is only safe on a mapping known to stay where it is until
// the call returns: on a range unmapped meanwhile and mapped again
// anonymous (the Go runtime's memory), MADV_DONTNEED would zero it.
// So the trimmer drops only what a Holder holds, and pages out the rest.
type Holder interface {
	// HoldMapped returns files whose mappings stay in place, neither
	// unmapped nor moved, until release is called.
	HoldMapped() (files []string, release func())
}

// holders are the Holders registered in this process.
var holders struct {
	sync.Mutex
	next int
	m    map[int]Holder
}

// RegisterHolder has every trim of this process hold h's mappings and
// drop their pages instead of paging them out, until unregister is
// called (before h unmaps its files for good: when it closes).
func RegisterHolder(h Holder) (unregister func()) {
	holders.Lock()
	defer holders.Unlock()
	if holders.m == nil {
		holders.m = make(map[int]Holder)
	}
	id := holders.next
	holders.next++
	holders.m[id] = h
	return func() {
		holders.Lock()
		defer holders.Unlock()
		delete(holders.m, id)
	}
}

// holdMapped holds the mappings of every registered Holder and returns
// their files, named as /proc names them (the directory's symlinks
// resolved), until release. Holders stay registered meanwhile: a Holder
// unregisters before it closes, so none closes while held.
func holdMapped() (files map[string]bool, release func()) {
	holders.Lock()
	files = make(map[string]bool)
	var releases []func()
	resolved := make(map[string]string) // directory → as /proc names it
	for _, h := range holders.m {
		fs, rel := h.HoldMapped()
		releases = append(releases, rel)
		for _, f := range fs {
			dir := filepath.Dir(f)
			r, ok := resolved[dir]
			if !ok {
				r = dir
				if abs, err := filepath.Abs(dir); err == nil {
					r = abs
				}
				if e, err := filepath.EvalSymlinks(r); err == nil {
					r = e
				}
				resolved[dir] = r
			}
			files[filepath.Join(r, filepath.Base(f))] = true
		}
	}
	return files, func() {
		for _, rel := range releases {
			rel()
		}
		holders.Unlock()
	}
}
