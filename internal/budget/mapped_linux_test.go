package budget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile writes size bytes of a pattern to dir/name, synced, maps it
// shared (writable if asked) and reads every page of it in. The
// mapping is unmapped at cleanup.
func mapFile(t *testing.T, dir, name string, size int, writable bool) []byte {
	t.Helper()
	path := filepath.Join(dir, name)
	data := pattern(size, 0)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	m, err := unix.Mmap(int(f.Fd()), 0, size, prot, unix.MAP_SHARED)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	for i := 0; i < len(m); i += os.Getpagesize() {
		sink += m[i]
	}
	return m
}

// sink keeps mapFile's reads from being optimized away.
var sink byte

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

// resident returns how many bytes of m are mapped in the page tables:
// the Rss of m's mapping in /proc/self/smaps, read here rather than by
// the trimmer's parser.
func resident(t *testing.T, m []byte) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	header := fmt.Sprintf("%x-", unsafe.Pointer(&m[0]))
	_, rest, ok := strings.Cut("\n"+string(b), "\n"+header)
	if !ok {
		t.Fatalf("no mapping at %s in /proc/self/smaps", header)
	}
	_, rest, ok = strings.Cut(rest, "\nRss:")
	if !ok {
		t.Fatal("no Rss in /proc/self/smaps")
	}
	kb, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	n, err := strconv.ParseInt(kb, 10, 64)
	if err != nil {
		t.Fatalf("Rss %q: %v", kb, err)
	}
	return n << 10
}

func skipWithoutPageOut(t *testing.T) {
	t.Helper()
	if err := pageOut(0, uintptr(os.Getpagesize())); errors.Is(err, unix.EINVAL) {
		t.Skip("this kernel has no MADV_PAGEOUT")
	}
}

