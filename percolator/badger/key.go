package badger

import (
	"bytes"
	"strings"
)

// Badger keys. Every key starts with a tag byte so that no user-chosen
// locality group can collide with Badger's reserved "!badger!" prefix or with
// the store's own bookkeeping keys:
//
//	tagCell   esc(group) esc(row) esc(family) esc(column)   one Badger version per cell version
//	tagFamily family name                                    the persisted Family declaration
//	tagFlush  (nothing)                                      a throwaway key Compact drops to flush memtables
//	tagBlob   big-endian id                                  a large cell value (see blob.go)
//	tagIntent big-endian sequence, chunk                     what a write of several versions has left to do (see intent.go)
//
// esc(x) is x with every 0x00 replaced by 0x00 0xFF, followed by the
// terminator 0x00 0x01. The encoding is order-preserving and prefix-free: a <
// b as strings iff esc(a) < esc(b) as bytes, and no esc(a) is a proper prefix
// of another esc(b). So the keys of one row are exactly the keys with prefix
// tagCell+esc(group)+esc(row), rows of a group are contiguous and sorted, and
// a row range is a key range.
const (
	tagCell   = 'c'
	tagFamily = 'f'
	tagFlush  = 'z'
)

// appendEsc appends esc(s) to b.
func appendEsc(b []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		b = append(b, s[:i]...)
		b = append(b, 0x00, 0xFF)
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, 0x00, 0x01)
}

// cutEsc decodes the escaped string at the start of b and returns it with
// the rest of b. ok is false when b does not start with a well-formed
// escaped string.
func cutEsc(b []byte) (s string, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 || i+1 >= len(b) {
		return "", nil, false
	}
	if b[i+1] == 0x01 { // the common case: no 0x00 inside
		return string(b[:i]), b[i+2:], true
	}
	var out []byte
	for {
		if i < 0 || i+1 >= len(b) {
			return "", nil, false
		}
		switch b[i+1] {
		case 0x01:
			out = append(out, b[:i]...)
			return string(out), b[i+2:], true
		case 0xFF:
			out = append(out, b[:i]...)
			out = append(out, 0)
			b = b[i+2:]
			i = bytes.IndexByte(b, 0)
		default:
			return "", nil, false
		}
	}
}

// groupPrefix returns the prefix of every cell key of a locality group.
func groupPrefix(group string) []byte {
	return appendEsc([]byte{tagCell}, group)
}

// rowPrefix returns the prefix of every cell key of row in the group whose
// prefix is gp.
func rowPrefix(gp []byte, row string) []byte {
	return appendEsc(append(make([]byte, 0, len(gp)+len(row)+8), gp...), row)
}

// cellKey returns the key of (row, family, column) in the group whose prefix
// is gp.
func cellKey(gp []byte, row, family, column string) []byte {
	return appendCellKey(make([]byte, 0, len(gp)+len(row)+len(family)+len(column)+6), gp, row, family, column)
}

// appendCellKey appends the key of (row, family, column) in the group whose
// prefix is gp to b.
func appendCellKey(b, gp []byte, row, family, column string) []byte {
	b = append(b, gp...)
	b = appendEsc(b, row)
	b = appendEsc(b, family)
	return appendEsc(b, column)
}

// after returns the smallest key greater than every key that has the
// escaped-and-terminated prefix p. It relies on the terminator 0x00 0x01
// never being followed by 0x00 0x02 inside an escaped string.
func after(p []byte) []byte {
	q := append([]byte(nil), p...)
	q[len(q)-1]++
	return q
}

// parseCell splits a cell key, without its group prefix of length n, into
// row, family and column.
func parseCell(key []byte, n int) (row, family, column string, ok bool) {
	if len(key) < n {
		return "", "", "", false
	}
	b := key[n:]
	if row, b, ok = cutEsc(b); !ok {
		return
	}
	if family, b, ok = cutEsc(b); !ok {
		return
	}
	if column, b, ok = cutEsc(b); !ok {
		return
	}
	return row, family, column, len(b) == 0
}
