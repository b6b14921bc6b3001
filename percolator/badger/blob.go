package badger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	bdb "github.com/dgraph-io/badger/v4"
)

// # Blobs
//
// A large cell value (BlobBytes or more, in a family neither Sparse nor
// Newest) is stored apart from its cell, as a blob: the cell's entry has
// user meta metaBlob and holds the blob's id, and the blob is its own
// Badger key, tagBlob + id, whose value Badger keeps in its value log.
// Compaction then moves an 8-byte id where it would copy the value, level
// after level: page bodies and documents are most of what Percolator
// writes, and rewriting them was the bulk of a crawl's compaction work.
//
// Why not simply let Badger put large cell values in its value log? A
// deleted cell version is hidden by an entry at the same key and version
// (see the package comment), and Badger's compaction drops the shadowed
// entry without counting its value as garbage: the value log files are
// never picked for collection and grow without bound. A blob is written
// once, under an id no other write uses, at the cell's version, and
// deleted by a tombstone one version above it, in the same write as the
// cell's deletion. Compaction sees that tombstone over the value, drops
// both once the version is below the discard timestamp, and counts the
// value, so Compact's value log collection finds the files to rewrite.
//
// A write that sets a blob writes the blob before the cell's entry, and a
// deletion writes the cell's tombstone or marker before the blob's: a crash
// in between (a write batch of several versions is not atomic) can leave an
// unreferenced blob, never a cell whose blob is missing.

// tagBlob starts the key of a blob: tagBlob + big-endian id.
const tagBlob = 'b'

// DefaultBlobBytes is the size from which values are stored as blobs when
// Options.BlobBytes is zero.
const DefaultBlobBytes = 1 << 10

// blobKey returns the Badger key of blob id.
func blobKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{tagBlob}, id)
}

// blobID decodes the id a metaBlob entry holds.
func blobID(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: blob reference of %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// isLive reports whether an entry's user meta is that of a live cell.
func isLive(meta byte) bool {
	return meta == metaLive || meta == metaEmpty || meta == metaBlob
}

// mayBlob reports whether family f may hold blobs.
func (s *Store) mayBlob(f *family) bool {
	return s.blobMin > 0 && !f.sparse && !f.newest
}

// blobbed reports whether a value written to family f is stored as a blob.
func (s *Store) blobbed(f *family, val []byte) bool {
	return int64(len(val)) >= s.blobMin && s.mayBlob(f)
}

// newBlob returns an id that no blob in Badger has (see loadBlobSeq).
func (s *Store) newBlob() uint64 { return s.blobSeq.Add(1) }

// loadBlobSeq sets the blob id sequence above every blob in Badger.
func (s *Store) loadBlobSeq() error {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	// Deleted blobs too, while their tombstones last: an id is taken again
	// only once compaction has dropped everything of its blob, and the
	// cells that referred to it are hidden by then.
	it := txn.NewIterator(bdb.IteratorOptions{Prefix: []byte{tagBlob}, Reverse: true, AllVersions: true})
	defer it.Close()
	it.Seek(blobKey(math.MaxUint64))
	if !it.Valid() {
		return nil
	}
	key := it.Item().Key()
	if len(key) != 9 {
		return fmt.Errorf("%w: blob key %q", ErrCorrupt, key)
	}
	s.blobSeq.Store(binary.BigEndian.Uint64(key[1:]))
	return nil
}

// itemValue returns a copy of a live item's cell value (nil when empty),
// reading its blob if it has one.
func (s *Store) itemValue(item *bdb.Item) ([]byte, error) {
	switch item.UserMeta() {
	case metaEmpty:
		return nil, nil
	case metaBlob:
		id, err := blobRef(item)
		if err != nil {
			return nil, err
		}
		return s.blobValue(id)
	}
	v, err := item.ValueCopy(nil)
	if len(v) == 0 {
		v = nil
	}
	return v, err
}

// errBlobMissing is returned for a cell whose blob is gone. Under a
// seqlock read it means that a write deleted the cell meanwhile (the read
// is retried); otherwise the store is corrupt.
var errBlobMissing = fmt.Errorf("%w: blob missing", ErrCorrupt)

// blobValue returns a copy of blob id's value.
func (s *Store) blobValue(id uint64) ([]byte, error) {
	item, err := s.latest.Get(blobKey(id))
	if errors.Is(err, bdb.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: id %d", errBlobMissing, id)
	}
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

// blobRef returns the id of the blob a live item refers to, or 0.
func blobRef(item *bdb.Item) (uint64, error) {
	if item.UserMeta() != metaBlob {
		return 0, nil
	}
	var id uint64
	err := item.Value(func(v []byte) error {
		var err error
		id, err = blobID(v)
		return err
	})
	return id, err
}

// replacedBlobs adds to b the deletions of the blobs that its probes
// replace: a cell set again at a version whose value was a blob. Only
// writes at or below the highest version of their stripe are probed (a
// new version is above it, unless another row of the stripe has been
// written at a later timestamp). The caller holds the stripes of the
// cells' rows.
func (s *Store) replacedBlobs(b *batch) error {
	for _, p := range b.probes {
		txn := s.db.NewTransactionAt(p.ver, false)
		item, err := txn.Get(p.key)
		var id uint64
		switch {
		case errors.Is(err, bdb.ErrKeyNotFound):
			err = nil
		case err == nil && item.Version() == p.ver:
			id, err = blobRef(item)
		}
		txn.Discard()
		if err != nil {
			return fmt.Errorf("badger: write %q: %w", p.key, err)
		}
		deleteBlob(b, version{ts: p.ver - 1, blob: id})
	}
	return nil
}
