// Package badger implements percolator.Store on an embedded Badger database.
//
// # Layout
//
// Badger runs in managed mode, so the store chooses every version: a cell
// (row, family, column, ts) is the Badger key (group, row, family, column)
// (see key.go) at version ts+1. The offset keeps version 0, which a managed
// write batch takes for "unset", out of reach, so every timestamp including
// 0 is representable. "The newest version at or below t" is then one point
// Get in a transaction reading at t+1, which is what Percolator's hot path
// asks. Usually the newest version of all is at or below t: point reads
// first Get in one read-only transaction at the top version that they all
// share, and only open one at t+1 when that finds a newer version.
//
// # Deletions
//
// Bigtable deletes versions, Badger deletes keys, so deletions are encoded
// (see the meta* constants). A deleted version with no live version below it
// gets a Badger tombstone: reads stop there, and compaction drops the
// tombstone and everything below it once it is at or below the discard
// timestamp. A deleted version with live versions below gets a marker that
// hides only that version. DeleteCell(ts) is one of the two at ts;
// DeleteOlder(ts) is a tombstone at each live version below ts (a single
// marker would be missed by reads bounded below it).
//
// A tombstone thus promises that nothing older is live, which compaction
// enforces and reads rely on: a point Get that finds a tombstone (Badger's
// ErrKeyNotFound) needs no second look, and only a marker sends a read to an
// iterator over the column's versions. When a cell is later written below a tombstone (a transaction
// with an older start timestamp writing after a newer one was rolled back),
// the store first overwrites the tombstone with a marker at the same
// version, in the same atomic write, so the new cell survives compaction.
// Badger resolves two writes of the same key and version in favour of the
// newer one, in reads and in compactions alike.
//
// # Atomicity
//
// Badger's conflict detection does not see phantoms and would make writers
// retry, so it is off. Rows are held by striped reader/writer locks instead:
// a write holds the stripes of all its rows for writing across the
// read-check-write of CheckAndMutateRow and Increment and until the write is
// in Badger. All entries of one call go into one Badger write (see flush),
// and Badger's writer goroutine coalesces concurrent writes into one log
// write. A scan (ReadRows) holds each row's stripe for reading while it reads
// the row, after re-positioning its iterators there, so it sees a write to
// the row whole or not at all.
//
// A point read (ReadRow) first tries without the lock, as a seqlock reader:
// every holder of a stripe for writing makes the stripe's sequence number
// odd while it holds it, so a read that finds the same even number before
// and after it overlapped no write and stands. Otherwise, and when it would
// have to read the in-memory sparse cells (which writers change in place),
// it holds the stripe for reading like a scan. This keeps the read free of
// atomic read-modify-write instructions, which dominate its cost otherwise.
//
// # Sparse families
//
// The live cells of sparse families (Percolator's locks) are also kept in
// memory, per stripe, loaded when the store opens and updated while the
// stripe is still held after each write; reads of them never touch Badger.
// Scans too: a scan of sparse families only (ReadRows) reads each stripe's
// copy with the stripe held for reading, never a Badger iterator, so it
// does not walk the deleted versions (released locks) that Badger keeps
// until compaction.
//
// # Blobs
//
// Values of BlobBytes or more, in families neither sparse nor Newest, are
// stored apart from their cells, in Badger's value log; see blob.go.
package badger

import (
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	bdb "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/internal/diskspace"
	"github.com/caffeine-go/caffeine/percolator"
)

var (
	_ percolator.ExclusiveStore = (*Store)(nil)
	_ percolator.Compactor      = (*Store)(nil)
)

