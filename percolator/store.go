package percolator

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// Store is the Bigtable-like table Percolator runs on: a sorted map
// (row, family:column, timestamp) → value with single-row atomicity. It is
// deliberately narrow, and every method maps onto one Cloud Bigtable call, so
// that a Bigtable backend can implement the same contract as the embedded
// Badger backend, the one there is (see package storetest).
//
// Timestamps are uint64 in the oracle's units: cells live at timestamps in
// [1, 2^52); 0 and MaxTs occur only as bounds. Backends that need other units
// (Bigtable: microseconds at millisecond granularity) convert at their edge.
// Rows and columns are non-empty.
//
// All methods are safe for concurrent use; contention is not an error.
// Returned cells and their values, including those passed to ReadRows' fn,
// are owned by the caller, and a store keeps no slice passed to it after a
// call returns. Mutations are applied in order.
type Store interface {
	// EnsureFamilies creates the column families that do not exist yet. It is
	// idempotent. Families in the same locality group are stored together;
	// scanning one group never reads the cells of another.
	EnsureFamilies(ctx context.Context, fams []Family) error

	// ReadRow returns the cells of row that match any of the filters (their
	// union, like Bigtable's interleave filter), sorted by family, column and
	// timestamp descending. A cell matched by several filters is returned
	// once, with its value unless every filter matching it is KeysOnly. At
	// least one filter is required. It reads the row atomically.
	ReadRow(ctx context.Context, row string, filters ...Filter) ([]Cell, error)

	// ReadRows calls fn for every row in [start, end) that has at least one
	// cell matching the filters, in row order, with that row's matching cells
	// sorted as by ReadRow. An empty end means the end of the table. fn
	// returning false stops the scan, and ReadRows then returns nil. start ≥
	// end (with end non-empty) is an empty range. Each row is read
	// atomically; the scan as a whole is not a snapshot.
	ReadRows(ctx context.Context, start, end string, fn func(row string, cells []Cell) bool, filters ...Filter) error

	// CheckAndMutateRow atomically applies ifMatch when any cell of row matches
	// any of the predicate filters, and ifNoMatch otherwise, and reports
	// whether the predicate matched (Bigtable's CheckAndMutateRow).
	CheckAndMutateRow(ctx context.Context, row string, predicate []Filter, ifMatch, ifNoMatch []Mutation) (matched bool, err error)

	// MutateRows applies each RowMutation atomically within its row. Rows are
	// independent: on error, some rows may have been applied and others not.
	MutateRows(ctx context.Context, rows []RowMutation) error

	// Increment atomically adds delta to the big-endian int64 in the newest
	// cell of family:column and returns the new value; a missing cell counts
	// as 0 (Bigtable's ReadModifyWriteRow with an increment rule). The result
	// becomes the newest version, at a timestamp the store chooses; a value
	// that is not 8 bytes is an error.
	Increment(ctx context.Context, row, family, column string, delta int64) (int64, error)

	// Close releases the store. It is not safe to call other methods after.
	Close() error
}

// ExclusiveStore is implemented by stores whose data no other process can
// reach while they are open (the embedded Badger store holds a directory
// lock). For those, the DB commits transactions in one step, without
// locks, because the atomicity of their rows can then be held across a
// timestamp allocation.
type ExclusiveStore interface {
	Store

	// CheckAndMutateRowAt is CheckAndMutateRow where ifNoMatch is built from a
	// timestamp taken by ts while the row is held. The row is held from before
	// the predicate is checked until the mutation is applied: reads and writes
	// of the row that begin after ts is called wait, then see the mutation (or
	// the unchanged row if ts or the call fails). So a reader whose timestamp
	// was taken after the commit timestamp always sees the commit. ts and
	// ifNoMatch are called at most once, and only when the predicate does not
	// match; if ts fails nothing is applied and its error is returned.
	CheckAndMutateRowAt(ctx context.Context, row string, predicate []Filter, ts func() (uint64, error), ifNoMatch func(ts uint64) []Mutation) (matched bool, err error)

	// CheckAndMutateRowsAt is CheckAndMutateRowAt over several rows: every
	// row of checks is held from before its predicate is checked until
	// the mutations are applied, all of them atomically, crashes
	// included. If a row's predicate matches, it returns that row and
	// applies nothing (ts and ifNoMatch are not called); else the rows
	// ifNoMatch mutates, each one of checks, are written. A mutation of a
	// row not in checks is an error and nothing is applied.
	CheckAndMutateRowsAt(ctx context.Context, checks []RowPredicate, ts func() (uint64, error), ifNoMatch func(ts uint64) []RowMutation) (matched string, err error)
}

