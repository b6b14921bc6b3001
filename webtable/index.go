package webtable

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The registry of serving indexes. Every registered index name gets every
// export: the export observer writes one queue entry per registered name,
// each in that index's own queue (Queue), and each index's feeder records
// what it applied in a column of its own (Queue.Served). While no name is
// registered (a table one index serves) the table has DefaultIndex's
// queue alone, as if DefaultIndex were registered and live.
const (
	// IndexPrefix + index name is the registry row of a serving index, in
	// the Percolator table. Written by serving's feeders when they first
	// start (and by feed.DropIndex, which deletes it); read by the
	// export observer in every export transaction (IndexState: which
	// queues to write) and by the feeders (their backfill).
	IndexPrefix = "!index/"
	// IndexState is IndexBackfilling or IndexLive.
	IndexState = "index:state"
	// IndexSince is a timestamp (decimal) RegistryTTL after one taken
	// once the registration committed: every export transaction that
	// starts later writes an entry for the index. The feeder backfills
	// from the table once the GC safe point has passed it, and the index
	// is live then.
	IndexSince = "index:since"

	IndexBackfilling = "backfilling" // exports from before IndexSince may be missing
	IndexLive        = "live"        // the index has every export
)

// RegistryTTL is how much older (in timestamp terms) than an export
// transaction the registry read it uses may be: the export observers read
// the registry once per RegistryTTL, not in every transaction.
const RegistryTTL = time.Second

// DefaultIndex is the index whose queue is ExportPrefix and whose column
// is SearchableAt: the index of a table with no registered name.
const DefaultIndex = "main"

// IndexRow is the registry row of the index named name.
func IndexRow(name string) string { return IndexPrefix + name }

// ErrIndexName is returned by CheckIndexName for a name that cannot name
// an index.
var ErrIndexName = errors.New("webtable: bad index name")

// CheckIndexName returns an error unless name can name a serving index:
// 1 to 64 of a-z, 0-9, '-' and '_' (it goes into row keys and columns).
func CheckIndexName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w %q: 1 to 64 characters", ErrIndexName, name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%w %q: only a-z, 0-9, '-' and '_'", ErrIndexName, name)
		}
	}
	return nil
}

// Queue is the export queue of one serving index and the page column
// its feeder records in. Entries are rows Prefix + %020d(version) + "/" +
// page row, column ExportDoc, in a table of spread 1; in a table of spread
// N > 1 (Spread) the queue is N buckets, and an entry's row is Prefix +
// %02x(SpreadOf(page row, N)) + "/" + %020d(version) + "/" + page row: each
// bucket is in version order, and a page's entries are in one bucket.
// DefaultIndex's prefix is ExportPrefix, another's ExportPrefix with its
// "/" replaced by "." + name + "/" ("!export.NAME/", which sorts before and
// outside "!export/").
type Queue struct {
	Name   string
	Prefix string // where the queue's rows are
	// Served is the page column the index's feeder writes when it applied
	// an export of the page (the SearchableAt format): SearchableAt for
	// DefaultIndex, SearchableAt + "." + name for another.
	Served string
	// Spread is the table's spread (Spread): how many buckets the queue
	// has. 0 counts as 1.
	Spread int
}

// QueueOf returns the queue of the index named name in a table of spread
// 1.
func QueueOf(name string) Queue { return SpreadQueue(name, 1) }

// SpreadQueue returns the queue of the index named name in a table of
// spread n.
func SpreadQueue(name string, n int) Queue {
	if name == DefaultIndex || name == "" {
		return Queue{Name: DefaultIndex, Prefix: ExportPrefix, Served: SearchableAt, Spread: n}
	}
	return Queue{Name: name, Prefix: strings.TrimSuffix(ExportPrefix, "/") + "." + name + "/", Served: SearchableAt + "." + name, Spread: n}
}

// Buckets returns how many buckets the queue has: 1 at least.
func (q Queue) Buckets() int { return max(q.Spread, 1) }

// Bucket returns where bucket b's rows are: Prefix when the queue has one.
func (q Queue) Bucket(b int) string {
	if q.Spread <= 1 {
		return q.Prefix
	}
	return fmt.Sprintf("%s%02x/", q.Prefix, b)
}

// Row is the queue row of an export of page row at version.
func (q Queue) Row(version uint64, row string) string {
	return q.From(SpreadOf(row, q.Spread), version) + row
}

// From is where bucket b's entries of version and later start.
func (q Queue) From(b int, version uint64) string {
	return fmt.Sprintf("%s%020d/", q.Bucket(b), version)
}

// BucketEnd is where bucket b's rows end.
func (q Queue) BucketEnd(b int) string { return q.Bucket(b) + "\xff" }

// End is where the queue's rows end.
func (q Queue) End() string { return q.Prefix + "\xff" }

// Version returns the version in one of the queue's row keys (0 if it
// has none).
func (q Queue) Version(key string) uint64 {
	rest := strings.TrimPrefix(key, q.Prefix)
	if q.Spread > 1 && len(rest) > 3 {
		rest = rest[3:]
	}
	digits, _, _ := strings.Cut(rest, "/")
	v, _ := strconv.ParseUint(digits, 10, 64)
	return v
}
