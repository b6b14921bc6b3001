package observers

import "testing"

// SetMaxLinkChanges makes one links run publish at most n changed links
// for the rest of the test.
func SetMaxLinkChanges(t testing.TB, n int) {
	old := maxLinkChanges
	maxLinkChanges = n
	t.Cleanup(func() { maxLinkChanges = old })
}

// SetMaxInCells makes a page row keep at most n inbound links (spillIn)
// for the rest of the test.
func SetMaxInCells(t testing.TB, n int) {
	old := maxInCells
	maxInCells = n
	t.Cleanup(func() { maxInCells = old })
}
