package bigtable

import (
	"sync/atomic"

	"cloud.google.com/go/bigtable"
)

// The data calls a Store sends, by kind: what a deployment's load on
// Bigtable is made of (Store.Calls).
const (
	callReadRow = iota
	callReadRows
	callReadAll
	callReadRowList
	callMutateRows
	callCheckAndMutate
	callReadModifyWrite
	callIndexRead
	callIndexWrite
	nCalls
)

var callNames = [nCalls]string{
	callReadRow:         "ReadRow",
	callReadRows:        "ReadRows",
	callReadAll:         "ReadRows(all)",
	callReadRowList:     "ReadRows(list)",
	callMutateRows:      "MutateRows",
	callCheckAndMutate:  "CheckAndMutateRow",
	callReadModifyWrite: "ReadModifyWriteRow",
	callIndexRead:       "index ReadRows",
	callIndexWrite:      "index writes",
}

// calls counts a Store's data calls.
type calls [nCalls]atomic.Int64

func (c *calls) add(kind int) { c[kind].Add(1) }

// Calls returns how many data calls of each kind the store sent (retries
// by the client library count once), by name; kinds not sent are left
// out. "ReadRows(all)" are the scans of the whole table (GC, lock sweeps,
// page counts), which read every row server side whatever their filters;
// "ReadRows" the scans of a key range.
func (s *Store) Calls() map[string]int64 {
	out := make(map[string]int64)
	for k := range nCalls {
		if n := s.calls[k].Load(); n > 0 {
			out[callNames[k]] = n
		}
	}
	return out
}

// wholeTable is how the range of a scan of every row prints.
var wholeTable = bigtable.InfiniteRange("").String()

// IndexRows returns how many rows the store's scans have read from the
// group index: notifications read by workers' scans (each scan reads the
// notifications of the buckets it asks for).
func (s *Store) IndexRows() int64 { return s.indexRows.Load() }