// RowPredicate is a row and the filters a conditional mutation checks
// there (ExclusiveStore.CheckAndMutateRowsAt).
type RowPredicate struct {
	Row     string
	Filters []Filter
}

// Compactor is implemented by stores that reclaim the space of deleted
// versions only when told which timestamps no reader will ask for again.
type Compactor interface {
	// Compact tells the store that no read with a filter bound Max() below
	// safeTs will happen again and reclaims what deletions have freed. It does
	// not change the result of any read whose filters all have Max() ≥ safeTs.
	// It may take long.
	Compact(ctx context.Context, safeTs uint64) error
}

// Discarder is implemented by stores whose own background compactions
// can drop what deletions hide once told which timestamps no reader will
// ask for again: lazily, as the store compacts anyway, where Compactor
// rewrites everything at once.
type Discarder interface {
	// Discard tells the store that no read with a filter bound Max() below
	// safeTs will happen again, as Compact does, and returns at once. It
	// does not change the result of any read whose filters all have
	// Max() ≥ safeTs.
	Discard(safeTs uint64)
}

// Family declares a column family.
type Family struct {
	Name string
	// LocalityGroup names the group the family is stored with; families with
	// the same (possibly empty) group are stored together.
	LocalityGroup string
	// Sparse marks a family that holds few cells at any time (Percolator's
	// locks). A store may keep such a family in memory as well as on disk.
	Sparse bool
	// Newest marks a family whose reads mostly ask for the newest version
	// of one column (Percolator's write records). A store may index each
	// column's newest version to answer those reads in one lookup.
	Newest bool
}

// Cell is one version of one column of a row.
type Cell struct {
	Family string
	Column string
	Ts     uint64
	Value  []byte
}

// MaxTs is the largest timestamp: a Filter with MaxTs = MaxTs has no upper
// bound.
const MaxTs = math.MaxUint64 - 1

// Filter selects cells of one family. It corresponds to a Bigtable chain of a
// family filter, a column filter, a timestamp range filter and, with Latest, a
// cells-per-column limit of 1.
type Filter struct {
	Family string
	// Column selects one column; empty selects every column of Family that
	// begins with ColumnPrefix (Bigtable: a column range filter).
	Column       string
	ColumnPrefix string
	// MinTs and MaxTs bound the timestamps, both inclusive. The zero MaxTs
	// means MaxTs (no bound).
	MinTs, MaxTs uint64
	// Latest keeps only the newest matching version of each column.
	Latest bool
	// KeysOnly asks for cells without values; a store may still return them.
	KeysOnly bool
}

// Matches reports whether the cell is selected by the filter, ignoring
// Latest.
func (f Filter) Matches(c Cell) bool {
	return c.Family == f.Family &&
		(c.Column == f.Column || f.Column == "" && strings.HasPrefix(c.Column, f.ColumnPrefix)) &&
		c.Ts >= f.MinTs && c.Ts <= f.max()
}

func (f Filter) max() uint64 {
	if f.MaxTs == 0 {
		return MaxTs
	}
	return f.MaxTs
}

// Max returns the inclusive upper timestamp bound of f.
func (f Filter) Max() uint64 { return f.max() }

// MutationOp says what a Mutation does.
type MutationOp uint8

const (
	// SetCell writes Value at (Family, Column, Ts), replacing any cell with
	// that exact timestamp.
	SetCell MutationOp = iota + 1
	// DeleteCell deletes exactly the version at Ts; older versions stay
	// visible.
	DeleteCell
	// DeleteOlder deletes every version with a timestamp strictly below Ts;
	// Ts = MaxTs deletes every version. Writing a version below Ts afterwards
	// is not supported: a store may keep hiding it.
	DeleteOlder
)

// Mutation is one change to one column of a row.
type Mutation struct {
	Op     MutationOp
	Family string
	Column string
	Ts     uint64
	Value  []byte
}

func (m Mutation) String() string {
	switch m.Op {
	case SetCell:
		return fmt.Sprintf("set %s:%s@%d (%d bytes)", m.Family, m.Column, m.Ts, len(m.Value))
	case DeleteCell:
		return fmt.Sprintf("delete %s:%s@%d", m.Family, m.Column, m.Ts)
	case DeleteOlder:
		return fmt.Sprintf("delete %s:%s<%d", m.Family, m.Column, m.Ts)
	}
	return fmt.Sprintf("mutation(%d)", m.Op)
}

