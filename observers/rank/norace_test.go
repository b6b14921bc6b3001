//go:build !race

package rank_test

const raceEnabled = false
