package budget

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The table (Badger's tables and value log) and the serving index
// (Bleve's segments) are read through shared file mappings. Each page
// of them the process has touched stays in its resident set until the
// kernel needs the memory: reclaimable page cache, but resident all the
// same, and it grows with the data (3.4 GB of a crawl's 4 GB at 135,000
// pages). The trimmer keeps those pages within the budget: when the
// mapped files' resident pages outgrow it, it drops the pages of the
// mappings a Holder holds in place (holder.go) and asks the kernel to
// page out the others (madvise MADV_PAGEOUT, a slice a trim), those
// least used since the last trim first, until they hold three quarters
// of it. A page read again afterwards is read from the
// page cache if the kernel kept it, from disk if not.
//
// MADV_PAGEOUT never changes what memory holds: clean file pages are
// dropped and read back on access, dirty ones are left to writeback,
// anonymous ones are swapped out or left. So a mapping that Badger or
// Bleve unmaps between the trimmer's read of /proc/self/smaps and its
// madvise, and an anonymous mapping that takes its place, come to no
// harm (MADV_DONTNEED, which keeps the page cache, zeroes anonymous
// memory: it is kept to the mappings a Holder holds).

// trimEvery is how often the trimmer reads the resident sizes
// (/proc/self/status, a few microseconds). A second let bursts of
// mapped pages (a compaction, a scan of the table) outrun it by
// hundreds of megabytes at a million pages; a quarter of a second, by
// 35 MB on a site of large pages.
const trimEvery = 125 * time.Millisecond

// dueAt is the part of their limit from which the mapped files are
// trimmed (to three quarters of it, see trim): what a burst of mapped
// pages brings in between two looks finds the last eighth free.
func dueAt(limit int64) int64 { return limit - limit/8 }

// pageOutSlice is about what one trim pages out (the mapping that
// crosses it is the last): with the process busy on both cores paging
// out runs at about 90 MB a second, and a trim sees nothing mapped while
// it runs, so a trim with much to page out leaves the rest to the next
// ones, a fresh look each, and meanwhile only drops held mappings.
const pageOutSlice = 128 << 20

// mapping is one file mapping of /proc/self/smaps under a trimmed
// directory.
type mapping struct {
	start, end uintptr
	path       string
	rss        int64 // bytes resident
	// cold is the resident bytes not referenced since the last trim
	// (Rss less Referenced: the trim clears the referenced bits).
	cold int64
}

// trimmer pages out file mappings under dirs while the process's
// resident pages exceed the budget: the mapped files may hold what the
// anonymous memory (the Go heap, Badger's caches) and the other file
// mappings (the binary) leave of it, and at least a quarter of it.
type trimmer struct {
	budget int64
	dirs   []string // absolute
	// other is what the process's other file mappings (its binary and
	// libraries) held at the last trim. They are resident memory of the
	// process like the rest, so they come out of the mapped files'
	// share: a trim is due once RssFile passes dueAt(limit(anon +
	// other)) + other.
	other int64
	// stats says what the trimmer did so far (Stats).
	stats struct {
		sync.Mutex
		TrimStats
	}
	// read returns the process's file-backed and anonymous resident
	// bytes: rss; tests replace it.
	read func() (file, anon int64)
}

// limit is what the mapped files under t.dirs may hold while the
// process's other resident memory (anonymous, and the file mappings
// outside t.dirs) holds rest bytes.
func (t *trimmer) limit(rest int64) int64 {
	return max(t.budget-rest, t.budget/4)
}

func newTrimmer(budget int64, dirs []string) *trimmer {
	t := &trimmer{budget: budget, read: rss}
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); d != "" && err == nil {
			t.dirs = append(t.dirs, abs)
		}
	}
	return t
}

// prefixes returns t.dirs as /proc names their files: symlinks resolved
// (a directory made after the trimmer started is resolved once it
// exists), with a trailing separator.
func (t *trimmer) prefixes() []string {
	var ps []string
	for _, d := range t.dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		ps = append(ps, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator))
	}
	return ps
}

// run checks the resident size every trimEvery until ctx is done, and
// trims when it is over. It stops when the kernel refuses MADV_PAGEOUT
// (a kernel before 5.4).
func (t *trimmer) run(ctx context.Context) {
	tk := time.NewTicker(trimEvery)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		if err := t.tick(); err != nil {
			return
		}
	}
}

// tick trims when the mapped files hold more than dueAt of their limit
// now.
func (t *trimmer) tick() error {
	file, anon := t.read()
	limit := t.limit(anon + t.other)
	if file-t.other <= dueAt(limit) {
		return nil
	}
	over := file - t.other - limit
	began := time.Now()
	paged, dropped, err := t.trimWith(func(other int64) int64 { return t.limit(anon + other) })
	took := time.Since(began)
	t.stats.Lock()
	defer t.stats.Unlock()
	st := &t.stats.TrimStats
	st.Over = max(st.Over, over)
	if paged+dropped > 0 {
		st.Trims++
		st.Paged += paged
		st.Dropped += dropped
		st.Slowest = max(st.Slowest, took)
	}
	return err
}

