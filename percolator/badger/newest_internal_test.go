package badger

import (
	"testing"
	"unsafe"
)

// The newest-version caches start at a huge page boundary, so that their
// 4 MB take two huge pages, lie inside their allocation, and start empty;
// a bucket is two cache lines.
func TestNewVers(t *testing.T) {
	if got := unsafe.Sizeof(verBucket{}); got != 128 {
		t.Fatalf("a bucket takes %d bytes, want two 64-byte lines", got)
	}
	vers := newVers()
	if p := uintptr(unsafe.Pointer(vers)); p%hugePage != 0 {
		t.Fatalf("caches at %#x: not aligned to %d", p, hugePage)
	}
	for _, vc := range []*verCache{&vers[0], &vers[nStripes-1]} {
		for b := range vc {
			for i := range vc[b] {
				if vc[b][i].tag.Load() != 0 || vc[b][i].ver.Load() != 0 {
					t.Fatalf("a new cache holds bucket %d slot %d", b, i)
				}
			}
		}
		vc.set(newVerHashes(), []byte("key"), 7)
	}
}