// Errors returned by the store. Errors from Badger itself are wrapped.
var (
	// ErrUnknownFamily is returned for a filter or mutation naming a family
	// that EnsureFamilies never declared.
	ErrUnknownFamily = errors.New("badger: unknown column family")
	// ErrFamilyConflict is returned by EnsureFamilies for a family that
	// exists in another locality group: its cells are stored under the old
	// group and cannot move.
	ErrFamilyConflict = errors.New("badger: family exists in another locality group")
	// ErrBadMutation is returned for a mutation with an unknown operation or
	// a timestamp above percolator.MaxTs.
	ErrBadMutation = errors.New("badger: invalid mutation")
	// ErrNotCounter is returned by Increment when the newest cell does not
	// hold a big-endian int64.
	ErrNotCounter = errors.New("badger: cell is not a 64-bit counter")
	// ErrCorrupt is returned when a stored key or entry cannot be decoded.
	ErrCorrupt = errors.New("badger: corrupt entry")

	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("badger: store closed")

	// ErrDiskFull is returned by Open, and by writes, while the free space
	// of the store's directory is below its reserve (Options.DiskReserve,
	// Store.Health), and by Compact when there is no room to rewrite the
	// tables. Its errors name the directory and the space needed; it wraps
	// diskspace.ErrFull. Nothing was written by a call that returns it.
	ErrDiskFull = fmt.Errorf("badger: %w", diskspace.ErrFull)
	// ErrBroken is returned by every method once a failed call left
	// Badger's state unusable (a memtable flush that failed midway, see
	// Compact), wrapping that failure. What was written before is safe on
	// disk; the process must restart to use the store again.
	ErrBroken = errors.New("badger: store broken by a failed call; restart the process")
)

// Options configures a Store. The zero value is a durable on-disk store
// with Badger's defaults that logs nothing.
type Options struct {
	// InMemory keeps everything in memory and ignores the directory; for
	// tests. Values of 1 MiB or more (MemTableSize/8 if smaller) are
	// rejected in this mode: Badger keeps them in its value log only.
	InMemory bool
	// SyncWrites makes every write durable on disk before it returns. When
	// false, a process crash loses nothing (writes are in the kernel's page
	// cache) but a machine crash may lose the last writes.
	SyncWrites bool
	// Logger receives Badger's log. Nil discards it.
	Logger *slog.Logger
	// MemTableSize is the size of one Badger memtable in bytes; zero means
	// Badger's default (64 MiB), or the share of CacheBytes. Memory use is
	// a small multiple of it.
	MemTableSize int64
	// CacheBytes is the memory Badger may hold for reading and writing:
	// a third for its two memtables (CacheBytes/6 each, 1–64 MiB), a
	// third for the level-0 table a full one is flushed to (Badger builds
	// it in memory first, in up to twice the memtable's size), the last
	// third for table indexes and Bloom filters (the index cache:
	// every lookup needs them, and tables beyond it are read back from
	// disk). There is no block cache: tables are not compressed, so a read
	// takes its block straight from the mapped file, and the kernel's page
	// cache is the block cache. The memtables come first: each one full is
	// flushed as a level-0 table, and small ones make many small tables,
	// which compaction then rewrites again and again and every read looks
	// through. None of these grows with the table. Two compactions run
	// at a time. Zero means Badger's defaults: a 256 MiB block cache,
	// every table's index in memory (which grows with the table), five
	// memtables of 64 MiB and four compactions at a time.
	CacheBytes int64
	// BlobBytes is the size from which a value of a family neither Sparse
	// nor Newest is stored as a blob, in Badger's value log (see blob.go);
	// zero means DefaultBlobBytes, a negative value keeps every value in
	// the LSM tree. Badger's value threshold is set to it as well. In
	// memory there are no blobs.
	BlobBytes int64
	// DiskReserve is the least free space the store keeps in its
	// directory's file system: Open fails and writes fail with
	// ErrDiskFull while there is less (see Disk space in space.go). The
	// store never keeps less than what Badger writes without being asked
	// (its memtables, their logs and a level-0 compaction; a few times
	// MemTableSize). Zero means DefaultDiskReserve; a negative value turns
	// the check off. Unused in memory.
	DiskReserve int64
}

// cacheOptions applies Options.CacheBytes to bo.
func cacheOptions(bo bdb.Options, cache int64) bdb.Options {
	if cache <= 0 {
		return bo
	}
	mem := min(max(cache/6, 1<<20), 64<<20)
	return bo.WithBlockCacheSize(0).
		WithIndexCacheSize(cache / 3).
		WithNumMemtables(2).
		WithMemTableSize(mem).
		// Two compactions at a time rather than four: each runs up to 13
		// table builders, whose tables are held in memory and then
		// written through a mapping of the whole file, so compactions at
		// once come as a burst of heap and mapped pages. At 100,000 pages
		// in bulk, one run each, two reached idle the sooner with the
		// smaller peak (docs/benchmarks/memory.md).
		WithNumCompactors(2)
}

