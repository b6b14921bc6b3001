package percolator

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The physical families Percolator keeps in the store (Figure 5 of the
// paper). A user column C of row R is stored as cells (R, d:C), (R, l:C),
// (R, w:C) and (R, n:C).
const (
	famData   = "d" // d:C@start_ts holds the value, too long to inline, written by the transaction that started at start_ts
	famLock   = "l" // l:C@start_ts holds an uncommitted transaction's lock
	famWrite  = "w" // w:C@commit_ts holds a write record pointing at d:C@start_ts
	famNotify = "n" // n:C@ts marks C dirty for its observer (own locality group)
	famMeta   = "m" // internal bookkeeping: oracle high-water mark, GC safe point, workers
)

// notifyGroup is the locality group of the notify family, so the
// notification scanner never reads data cells.
const notifyGroup = "notify"

var schema = []Family{
	{Name: famData},
	{Name: famLock, LocalityGroup: "lock", Sparse: true},
	{Name: famWrite, Newest: true},
	{Name: famNotify, LocalityGroup: notifyGroup},
	{Name: famMeta},
}

// Kinds of write records and locks.
const (
	kindPut    byte = 1
	kindDelete byte = 2
)

// lock is the content of a l:C cell. The lock of the primary cell is the
// transaction's commit point; every other lock points at it.
type lock struct {
	kind       byte
	primaryRow string
	primaryCol string
	writer     string // DB instance that took the lock
	wallMs     int64  // wall time of the lock, refreshed during long commits
	ttlMs      int64  // the writer's LockTTL, so any reader judges staleness alike
	// inline marks a put whose short value is in the lock rather than in a
	// d:C cell, so that a commit or roll-forward can inline it in the write
	// record and the cell never has a d:C version.
	inline bool
	value  []byte
}

const lockVersion = 1

func (l lock) encode() []byte {
	b := make([]byte, 0, 33+len(l.primaryRow)+len(l.primaryCol)+len(l.writer)+len(l.value))
	b = append(b, lockVersion, l.kind)
	b = appendString(b, l.primaryRow)
	b = appendString(b, l.primaryCol)
	b = appendString(b, l.writer)
	b = binary.AppendVarint(b, l.wallMs)
	b = binary.AppendVarint(b, l.ttlMs)
	if l.inline {
		b = append(b, 1)
		b = append(b, l.value...)
	}
	return b
}

func decodeLock(b []byte) (lock, error) {
	var l lock
	if len(b) < 2 || b[0] != lockVersion {
		return l, errCorrupt("lock", b)
	}
	l.kind = b[1]
	d := decoder{b: b[2:]}
	l.primaryRow = d.string()
	l.primaryCol = d.string()
	l.writer = d.string()
	l.wallMs = d.varint()
	l.ttlMs = d.varint()
	if d.err != nil {
		return l, errCorrupt("lock", b)
	}
	if len(d.b) > 0 {
		if d.b[0] != 1 {
			return l, errCorrupt("lock", b)
		}
		l.inline, l.value = true, d.b[1:]
	}
	return l, nil
}

// write is the content of a w:C cell: the commit of the transaction that
// started at startTs. Short values are stored in the record itself (as TiKV
// does), so a read is a single lookup; longer ones stay in d:C@startTs.
// Until the commit, a short value waits in the lock (see lock.inline).
type write struct {
	kind    byte
	startTs uint64
	inline  bool
	value   []byte
}

func (w write) encode() []byte {
	b := make([]byte, 0, 12+len(w.value))
	b = append(b, w.kind)
	b = binary.AppendUvarint(b, w.startTs)
	if w.inline {
		b = append(b, 1)
		b = append(b, w.value...)
	}
	return b
}

func decodeWrite(b []byte) (write, error) {
	var w write
	if len(b) < 2 || (b[0] != kindPut && b[0] != kindDelete) {
		return w, errCorrupt("write record", b)
	}
	w.kind = b[0]
	ts, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return w, errCorrupt("write record", b)
	}
	w.startTs = ts
	if rest := b[1+n:]; len(rest) > 0 {
		if rest[0] != 1 {
			return w, errCorrupt("write record", b)
		}
		w.inline = true
		w.value = rest[1:]
	}
	return w, nil
}

// inlinedPut returns the value of b, an encoded write record, when it is a
// put with its value inlined, the common record: what decodeWrite would
// put in write.value, without building the record. ok is false for every
// other b, which decodeWrite then decodes or rejects.
func inlinedPut(b []byte) (v []byte, ok bool) {
	if len(b) < 3 || b[0] != kindPut {
		return nil, false
	}
	// The start timestamp's uvarint: bytes with the high bit set, then one
	// without, ten bytes at most, as binary.Uvarint reads it (a tenth byte
	// above 1 overflows). Timestamps stay below 2^52, eight bytes of it,
	// but decodeWrite takes longer and overlong spellings too.
	i := 1
	for i < len(b) && i < binary.MaxVarintLen64 && b[i]&0x80 != 0 {
		i++
	}
	if i+1 >= len(b) || b[i]&0x80 != 0 || i == binary.MaxVarintLen64 && b[i] > 1 || b[i+1] != 1 {
		return nil, false
	}
	return b[i+2:], true
}

func encodeInt64(v int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(v))
}

func decodeInt64(b []byte) int64 {
	if len(b) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads what appendString and binary.AppendVarint wrote; the first
// failure sticks in err.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("short buffer")

func (d *decoder) string() string {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || uint64(len(d.b)-k) < n {
		d.err = errShort
		return ""
	}
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}

func (d *decoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[k:]
	return v
}

func errCorrupt(what string, b []byte) error {
	return fmt.Errorf("percolator: corrupt %s cell (%d bytes)", what, len(b))
}
