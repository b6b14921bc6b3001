// Package feed fills a serving index from the table: a Feeder reads the
// table's export queue in version order, skips exports older than what
// the index holds, applies the rest to the serving.Index in batches and
// records in each page row the version applied and when it became
// searchable (serve:time). Rebuild makes a fresh index from the table;
// LookupDoc describes one URL from the table and the index (DocInfo, GET
// /api/doc).
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
// # Replicas: one queue per index name
//
// Feeders of different names feed at once, each its own index: every
// name a feeder registered (webtable.IndexPrefix; registry.go) has its
// own export queue and its own column of what it applied
// (webtable.QueueOf; the default index keeps "!export/" and serve:time),
// and the export observer writes one queue entry per registered name. A
// table where no name is registered has the default index's queue alone,
// as before registries. A name registered at R missed the exports of the
// transactions that began before R: it is backfilling (web.Stats.IndexState)
// until the GC safe point passes R, and then its feeder applies every
// page's last export the index lacks from the table and marks it live.
// DropIndex retires a name.
//
// In a table of spread N > 1 (webtable.Spread: a Bigtable table's 16) each
// queue is N buckets by a hash of the page row; a look reads every bucket
// from one version at one snapshot and merges them in version order
// (readQueue), never past an entry of a bucket it did not read that far.
//
// Caveats: expiry is by wall clock, and the clocks of the processes must
// differ by less than FeederOptions.ClockSkew (a holder stops applying
// that long before its lease expires); were they further apart, fencing
// still keeps the table right and the new holder's copy whole, and the old
// holder applies to its own copy at most a batch it cannot record. A
// standby's copy of the index is not fed: it serves what it had until it
// takes over. A backfill waits for GC to pass the registration (with the
// engine's defaults, a minute or two) and reads every page row once. A
// registered name whose feeders are gone keeps getting queue entries
// until it is dropped; a name dropped while its feeder runs stops getting
// exports.
package feed