// TrimStats is what a trimmer has done so far.
type TrimStats struct {
	Trims   int64         // trims that paged out or dropped something
	Paged   int64         // bytes they paged out (resident before)
	Dropped int64         // bytes of held mappings they dropped (see Holder)
	Slowest time.Duration // the longest of them
	// Over is the most that the mapped files held above their limit when
	// a tick looked: what a burst of mapped pages (a compaction, a scan)
	// brought in since the tick before.
	Over int64
}

// Stats returns what t has done so far.
func (t *trimmer) Stats() TrimStats {
	t.stats.Lock()
	defer t.stats.Unlock()
	return t.stats.TrimStats
}

// trim pages out the mappings under t.dirs (drops the pages of those a
// Holder holds, see Holder) until those left hold at most three quarters
// of limit: first those with the most pages not used since the last trim
// (old tables and segments), then those with the most pages resident.
// Once it has paged out about pageOutSlice it only drops: paging out is
// several times as slow, and a trim is blind to what is mapped while it
// runs (at a million pages, a compaction mapped 1.6 GB during one trim
// of 15 s that paged out). It then clears the process's referenced bits
// (/proc/self/clear_refs), so that the next trim sees what was used
// since this one. It returns the bytes paged out (the mappings'
// resident bytes before) and those it dropped, and the error where the
// kernel refused a call.
func (t *trimmer) trim(limit int64) (paged, dropped int64, err error) {
	return t.trimWith(func(int64) int64 { return limit })
}

// trimWith is trim with the limit given by the resident bytes of the
// process's other file mappings, as this trim reads them.
func (t *trimmer) trimWith(limit func(other int64) int64) (paged, dropped int64, err error) {
	// Held before smaps is read: a held file's mapping seen there is
	// the one that stays (see Holder).
	hold, release := holdMapped()
	defer release()
	ms, other, err := t.mappings()
	if err != nil {
		return 0, 0, nil // no smaps to read: try again at the next tick
	}
	t.other = other
	var held int64
	for _, m := range ms {
		held += m.rss
	}
	target := limit(other) / 4 * 3
	if held <= target {
		return 0, 0, nil
	}
	slices.SortFunc(ms, func(a, b mapping) int {
		if c := cmp.Compare(b.cold, a.cold); c != 0 {
			return c
		}
		return cmp.Compare(b.rss, a.rss)
	})
	defer clearReferenced()
	for _, m := range ms {
		if held <= target {
			break
		}
		if hold[m.path] {
			if err := drop(m.start, m.end); err != nil {
				return paged, dropped, err
			}
			dropped += m.rss
		} else {
			if paged >= pageOutSlice {
				continue // the next trim's, after a fresh look
			}
			if err := pageOut(m.start, m.end); err != nil {
				return paged, dropped, err
			}
			paged += m.rss
		}
		held -= m.rss
	}
	return paged, dropped, nil
}

// mappings reads /proc/self/smaps: the file mappings under t.dirs with
// pages resident, and the resident bytes of every other file mapping.
func (t *trimmer) mappings() (ms []mapping, other int64, err error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	prefixes := t.prefixes()
	under := func(path string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(path, p) {
				return true
			}
		}
		return false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur *mapping // the mapping whose fields follow, if under a dir
	file := false    // the mapping whose fields follow is of a file
	for sc.Scan() {
		line := sc.Bytes()
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && !bytes.ContainsAny(k, " -") {
			switch string(k) {
			case "Rss":
				rss := parseKB(v)
				switch {
				case cur != nil:
					cur.rss, cur.cold = rss, rss
				case file:
					other += rss
				}
			case "Referenced":
				if cur != nil {
					cur.cold = max(0, cur.rss-parseKB(v))
				}
			}
			continue
		}
		// A mapping's header: start-end perms offset dev inode path.
		cur, file = nil, false
		fields := strings.Fields(string(line))
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		file = true
		path := strings.Join(fields[5:], " ")
		if !under(path) || len(fields[1]) < 4 || fields[1][3] != 's' {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		ms = append(ms, mapping{start: uintptr(start), end: uintptr(end), path: path})
		cur = &ms[len(ms)-1]
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	return slices.DeleteFunc(ms, func(m mapping) bool { return m.rss == 0 }), other, nil
}

// clearReferenced clears the referenced bits of every page of the
// process (/proc/self/clear_refs), for the next trim to see which pages
// were used since. Failing, the next trim orders by resident pages
// alone, as all are referenced.
func clearReferenced() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("1"), 0)
}

// rss returns the process's file-backed and anonymous resident
// bytes (/proc/self/status RssFile and RssAnon), 0 where there is none
// to read.
func rss() (file, anon int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	return statusKB(b, "RssFile"), statusKB(b, "RssAnon")
}

// statusKB returns the field name of /proc/self/status b, in bytes.
func statusKB(b []byte, name string) int64 {
	_, rest, ok := bytes.Cut(b, []byte("\n"+name+":"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	return parseKB(line)
}

// parseKB parses "  1234 kB" as bytes.
func parseKB(v []byte) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
	return n << 10
}
