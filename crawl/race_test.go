//go:build race

package crawl

const raceEnabled = true
