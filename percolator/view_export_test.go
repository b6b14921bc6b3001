package percolator

import "fmt"

// TxLeftovers describes what tx, a View's, still holds of an earlier use
// when its function is called: "" for nothing.
func TxLeftovers(tx *Tx) string {
	var s string
	if tx.done || tx.commitTs != 0 || !tx.readOnly || tx.crash != nil {
		s += fmt.Sprintf(" done=%v commitTs=%d readOnly=%v crash=%v", tx.done, tx.commitTs, tx.readOnly, tx.crash != nil)
	}
	if tx.writes != nil || tx.cache != nil || tx.reads != nil {
		s += fmt.Sprintf(" writes=%d cache=%d reads=%d", len(tx.writes), len(tx.cache), len(tx.reads))
	}
	if tx.pr == nil {
		return s + " no point read space"
	}
	if tx.pr.busy || tx.pr.pooled || tx.pr.fs != [2]Filter{} {
		s += fmt.Sprintf(" point read busy=%v pooled=%v filters=%+v", tx.pr.busy, tx.pr.pooled, tx.pr.fs)
	}
	for _, c := range tx.pr.cells {
		if c.Family != "" || c.Column != "" || c.Value != nil {
			s += fmt.Sprintf(" cell %+v", c)
		}
	}
	return s
}

// ReadsThroughPointReader reports whether db's point reads pass the store
// their key buffer (the store implements pointReader).
func ReadsThroughPointReader(db *DB) bool { return db.pt != nil }
