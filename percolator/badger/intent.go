package badger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	bdb "github.com/dgraph-io/badger/v4"
)

// # Writes of several versions, whole across crashes
//
// Badger replays a transaction after a crash all or nothing, because it
// marks the transaction's entries in its write-ahead log, but only when the
// entries all have one version (a managed transaction committed at that
// version). A write batch of several versions carries no marks: a crash in
// mid-write keeps any subset of its entries, in the order the batch's map
// happened to send them. Percolator's commits are such writes: a write
// record at the commit timestamp and the lock's deletion at the start
// timestamp, in one row. Keeping the deletion without the record loses a
// committed write for good, since no lock is left to roll it forward.
//
// So a write of several versions goes as a short sequence of single-version
// transactions with an intent: a record of what the write still has to do.
//
//   - The entries of the lowest version, with the intent holding every
//     other entry, in one transaction. Once it lands the write is decided.
//   - The entries of each other version, one transaction each.
//   - The entries of the highest version with a tombstone over the intent.
//
// A crash before the first transaction lands loses the whole write; after
// it, Open finds the intent live and writes its entries again (each sets or
// deletes one key at one version, so writing twice is writing once), then
// deletes it. No other write touches these rows until the write returns
// (the writer holds their stripes), so nothing newer can be undone by a
// replay.
//
// A write too large for one Badger transaction is logged first: the intent
// in chunks of their own, then its header (the decision), then the entries
// in a write batch, then the header's tombstone and the chunks'.
//
// In memory nothing survives a crash, and writes go in one write batch.

// tagIntent starts the key of an intent: tagIntent + big-endian sequence +
// big-endian chunk number, chunk 0 being the header.
const tagIntent = 'i'

// intentKey returns the key of chunk n of intent seq.
func intentKey(seq uint64, n uint32) []byte {
	k := binary.BigEndian.AppendUint64([]byte{tagIntent}, seq)
	return binary.BigEndian.AppendUint32(k, n)
}

// The header's first byte: the entries follow it, or live in chunks whose
// count follows as a uvarint.
const (
	intentInline  = 1
	intentChunked = 2
)

// appendIntent appends the encoding of entries to b: for each, its op, its
// key, its version and, for sets, its value (uvarint lengths).
func appendIntent(b []byte, entries []entry) []byte {
	for _, e := range entries {
		b = append(b, e.op)
		b = binary.AppendUvarint(b, uint64(len(e.key)))
		b = append(b, e.key...)
		b = binary.AppendUvarint(b, e.ver)
		if e.op == opSet || e.op == opBlob {
			b = binary.AppendUvarint(b, uint64(len(e.val)))
			b = append(b, e.val...)
		}
	}
	return b
}

