package feed

import (
	"cmp"
	"context"
	"slices"

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
// in version order (and row order within a version), about batch entries
// and maxBytes of them: the caller takes what it wants of them in order.
// cut reports that entries past the last one returned may be left.
//
// A queue of one bucket is one scan that stops at batch entries, or
// before the entry that would take it past maxBytes. A queue of N buckets
// is N scans from the same version at the same snapshot, each with a share
// of the limits (1.5/N of them, so that their merge is about a batch
// whatever the spread of versions), merged by version; when a bucket's scan
// fills its share, the entries past the last version it read are dropped
// (a later look reads them), so the merge never skips an entry of a bucket
// it did not read that far. Entries of that version may be left in the
// bucket, as one scan may leave entries of one version: looks start again
// at the newest version applied. A page's entries are in one bucket, so
// they come in version order either way.
func readQueue(ctx context.Context, tx *percolator.Tx, q webtable.Queue, from uint64, batch, maxBytes int) (es []entry, cut bool, err error) {
	n := q.Buckets()
	share, shareBytes := batch, maxBytes
	if n > 1 {
		share, shareBytes = max((3*batch+2*n-1)/(2*n), 1), max(3*maxBytes/(2*n), 1)
	}
	var limit uint64 // with cut: the newest version every bucket was read to
	for b := range n {
		count, size, filled := 0, 0, false
		var last uint64
		err := tx.Scan(ctx, q.From(b, from), q.BucketEnd(b), webtable.ExportDoc, func(row, _ string, v []byte) bool {
			if count > 0 && size+len(v) > shareBytes {
				filled = true // this entry is for a later look
				return false
			}
			last = q.Version(row)
			es = append(es, entry{row, last, v})
			count, size = count+1, size+len(v)
			filled = count >= share || size >= shareBytes
			return !filled
		})
		if err != nil {
			return nil, false, err
		}
		if filled && (!cut || last < limit) {
			cut, limit = true, last
		}
	}
	if n == 1 {
		return es, cut, nil
	}
	if cut {
		es = slices.DeleteFunc(es, func(e entry) bool { return e.version > limit })
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.version, b.version), cmp.Compare(a.row, b.row))
	})
	return es, cut, nil
}
