package feed

import (
	"cmp"
	"context"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// entry is one export queue entry as read, its value still JSON.
type entry struct {
	row     string // the queue row
	version uint64
	v       []byte
}

// readQueue reads q's entries of version from and later at tx's snapshot,
// in version order (and row order within a version): batch entries at
// most, and no more bytes than maxBytes unless the first entry alone has
// more. cut reports that it stopped at a limit (entries may be left).
//
// A queue of one bucket is one scan. A queue of N buckets is a k-way merge
// of the N buckets, each read from the same version at the same snapshot in
// chunks (1.5/N of the limits, so that a batch takes about one chunk of
// each): the merge takes the lowest version at the head of any bucket, and
// reads a bucket's next chunk when its chunk runs out, so it never takes an
// entry past one of a bucket it has not read that far. A page's entries
// are in one bucket, so they come in version order either way.
func readQueue(ctx context.Context, tx *percolator.Tx, q webtable.Queue, from uint64, batch, maxBytes int) (es []entry, cut bool, err error) {
	n := q.Buckets()
	if n == 1 {
		size := 0
		err := tx.Scan(ctx, q.From(0, from), q.End(), webtable.ExportDoc, func(row, _ string, v []byte) bool {
			if len(es) > 0 && size+len(v) > maxBytes {
				cut = true // this entry is for a later look
				return false
			}
			es = append(es, entry{row, q.Version(row), v})
			size += len(v)
			cut = len(es) >= batch || size >= maxBytes
			return !cut
		})
		return es, cut, err
	}
	chunk, chunkBytes := max((3*batch+2*n-1)/(2*n), 2), max(3*maxBytes/(2*n), 1)
	streams := make([]stream, n)
	for b := range streams {
		streams[b].next = q.From(b, from)
	}
	if err := readAll(ctx, tx, q, streams, chunk*n, chunkBytes*n); err != nil {
		return nil, false, err
	}
	refill := func(b int) error {
		s := &streams[b]
		size, full := 0, false
		s.buf = s.buf[:0]
		err := tx.Scan(ctx, s.next, q.BucketEnd(b), webtable.ExportDoc, func(row, _ string, v []byte) bool {
			s.buf = append(s.buf, entry{row, q.Version(row), v})
			size += len(v)
			full = len(s.buf) >= chunk || size >= chunkBytes
			return !full
		})
		if err != nil {
			return err
		}
		s.done = !full
		if len(s.buf) > 0 {
			s.next = s.buf[len(s.buf)-1].row + "\x00"
		}
		return nil
	}
	size := 0
	for {
		best := -1
		for b := range streams {
			s := &streams[b]
			if len(s.buf) == 0 && !s.done {
				if err := refill(b); err != nil {
					return nil, false, err
				}
			}
			if len(s.buf) == 0 {
				continue
			}
			if best < 0 || entryLess(s.buf[0], streams[best].buf[0]) {
				best = b
			}
		}
		if best < 0 {
			return es, false, nil // every bucket read to its end
		}
		e := streams[best].buf[0]
		if len(es) > 0 && size+len(e.v) > maxBytes {
			return es, true, nil
		}
		streams[best].buf = streams[best].buf[1:]
		es = append(es, e)
		size += len(e.v)
		if len(es) >= batch || size >= maxBytes {
			return es, true, nil
		}
	}
}

// stream is what readQueue has read of one bucket.
type stream struct {
	buf  []entry
	next string // where the bucket's next chunk starts
	done bool   // the bucket has no entries past buf
}

// readAll reads every bucket from its next entry with one ScanRanges (one
// store call on Bigtable, where an idle feeder's look would otherwise be
// a scan a bucket), up to limit entries or limitBytes in all: the buckets
// read to their end are done, the one the limit stopped in holds what it
// read, and those after it are left for readQueue's chunks.
func readAll(ctx context.Context, tx *percolator.Tx, q webtable.Queue, streams []stream, limit, limitBytes int) error {
	ranges := make([]percolator.KeyRange, len(streams))
	for b := range streams {
		ranges[b] = percolator.KeyRange{Start: streams[b].next, End: q.BucketEnd(b)}
	}
	count, size, stopped := 0, 0, -1
	err := tx.ScanRanges(ctx, ranges, webtable.ExportDoc, func(b int, row, _ string, v []byte) bool {
		streams[b].buf = append(streams[b].buf, entry{row, q.Version(row), v})
		count++
		size += len(v)
		if count >= limit || size >= limitBytes {
			stopped = b
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	for b := range streams {
		s := &streams[b]
		s.done = stopped < 0 || b < stopped
		if len(s.buf) > 0 {
			s.next = s.buf[len(s.buf)-1].row + "\x00"
		}
	}
	return nil
}

func entryLess(a, b entry) bool {
	return cmp.Or(cmp.Compare(a.version, b.version), cmp.Compare(a.row, b.row)) < 0
}
