//go:build race

package rank_test

// raceEnabled scales the randomized tests down: the race detector makes
// every observer run about eight times slower.
const raceEnabled = true
