package percolator

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Dump writes the raw cells of rows [start, end) to w, one line per cell
// with Percolator's metadata decoded, like `fluo scan --raw`:
//
//	row  column  family@ts  what
//
// It reads the store directly, outside any transaction, so it also shows
// locks, uncommitted data and notifications. Internal rows are skipped
// unless start begins with 0x00.
func (db *DB) Dump(ctx context.Context, w io.Writer, start, end string) error {
	if start == "" {
		start = "\x01"
	}
	var werr error
	err := db.st.ReadRows(ctx, start, end, func(row string, cells []Cell) bool {
		for _, c := range cells {
			if _, werr = fmt.Fprintf(w, "%s\t%s\t%s@%d\t%s\n", quote(row), quote(c.Column), familyName(c.Family), c.Ts, describe(c)); werr != nil {
				return false
			}
		}
		return true
	}, Filter{Family: famData}, Filter{Family: famLock}, Filter{Family: famWrite}, Filter{Family: famNotify}, Filter{Family: famMeta})
	if err != nil {
		return err
	}
	return werr
}

// Lock is a lock in the table: a cell of a transaction that has neither
// committed nor rolled back yet, or whose writer died before it cleaned up.
type Lock struct {
	Row, Column string
	// StartTs is the start timestamp of the transaction.
	StartTs uint64
	// Primary is whether this is the transaction's primary lock, whose
	// fate decides the others'.
	Primary bool
	// Writer is the ID of the DB that took the lock.
	Writer string
}

// Locks returns the locks in the table, by row and column. Like Dump, it
// reads the store directly, outside any transaction; it resolves nothing
// (see CleanLocks).
func (db *DB) Locks(ctx context.Context) ([]Lock, error) {
	var locks []Lock
	err := db.scanLocks(ctx, func(row, col string, ts uint64, l lock) {
		locks = append(locks, Lock{Row: row, Column: col, StartTs: ts, Primary: l.primaryRow == row && l.primaryCol == col, Writer: l.writer})
	})
	if err != nil {
		return nil, err
	}
	return locks, nil
}

func familyName(f string) string {
	switch f {
	case famData:
		return "data"
	case famLock:
		return "lock"
	case famWrite:
		return "write"
	case famNotify:
		return "notify"
	case famMeta:
		return "meta"
	}
	return f
}

func describe(c Cell) string {
	switch c.Family {
	case famLock:
		l, err := decodeLock(c.Value)
		if err != nil {
			return err.Error()
		}
		s := fmt.Sprintf("%s primary=%s %s writer=%s wall=%d", kindName(l.kind), quote(l.primaryRow), quote(l.primaryCol), l.writer, l.wallMs)
		if l.inline {
			s += " value=" + preview(l.value)
		}
		return s
	case famWrite:
		wr, err := decodeWrite(c.Value)
		if err != nil {
			return err.Error()
		}
		s := fmt.Sprintf("%s start=%d", kindName(wr.kind), wr.startTs)
		if wr.inline {
			s += " value=" + preview(wr.value)
		}
		return s
	case famNotify:
		return "dirty"
	}
	return preview(c.Value)
}

func kindName(k byte) string {
	switch k {
	case kindPut:
		return "put"
	case kindDelete:
		return "delete"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// preview shows a value briefly: text quoted, binary as its length.
func preview(v []byte) string {
	if !utf8.Valid(v) {
		return fmt.Sprintf("<%d bytes>", len(v))
	}
	if len(v) > 60 {
		return strconv.Quote(string(v[:60])) + fmt.Sprintf("…(%d bytes)", len(v))
	}
	return strconv.Quote(string(v))
}

func quote(s string) string {
	q := strconv.Quote(s)
	if q[1:len(q)-1] == s {
		return s
	}
	return q
}
