// Package scaleout holds the tests and benchmarks of the whole pipeline
// as separate processes on one Cloud Bigtable table (the official
// emulator): a crawler, several indexers and search, as a deployment that
// outgrew one machine runs them. It has no code of its own.
package scaleout
