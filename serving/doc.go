// Package serving keeps the search index, fed by the indexing chain's export
// queue.
//
// An Index is a Bleve index of the canonical documents (mapping.go),
// searched with BM25 scaled by PageRank (Search). A Feeder reads the
// table's export queue in version order, skips exports older than what the
// index holds, applies the rest to the Index in batches and records in each
// page row the version applied and when it became searchable (serve:time).
// BuildIndex and Rebuild make a fresh index from a document set or from the
// table; LookupDoc describes one URL from the table. The types of api.go
// are what the web UI and the JSON API show.
//
// # One feeder per index
//
// An index has a name (FeederOptions.Name). On a table that several
// processes open (Cloud Bigtable), the feeders of one name elect one of
// them: a feeder applies the queue only while it holds the lease row of
// its name (webtable.FeederLeaseRow), renewed every Lease/5 and released
// when Run returns; the others stand by and take over when the lease is
// released or expires. A new holder first writes the fencing cell
// (webtable.FedBy), which every batch it records reads and writes, so
// that no batch of a predecessor that believes it still holds the lease
// commits after the takeover; then it catches its copy of the index up
// with what the table says the index has (webtable.SearchableAt), since
// what its predecessor applied is gone from the queue, unless the cell
// held the id its copy was last fed under (a restart: nobody else fed
// it). On an
// ExclusiveStore (embedded Badger) there is one process and no lease.
//
// Caveats: expiry is by wall clock, and the clocks of the processes must
// differ by less than FeederOptions.ClockSkew (a holder stops applying
// that long before its lease expires); were they further apart, fencing
// still keeps the table right and the new holder's copy whole, and the old
// holder applies to its own copy at most a batch it cannot record. The
// table has one export queue, so one index name consumes it: a feeder of
// another name stands by while one of the first holds its lease (two
// starting at the same instant both stand by a while). A standby's copy
// of the index is not fed: it serves what it had until it takes over.
package serving
