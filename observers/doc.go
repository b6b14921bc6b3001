// Package observers holds the indexing chain: the observers that turn a
// fetched page into an exported search document, each a small Percolator
// transaction triggered by a change to the column it observes.
//
// Not built yet: see the project's issues (notifications, indexing chain).
package observers
