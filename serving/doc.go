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
package serving