// A trim pages out the mappings under the trimmed directory until they
// hold three quarters of the limit at most, leaves the others, and loses
// nothing: the clean mapping reads back the same, and what was written
// through a shared mapping and not yet synced is in the file after.
func TestTrimPagesOutMappedFiles(t *testing.T) {
	skipWithoutPageOut(t)
	data, elsewhere := t.TempDir(), t.TempDir()
	const mb = 1 << 20
	clean := mapFile(t, data, "table.sst", 48*mb, false)
	dirty := mapFile(t, data, "values.vlog", 16*mb, true)
	copy(dirty, pattern(len(dirty), 3))
	other := mapFile(t, elsewhere, "other.sst", 16*mb, false)
	if r := resident(t, clean); r < 40*mb {
		t.Fatalf("%d MiB of the 48 MiB mapping resident before the trim", r/mb)
	}

	tr := newTrimmer(16*mb, []string{data})
	paged, _, err := tr.trim(16 * mb)
	if err != nil {
		t.Fatal(err)
	}
	if r := resident(t, clean) + resident(t, dirty); r > 12*mb {
		t.Errorf("%d MiB of the data directory's mappings resident after the trim, want at most 12", r/mb)
	}
	if r := resident(t, other); r < 12*mb {
		t.Errorf("%d MiB of the 16 MiB mapping outside the data directory resident after the trim: it was paged out", r/mb)
	}
	if paged < 40*mb {
		t.Errorf("paged %d MiB; want at least 40", paged/mb)
	}
	if !bytes.Equal(clean, pattern(len(clean), 0)) {
		t.Error("the clean mapping reads back other bytes after the trim")
	}
	if !bytes.Equal(dirty, pattern(len(dirty), 3)) {
		t.Error("the written mapping reads back other bytes after the trim")
	}
	got, err := os.ReadFile(filepath.Join(data, "values.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, pattern(len(dirty), 3)) {
		t.Error("what was written through the mapping is not in the file after the trim")
	}
}

// Apply's trimmer brings the mapped files' resident pages back within
// the budget on its own, and a trim under the limit pages out nothing.
func TestApplyTrimsMappedFiles(t *testing.T) {
	skipWithoutPageOut(t)
	t.Setenv("GOMEMLIMIT", "1GiB") // the soft limit is not this test's
	data := t.TempDir()
	const mb = 1 << 20
	small := mapFile(t, data, "small.sst", 4*mb, false)
	tr := newTrimmer(16*mb, []string{data})
	if paged, _, err := tr.trim(16 * mb); err != nil || paged != 0 {
		t.Fatalf("a trim under the limit: %d bytes paged out, err %v", paged, err)
	}
	if r := resident(t, small); r < 3*mb {
		t.Fatalf("a trim under the limit paged out the mapping (%d MiB left)", r/mb)
	}

	b := &Budget{MB: 16}
	b.Apply(t.Context(), data)
	big := mapFile(t, data, "big.sst", 64*mb, false)
	deadline := time.Now().Add(5 * time.Second)
	for resident(t, big)+resident(t, small) > 16*mb {
		if time.Now().After(deadline) {
			t.Fatalf("%d MiB of the mappings still resident after 5 s, budget 16", (resident(t, big)+resident(t, small))/mb)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !bytes.Equal(big, pattern(len(big), 0)) {
		t.Error("the mapping reads back other bytes after the trim")
	}
	if st := b.Trims(); st.Trims == 0 || st.Paged == 0 {
		t.Errorf("Trims() = %+v after the trimmer paged out the mapping", st)
	}
}

// A trim pages out first the mappings whose pages were not used since
// the last trim, however many the others hold.
func TestTrimColdFirst(t *testing.T) {
	skipWithoutPageOut(t)
	data := t.TempDir()
	const mb = 1 << 20
	cold := mapFile(t, data, "old.sst", 16*mb, false)
	hot := mapFile(t, data, "new.sst", 48*mb, false)
	clearReferenced()
	for i := 0; i < len(hot); i += os.Getpagesize() {
		sink += hot[i]
	}
	tr := newTrimmer(64*mb, []string{data})
	if _, _, err := tr.trim(64 * mb); err != nil {
		t.Fatal(err)
	}
	if r := resident(t, cold); r > mb {
		t.Errorf("%d MiB of the mapping not used since the last trim still resident", r/mb)
	}
	if r := resident(t, hot); r < 40*mb {
		t.Errorf("the mapping used since the last trim was paged out (%d MiB left of 48) while paging out the other was enough", r/mb)
	}
}

// The mapped files may hold what the anonymous memory leaves of the
// budget: the budget bounds the resident size, not each part of it. (The
// anonymous size is the test's: under -race the process has hundreds of
// MiB of its own.)
func TestTrimLeavesTheAnonymousTheirShare(t *testing.T) {
	skipWithoutPageOut(t)
	data := t.TempDir()
	const mb = 1 << 20
	m := mapFile(t, data, "table.sst", 64*mb, false)
	tr := newTrimmer(64*mb, []string{data})
	tr.read = func() (int64, int64) {
		file, _ := rss()
		return file, 40 * mb
	}
	if err := tr.tick(); err != nil {
		t.Fatal(err)
	}
	st := tr.Stats()
	if r := resident(t, m); st.Trims != 1 || r > 24*mb {
		t.Errorf("%d trims, %d MiB of the mapping left, with 40 MiB of anonymous memory under a budget of 64; want 1 trim and 24 MiB at most", st.Trims, r/mb)
	}
	// The tick saw the mapping's 64 MiB where 24 (64 less 40) were
	// allowed, and paged out at least the 40 above.
	if st.Over < 32*mb || st.Paged < 32*mb || st.Slowest <= 0 {
		t.Errorf("stats after one trim: %+v; want about 40 MiB over, as many paged, a duration", st)
	}
	if got := tr.limit(tr.budget); got != tr.budget/4 {
		t.Errorf("limit with the whole budget anonymous = %d, want a quarter of the budget, %d", got, tr.budget/4)
	}
}

// The process's other file mappings (its binary and libraries, here a
// mapping outside the trimmed directory) are resident memory too: the
// mapped files may hold only what they and the anonymous memory leave
// of the budget.
func TestTrimCountsOtherFileMappings(t *testing.T) {
	skipWithoutPageOut(t)
	data, elsewhere := t.TempDir(), t.TempDir()
	const mb = 1 << 20
	var tables [][]byte
	for i := range 16 {
		tables = append(tables, mapFile(t, data, fmt.Sprintf("%06d.sst", i), 4*mb, false))
	}
	other := mapFile(t, elsewhere, "other.bin", 32*mb, false)
	tr := newTrimmer(64*mb, []string{data})
	tr.read = func() (int64, int64) {
		file, _ := rss()
		return file, 16 * mb
	}
	if err := tr.tick(); err != nil {
		t.Fatal(err)
	}
	var left int64
	for _, m := range tables {
		left += resident(t, m)
	}
	// 64 MiB less 16 anonymous and 32 (and more) of other mappings
	// leaves the tables their least share, 16 MiB, to be trimmed to 12.
	if left > 16*mb {
		t.Errorf("%d MiB of the tables resident after a trim, with 16 MiB anonymous and 32 MiB of other file mappings under a budget of 64; want 16 at most", left/mb)
	}
	if r := resident(t, other); r < 28*mb {
		t.Errorf("the mapping outside the trimmed directory was paged out (%d MiB left of 32)", r/mb)
	}
}

// A trim starts before the mapped files reach their limit, at seven
// eighths of it, so that a burst of mapped pages between two looks finds
// room within the budget.
func TestTrimStartsBeforeTheLimit(t *testing.T) {
	skipWithoutPageOut(t)
	data := t.TempDir()
	const mb = 1 << 20
	tr := newTrimmer(64*mb, []string{data})
	tr.read = func() (int64, int64) {
		file, _ := rss()
		return file, 0
	}
	_, other, err := tr.mappings()
	if err != nil {
		t.Fatal(err)
	}
	tr.other = other
	limit := tr.limit(other)
	// Under the limit and over seven eighths of it.
	size := int(limit/16*15) &^ (mb - 1)
	m := mapFile(t, data, "table.sst", size, false)
	if err := tr.tick(); err != nil {
		t.Fatal(err)
	}
	if st := tr.Stats(); st.Trims != 1 {
		t.Errorf("%d trims with %d MiB mapped under a limit of %d MiB; want one, from %d MiB", st.Trims, size/mb, limit/mb, dueAt(limit)/mb)
	}
	if r := resident(t, m); r > limit/4*3 {
		t.Errorf("%d MiB resident after the trim, want three quarters of the limit, %d MiB, at most", r/mb, limit/4*3/mb)
	}
}

// heldFiles is a Holder of fixed files that counts its holds and
// releases.
type heldFiles struct {
	files           []string
	holds, releases int
}

func (h *heldFiles) HoldMapped() ([]string, func()) {
	h.holds++
	return h.files, func() { h.releases++ }
}

// inCore returns the share of m's pages in the page cache (mincore),
// mapped or not.
func inCore(t *testing.T, m []byte) float64 {
	t.Helper()
	pages := (len(m) + os.Getpagesize() - 1) / os.Getpagesize()
	vec := make([]byte, pages)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return float64(n) / float64(pages)
}

// A trim drops the pages of a held mapping from the page tables (the
// page cache keeps them) and pages out the others; the held mapping
// reads back the same, the holder is released, and once unregistered
// it is asked no more. The holder names its file through a symlink to
// the directory, as /proc does not.
func TestTrimDropsHeldMappings(t *testing.T) {
	skipWithoutPageOut(t)
	data := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	const mb = 1 << 20
	held := mapFile(t, data, "000001.sst", 48*mb, false)
	free := mapFile(t, data, "values.vlog", 16*mb, false)
	if c := inCore(t, held); c < 0.9 {
		t.Fatalf("%.0f%% of the held file in the page cache before the trim", 100*c)
	}
	h := &heldFiles{files: []string{filepath.Join(link, "000001.sst")}}
	unregister := RegisterHolder(h)
	tr := newTrimmer(8*mb, []string{link})
	paged, dropped, err := tr.trim(8 * mb)
	if err != nil {
		t.Fatal(err)
	}
	if r := resident(t, held) + resident(t, free); r > 6*mb {
		t.Errorf("%d MiB of the mappings resident after the trim, want at most 6", r/mb)
	}
	if dropped < 40*mb || paged < 8*mb {
		t.Errorf("dropped %d MiB, paged out %d; want the held 48 MiB dropped, the other 16 paged out", dropped/mb, paged/mb)
	}
	if c := inCore(t, held); c < 0.9 {
		t.Errorf("%.0f%% of the held file in the page cache after the trim: it was paged out, not dropped", 100*c)
	}
	if !bytes.Equal(held, pattern(len(held), 0)) {
		t.Error("the held mapping reads back other bytes after the trim")
	}
	if h.holds != 1 || h.releases != 1 {
		t.Errorf("held %d times, released %d; want once each", h.holds, h.releases)
	}
	unregister()
	for i := 0; i < len(held); i += os.Getpagesize() {
		sink += held[i]
	}
	if _, dropped, err := tr.trim(8 * mb); err != nil || dropped != 0 || h.holds != 1 {
		t.Errorf("a trim after unregister: dropped %d, err %v, held %d times; want nothing dropped, no hold", dropped, err, h.holds)
	}
}

// A trim pages out about pageOutSlice, the coldest mappings first, and
// then only drops held ones; the next trim, looking afresh, pages out
// the rest.
func TestTrimPagesOutASliceATrim(t *testing.T) {
	skipWithoutPageOut(t)
	data := t.TempDir()
	const mb = 1 << 20
	var free [][]byte
	for i := range 3 {
		free = append(free, mapFile(t, data, fmt.Sprintf("%d.vlog", i), pageOutSlice/2, false))
	}
	held := mapFile(t, data, "000001.sst", 48*mb, false)
	clearReferenced()
	for i := 0; i < len(held); i += os.Getpagesize() {
		sink += held[i]
	}
	defer RegisterHolder(&heldFiles{files: []string{filepath.Join(data, "000001.sst")}})()
	left := func() (n int64) {
		for _, m := range free {
			n += resident(t, m)
		}
		return n
	}
	tr := newTrimmer(8*mb, []string{data})
	paged, dropped, err := tr.trim(8 * mb)
	if err != nil {
		t.Fatal(err)
	}
	if paged < pageOutSlice-8*mb || paged > pageOutSlice || left() < pageOutSlice/2-4*mb {
		t.Errorf("the first trim paged out %d MiB and left %d resident; want %d paged, the rest left", paged/mb, left()/mb, pageOutSlice/mb)
	}
	if dropped < 40*mb || resident(t, held) > 4*mb {
		t.Errorf("the first trim dropped %d MiB of the held mapping and left %d; want it dropped after the slice", dropped/mb, resident(t, held)/mb)
	}
	if paged, _, err = tr.trim(8 * mb); err != nil || paged < pageOutSlice/2-4*mb || left() > 4*mb {
		t.Errorf("the second trim paged out %d MiB (err %v) and left %d resident; want the rest paged out", paged/mb, err, left()/mb)
	}
}

// BenchmarkTrimBusy pages out (MADV_PAGEOUT, pageOut) or drops
// (MADV_DONTNEED, drop) 200 mappings of 4 MiB, one call each, while ten
// goroutines a P keep the process busy, as a bulk load's workers do. An
// operation is one pass over the 800 MiB; before each, every mapping is
// written through and synced while nothing else runs, as Badger writes
// a table it has built.
func BenchmarkTrimBusy(b *testing.B) {
	if err := pageOut(0, uintptr(os.Getpagesize())); errors.Is(err, unix.EINVAL) {
		b.Skip("this kernel has no MADV_PAGEOUT")
	}
	const n, size = 200, 4 << 20
	dir := b.TempDir()
	maps := make([][]byte, n)
	for i := range maps {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%06d.sst", i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			b.Fatal(err)
		}
		m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		maps[i] = m
		defer unix.Munmap(m)
	}
	data := pattern(size, 1)
	for _, c := range []struct {
		name string
		call func(start, end uintptr) error
	}{{"pageout", pageOut}, {"drop", drop}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				for _, m := range maps {
					copy(m, data)
					if err := unix.Msync(m, unix.MS_SYNC); err != nil {
						b.Fatal(err)
					}
				}
				stop := busy(10 * runtime.GOMAXPROCS(0))
				b.StartTimer()
				for _, m := range maps {
					start := uintptr(unsafe.Pointer(&m[0]))
					if err := c.call(start, start+uintptr(len(m))); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				stop()
			}
		})
	}
}