// decodeIntent decodes what appendIntent encoded.
func decodeIntent(b []byte) ([]entry, error) {
	var out []entry
	bad := func(what string) error {
		return fmt.Errorf("%w: intent: %s at byte %d", ErrCorrupt, what, len(b))
	}
	bytesOf := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		v := slices.Clone(b[k : k+int(n)])
		b = b[k+int(n):]
		return v, true
	}
	for len(b) > 0 {
		var e entry
		e.op, b = b[0], b[1:]
		if e.op < opSet || e.op > opBlob {
			return nil, bad("unknown op")
		}
		var ok bool
		if e.key, ok = bytesOf(); !ok || len(e.key) == 0 {
			return nil, bad("bad key")
		}
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, bad("bad version")
		}
		e.ver, b = v, b[k:]
		if e.op == opSet || e.op == opBlob {
			if e.val, ok = bytesOf(); !ok {
				return nil, bad("bad value")
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// flushVersions writes entries of several versions as described above.
func (s *Store) flushVersions(entries []entry) error {
	groups := byVersion(entries)
	seq := s.intentSeq.Add(1)
	head := intentKey(seq, 0)
	var rest []entry
	for _, g := range groups[1:] {
		rest = append(rest, g...)
	}
	low, high := groups[0][0].ver, groups[len(groups)-1][0].ver
	first := append(slices.Clip(groups[0]), entry{key: head, ver: low, op: opSet, val: appendIntent([]byte{intentInline}, rest)})
	if err := s.commitStep(0, first); err != nil {
		if errors.Is(err, bdb.ErrTxnTooBig) {
			return s.flushLogged(entries)
		}
		return err
	}
	for i, g := range groups[1:] {
		if g[0].ver == high {
			g = append(slices.Clip(g), entry{key: head, ver: high, op: opTomb})
		}
		err := s.commitStep(1+i, g)
		if errors.Is(err, bdb.ErrTxnTooBig) {
			// The intent covers it: a write batch will do.
			err = s.batchStep(1+i, g)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// flushLogged writes entries too large for one transaction: the intent in
// chunks, its header, the entries in a write batch, the intent's deletion.
func (s *Store) flushLogged(entries []entry) error {
	seq := s.intentSeq.Add(1)
	payload := appendIntent(nil, entries)
	size := s.chunkBytes()
	step := 0
	var chunks uint32
	for off := 0; off < len(payload); off += size {
		chunks++
		c := entry{key: intentKey(seq, chunks), ver: 1, op: opSet, val: payload[off:min(off+size, len(payload))]}
		if err := s.commitStep(step, []entry{c}); err != nil {
			return err
		}
		step++
	}
	head := entry{key: intentKey(seq, 0), ver: 1, op: opSet, val: binary.AppendUvarint([]byte{intentChunked}, uint64(chunks))}
	if err := s.commitStep(step, []entry{head}); err != nil {
		return err
	}
	if err := s.batchStep(step+1, entries); err != nil {
		return err
	}
	return s.dropIntent(seq, 1, chunks)
}

// dropIntent deletes intent seq, written at version ver with chunks
// chunks: the header first, so that no part of the intent is ever live
// without the rest.
func (s *Store) dropIntent(seq, ver uint64, chunks uint32) error {
	if err := s.commitAt([]entry{{key: intentKey(seq, 0), ver: ver, op: opTomb}}); err != nil {
		return err
	}
	if chunks == 0 {
		return nil
	}
	tombs := make([]entry, chunks)
	for i := range tombs {
		tombs[i] = entry{key: intentKey(seq, uint32(i+1)), ver: 1, op: opTomb}
	}
	return s.writeBatch(tombs)
}

// chunkBytes is the size of an intent's chunk: a quarter of the largest
// Badger transaction.
func (s *Store) chunkBytes() int {
	return int(max(s.maxTxnBytes/4, 1<<10))
}

// byVersion groups entries by version, versions ascending, entries in
// their order within each.
func byVersion(entries []entry) [][]entry {
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(a, b entry) int {
		switch {
		case a.ver < b.ver:
			return -1
		case a.ver > b.ver:
			return 1
		}
		return 0
	})
	var groups [][]entry
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].ver == sorted[i].ver {
			j++
		}
		groups = append(groups, sorted[i:j:j])
		i = j
	}
	return groups
}

// commitStep writes entries, which have one version, in one transaction:
// step i of a write, for testHookStep.
func (s *Store) commitStep(i int, entries []entry) error {
	if testHookStep != nil {
		if _, stop := testHookStep(i, false, len(entries)); stop != nil {
			return stop
		}
	}
	return s.commitAt(entries)
}

// batchStep writes entries in a write batch, not atomically: step i of a
// write, for testHookStep.
func (s *Store) batchStep(i int, entries []entry) error {
	if testHookStep != nil {
		if keep, stop := testHookStep(i, true, len(entries)); stop != nil {
			var part []entry
			for j, e := range entries {
				if keep(j) {
					part = append(part, e)
				}
			}
			if len(part) > 0 {
				if err := s.writeBatch(part); err != nil {
					return err
				}
			}
			return stop
		}
	}
	return s.writeBatch(entries)
}

// testHookStep, if set, runs before each Badger write of a write of
// several versions or a logged one: step i, in a write batch or a
// transaction, of n entries. A non-nil stop ends the write there, as a
// crash would, after writing the entries of a write batch that keep
// selects (a transaction's are all lost).
var testHookStep func(i int, batch bool, n int) (keep func(int) bool, stop error)

// testForceLogged, if set, makes every write on disk a logged one.
var testForceLogged bool

// replayIntents finishes the writes whose intents a crash left: it writes
// their entries again and deletes them. It also deletes the chunks of
// intents whose header never landed, and sets the intent sequence above
// every intent seen. It runs in Open, before anything reads the table.
func (s *Store) replayIntents() error {
	type intent struct {
		seq    uint64
		ver    uint64
		head   []byte   // nil: no live header
		chunks [][]byte // by number - 1; nil where not live
	}
	var (
		list   []*intent
		maxSeq uint64
	)
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewIterator(bdb.IteratorOptions{Prefix: []byte{tagIntent}, AllVersions: true})
	defer it.Close()
	var lastKey []byte
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		key := item.Key()
		if len(key) != 13 {
			return fmt.Errorf("%w: intent key %q", ErrCorrupt, key)
		}
		seq, n := binary.BigEndian.Uint64(key[1:9]), binary.BigEndian.Uint32(key[9:])
		maxSeq = max(maxSeq, seq)
		if slices.Equal(key, lastKey) {
			continue // an older version: the newest decides
		}
		lastKey = item.KeyCopy(lastKey)
		if item.IsDeletedOrExpired() {
			continue
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("badger: read intent: %w", err)
		}
		if len(list) == 0 || list[len(list)-1].seq != seq {
			list = append(list, &intent{seq: seq})
		}
		in := list[len(list)-1]
		if n == 0 {
			in.head, in.ver = v, item.Version()
			continue
		}
		for uint32(len(in.chunks)) < n {
			in.chunks = append(in.chunks, nil)
		}
		in.chunks[n-1] = v
	}
	s.intentSeq.Store(max(maxSeq, uint64(time.Now().UnixNano())))
	for _, in := range list {
		if err := s.replayIntent(in.seq, in.ver, in.head, in.chunks); err != nil {
			return err
		}
	}
	return nil
}

// replayIntent finishes intent seq, whose header (nil if not live) has
// version ver, and deletes it.
func (s *Store) replayIntent(seq, ver uint64, head []byte, chunks [][]byte) error {
	if head == nil {
		// A logged write that crashed before its decision: drop the chunks.
		return s.dropIntent(seq, 1, uint32(len(chunks)))
	}
	var payload []byte
	switch head[0] {
	case intentInline:
		payload = head[1:]
		chunks = nil
	case intentChunked:
		n, k := binary.Uvarint(head[1:])
		if k <= 0 || n != uint64(len(chunks)) {
			return fmt.Errorf("%w: intent %d: header says %d chunks, %d found", ErrCorrupt, seq, n, len(chunks))
		}
		for i, c := range chunks {
			if c == nil {
				return fmt.Errorf("%w: intent %d: chunk %d missing", ErrCorrupt, seq, i+1)
			}
			payload = append(payload, c...)
		}
	default:
		return fmt.Errorf("%w: intent %d: header kind %d", ErrCorrupt, seq, head[0])
	}
	entries, err := decodeIntent(payload)
	if err != nil {
		return fmt.Errorf("intent %d: %w", seq, err)
	}
	if len(entries) > 0 {
		if err := s.writeBatch(entries); err != nil {
			return err
		}
	}
	if s.log != nil {
		s.log.Info("badger: finished a write a crash interrupted", "entries", len(entries))
	}
	return s.dropIntent(seq, ver, uint32(len(chunks)))
}
