// Package serving is the search index: a Bleve index of the canonical
// documents (mapping.go), searched with BM25 over the fields' measured
// mean lengths (fieldlen.go) scaled by PageRank and link density
// (Search, rank.go), with forgiving queries (relax.go, suggest.go),
// snippets and bounded costs (limits.go, space.go). Apply writes a batch
// of updates; BuildIndex makes a fresh index from a document set. The
// types of api.go are what a search returns. Package serving/feed fills
// the index from the table's export queue.
package serving