// RowMutation is the mutations of one row, applied atomically.
type RowMutation struct {
	Row       string
	Mutations []Mutation
}

// Buckets is how many buckets a BucketStore spreads its bucketed cells
// over (see BucketKey): workers sharing a table own buckets, not rows, so
// each reads only its own share of the notifications.
const Buckets = 1024

// Bucket returns the bucket of row, in [0, Buckets).
func Bucket(row string) int { return int(mix64(fnv64(row)) >> 54) }

// BucketKey returns the key under which a BucketStore keeps row's bucketed
// cells: its bucket as two bytes (big-endian), then the row. The keys of one bucket are
// contiguous and in row order, and bucket b's keys are the range
// [BucketStart(b), BucketStart(b+1)).
func BucketKey(row string) string { return BucketStart(Bucket(row)) + row }

// BucketStart returns the first key of bucket b, or "" (the end of the key
// space) for b = Buckets.
func BucketStart(b int) string {
	if b >= Buckets {
		return ""
	}
	return string([]byte{byte(b >> 8), byte(b)})
}

// bucketKeyLen is the length of BucketKey's bucket prefix.
const bucketKeyLen = 2

// RowOfBucketKey returns the row of a BucketKey, and false if key is too
// short to be one.
func RowOfBucketKey(key string) (string, bool) {
	if len(key) < bucketKeyLen {
		return "", false
	}
	return key[bucketKeyLen:], true
}

// KeyRange is the keys [Start, End); an empty End has no bound.
type KeyRange struct{ Start, End string }

// BucketStore is implemented by stores that keep the cells of some
// families ordered by BucketKey rather than by row, as an index beside the
// rows (the Bigtable store's notify index): a worker then scans only the
// buckets it owns, and its scans cost what its share holds, not the whole
// backlog.
type BucketStore interface {
	Store

	// Bucketed reports whether every filter selects a bucketed family.
	Bucketed(filters ...Filter) bool

	// ReadBuckets is ReadRows over the rows whose BucketKey lies in one of
	// ranges (sorted and disjoint), in BucketKey order rather than row
	// order. Every filter must select a bucketed family.
	ReadBuckets(ctx context.Context, ranges []KeyRange, fn func(row string, cells []Cell) bool, filters ...Filter) error
}

// IndexRepairer is implemented by stores that keep an index beside the
// rows which a crash can leave short of a cell (the Bigtable store's
// notify index is written after the row). RepairIndex reads the whole
// table and indexes what is missing, so on a shared table one worker
// calls it: the holder of the lock sweep's duty, every repairEvery lock
// TTLs (Worker).
type IndexRepairer interface {
	RepairIndex(ctx context.Context) error
}

// RowListReader is implemented by stores that read a list of rows with one
// call (Bigtable's ReadRows over a row list), where a call is a round trip
// whatever it reads: a transaction's Prefetch then costs one call for many
// rows instead of one call a row.
type RowListReader interface {
	// ReadRowList calls fn for every row of rows (sorted, distinct) that
	// has at least one cell matching the filters, in row order, with the
	// row's matching cells sorted as by ReadRow. fn returning false stops
	// the read, and ReadRowList then returns nil. Each row is read
	// atomically; the rows together are not a snapshot.
	ReadRowList(ctx context.Context, rows []string, fn func(row string, cells []Cell) bool, filters ...Filter) error
}

// RangeReader is implemented by stores that read several key ranges with
// one call (Bigtable's ReadRows over a row range list): a transaction's
// ScanRanges then costs one call instead of one a range.
type RangeReader interface {
	// ReadRanges is ReadRows over every range of ranges (sorted and
	// disjoint), in row order.
	ReadRanges(ctx context.Context, ranges []KeyRange, fn func(row string, cells []Cell) bool, filters ...Filter) error
}

// PredicateLimiter is implemented by stores that bound the predicate of
// a conditional mutation (Cloud Bigtable: a filter of at most 20 KB; its
// emulator: a filter nested at most so deep). A transaction that writes
// more cells of one row than a predicate can check prewrites the row in
// pieces, a conditional mutation each.
type PredicateLimiter interface {
	// FitPredicate returns how many of filters, from the first, one
	// conditional mutation's predicate can hold.
	FitPredicate(filters []Filter) int
}
