// Package serving keeps the search index, fed by the indexing chain's export
// queue.
//
// Not built yet: see the project's issues (serving).
package serving