// Store is a percolator.Store on an embedded Badger database. It holds the
// database directory's lock: no other process can open it meanwhile, so it
// implements percolator.ExclusiveStore.
type Store struct {
	closed atomic.Bool // set by Close; methods then return ErrClosed
	// broken holds the error of a failure that left Badger unusable; once
	// set, methods return it and never touch Badger again (see breaks).
	broken  atomic.Pointer[error]
	guard   *diskspace.Guard // of free space; nil in memory or without a reserve
	db      *bdb.DB
	dir     string // "" in memory
	mem     bool
	maxMem  int64 // in memory, the bound on values
	seed    maphash.Seed
	vh      verHashes // of the newest-version cache
	stripes *[nStripes]stripe
	// vers caches, per stripe, the newest version of columns of Newest
	// families (newest.go); vers[i] belongs to stripes[i]. It is apart
	// from the stripes so that they stay one line each, and in one array
	// so that finding a stripe's buckets loads nothing.
	vers *[nStripes]verCache
	// latest is a read-only transaction at the newest version, shared by
	// all point reads: a Badger transaction that only reads is safe for
	// concurrent use, and reading at the top saves one per read.
	latest *bdb.Txn

	// fams maps family names to their declaration. It is replaced, never
	// modified, so reads need no lock.
	fams  atomic.Pointer[famSet]
	famMu sync.Mutex // serializes EnsureFamilies

	// wseq counts writes; see stripe.last and cursor.
	wseq atomic.Uint64

	// gate is held for reading by every write and for writing by Compact
	// while it flushes the memtables, during which Badger rejects writes.
	gate sync.RWMutex

	// atGate is held for reading by CheckAndMutateRowAt from before it
	// takes a timestamp until its write is in Badger. ReadRows passes
	// through it for writing before it starts, so every commit whose
	// timestamp was taken before the scan began is visible to the scan,
	// including rows that do not exist until the commit lands.
	atGate sync.RWMutex

	compactMu sync.Mutex // serializes Compact
	discardMu sync.Mutex
	discardTs uint64 // guarded by discardMu

	blobMin int64         // the size from which values are blobs; 0: none
	blobSeq atomic.Uint64 // the last blob id taken

	intentSeq   atomic.Uint64 // the last intent's sequence (intent.go)
	maxTxnBytes int64         // the size of Badger's largest transaction
	log         *slog.Logger  // Options.Logger; may be nil

	// unhold unregisters the store from the memory budget's trimmer
	// (HoldMapped); set by Open.
	unhold func()
}

