// Package observers is the indexing chain: observers that turn a fetched
// page into an exported search document, each a small Percolator
// transaction triggered by a change to the column it observes (section 2.4
// of the paper):
//
//	fetch:body ─parse─▶ page:* ─┬─ page:links ─links─▶ in:SRC on targets ─┐
//	                            ├─ page:hash ─cluster─▶ !dup/HASH ─elect─▶ cluster:canon
//	                            ├─ page:simhash ─near─▶ !near/B/VVVV/ROW ─near-docs─▶ doc:dirty
//	                            └─ !rank/BLOCK rg:ROW ─rank─▶ rank:value ┤
//	                                                  doc:dirty ─export─▶ !export/ queue
//
// The weak columns (rank:dirty, dup:dirty, doc:dirty, near:dirty; dup:ranked and
// doc:linked for the background elect-rank and export-links) carry work to
// hot rows without conflicts. Chain returns the observers in order; cmd/indexer,
// cmd/search and the freshness experiment run it.
package observers