// spun keeps busy's sums from being optimized away.
var spun atomic.Int64

// busy starts n goroutines that compute until the returned func is
// called, which waits for them.
func busy(n int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			x := 0
			for !done.Load() {
				for i := range 10000 {
					x += i * i
				}
			}
			spun.Add(int64(x))
		})
	}
	return func() { done.Store(true); wg.Wait() }
}

// While the process's file mappings hold more than their share, the
// heap's limit comes down to what they leave of the budget (half of it
// at least), and goes back up once they are gone.
func TestApplyYieldsToMappedFiles(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(math.MaxInt64)
	const mb = 1 << 20
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	runtime.GC() // the live heap of the tests before is not this one's
	b := &Budget{MB: 64}
	b.Apply(ctx, t.TempDir())
	waitLimit(t, func(l int64) bool { return l == 48*mb }, "at three quarters of the budget, 48 MiB")
	// A mapping outside the trimmed directory: the trimmer leaves it.
	m := mapFile(t, t.TempDir(), "other.bin", 48*mb, false)
	runtime.GC() // the file's bytes, written from the heap, are garbage
	waitLimit(t, func(l int64) bool { return l == 32*mb }, "at half the budget, 32 MiB, under 48 MiB of mapped files")
	if err := unix.Munmap(m); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	waitLimit(t, func(l int64) bool { return l > 32*mb && l <= 48*mb }, "back up once the mapped files are gone")
}