// Open opens (creating if needed) the store in dir.
func Open(dir string, opt Options) (*Store, error) {
	bo := bdb.DefaultOptions(dir).
		WithSyncWrites(opt.SyncWrites).
		WithDetectConflicts(false).
		WithNumVersionsToKeep(math.MaxInt32).
		// Uncompressed tables: decompressing blocks (Snappy, into fresh
		// buffers) took a tenth of a bulk crawl's CPU; the disk holds
		// about twice the bytes.
		WithCompression(options.None).
		// Level 0 takes ten memtables' tables before compaction merges
		// them into level 1 (Badger's default is five): Percolator writes
		// every cell several times (lock, data, write record, and the
		// deletions that follow), and compacting those sooner rewrote
		// what was about to be deleted. Reads look through the level-0
		// tables' Bloom filters.
		WithNumLevelZeroTables(10).
		WithNumLevelZeroTablesStall(30).
		WithLogger(nil)
	if opt.Logger != nil {
		bo = bo.WithLogger(logger{opt.Logger})
	}
	if opt.InMemory {
		dir = ""
		bo = bo.WithDir("").WithValueDir("").WithInMemory(true)
	}
	bo = cacheOptions(bo, opt.CacheBytes)
	if opt.MemTableSize == 0 && opt.CacheBytes > 0 {
		opt.MemTableSize = bo.MemTableSize
	}
	if opt.MemTableSize > 0 {
		// Badger requires a value to fit in one write batch, 15% of a
		// memtable; larger values go to the value log anyway.
		bo = bo.WithMemTableSize(opt.MemTableSize).
			WithValueThreshold(min(bo.ValueThreshold, opt.MemTableSize/8))
	}
	blobMin := opt.BlobBytes
	switch {
	case opt.InMemory || blobMin < 0:
		blobMin = 0
	case blobMin == 0:
		blobMin = DefaultBlobBytes
	}
	if blobMin > 0 {
		bo = bo.WithValueThreshold(min(bo.ValueThreshold, blobMin)).
			// Smaller value log files than Badger's 1 GiB, so that
			// collecting one frees its space soon after its blobs die.
			WithValueLogFileSize(64 << 20)
	}
	// Before Badger maps a byte: on a full disk it would fault.
	guard, err := startGuard(dir, bo, opt)
	if err != nil {
		return nil, err
	}
	db, err := bdb.OpenManaged(bo)
	if err != nil {
		if guard != nil {
			guard.Close()
		}
		return nil, fmt.Errorf("badger: open %q: %w", dir, err)
	}
	s := &Store{
		guard:   guard,
		db:      db,
		dir:     dir,
		mem:     opt.InMemory,
		maxMem:  bo.ValueThreshold,
		seed:    maphash.MakeSeed(),
		vh:      newVerHashes(),
		stripes: new([nStripes]stripe),
		vers:    newVers(),
		latest:  db.NewTransactionAt(math.MaxUint64, false),
		blobMin: blobMin,
		// Badger's own bound: 15% of a memtable.
		maxTxnBytes: bo.MemTableSize * 15 / 100,
		log:         opt.Logger,
	}
	if !s.mem {
		// Before anything reads the table: finish what a crash cut short.
		err = s.replayIntents()
	}
	// Tombstones written before this open are unknown, so assume one may
	// sit at any existing version.
	top := db.MaxVersion()
	for i := range s.stripes {
		s.stripes[i].tomb = top
		s.stripes[i].top.Store(top)
	}
	var fams map[string]*family
	if err == nil {
		fams, err = s.loadFamilies()
	}
	if err == nil {
		err = s.loadBlobSeq()
	}
	if err == nil {
		for _, f := range fams {
			if f.sparse {
				if err = s.loadSparse(f); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		db.Close()
		s.closeGuard()
		return nil, err
	}
	for i := range s.stripes {
		s.stripes[i].seq.Store(s.stripes[i].nextSeq())
	}
	s.fams.Store(newFamSet(fams))
	s.unhold = budget.RegisterHolder(s)
	return s, nil
}

// Close closes the database. In-flight calls must have returned. Close of
// a broken store (ErrBroken) leaves Badger as it is, since closing it
// would flush its broken memtables: its files stay consistent on disk and
// its directory stays locked until the process exits.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.unhold() // no trim holds the tables from here on
	s.closeGuard()
	if s.broken.Load() != nil {
		return nil
	}
	s.latest.Discard()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("badger: close: %w", err)
	}
	return nil
}

func (s *Store) closeGuard() {
	if s.guard != nil {
		s.guard.Close()
	}
}

// DB returns the underlying Badger database, in managed mode. Writing to it
// with keys that start with 'b', 'c', 'f', 'i' or 'z' corrupts the store.
func (s *Store) DB() *bdb.DB { return s.db }

// Size returns the disk space of the LSM tree's tables and of the value
// log files (which Badger preallocates sparsely). Memtables not yet
// flushed are not counted. In memory, lsm is the tables' size.
func (s *Store) Size() (lsm, vlog int64) {
	if s.mem {
		for _, t := range s.db.Tables() {
			lsm += int64(t.OnDiskSize)
		}
		return lsm, 0
	}
	// Not TableInfo.OnDiskSize: it adds the value log bytes that the
	// table's entries point to.
	ents, _ := os.ReadDir(s.dir)
	for _, e := range ents {
		n := e.Name()
		fi, err := e.Info()
		switch {
		case err != nil: // compacted away meanwhile
		case strings.HasSuffix(n, ".vlog"):
			vlog += diskUsage(fi)
		case strings.HasSuffix(n, ".sst"):
			lsm += diskUsage(fi)
		}
	}
	return lsm, vlog
}

// logger adapts a *slog.Logger to Badger's logger.
type logger struct{ l *slog.Logger }

func (l logger) Errorf(f string, a ...any)   { l.l.Error(msg(f, a)) }
func (l logger) Warningf(f string, a ...any) { l.l.Warn(msg(f, a)) }
func (l logger) Infof(f string, a ...any)    { l.l.Info(msg(f, a)) }
func (l logger) Debugf(f string, a ...any)   { l.l.Debug(msg(f, a)) }

func msg(f string, a []any) string { return strings.TrimSpace(fmt.Sprintf(f, a...)) }
