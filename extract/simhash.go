package extract

import (
	"math/bits"
	"strings"
	"unicode"
)

// SimHashMinWords is the fewest words a text must have for SimHash to
// fingerprint it: in a shorter text one changed word is most of its
// shingles, and two short pages that share a sentence (a heading and a
// "see also") are not copies of each other.
const SimHashMinWords = 10

// SimHash returns the 64-bit similarity fingerprint of text (Charikar's
// simhash): over its word 3-shingles (see words: a word with a digit
// counts as any other such word), each distinct shingle weighing the same
// (a shingle repeated, as in a table of figures, counts once). Texts that
// differ in a few words have fingerprints a few bits apart (a changed word
// changes 3 shingles); unrelated texts about 32. It returns 0 for a text of
// fewer than SimHashMinWords words: no fingerprint. Call it on Page.Text,
// which leaves boilerplate out, so that pages sharing a site's navigation
// are not alike for it.
func SimHash(text string) uint64 {
	h := simHash(text)
	if h == 0 || wordCount(text) < SimHashMinWords {
		return 0
	}
	return h
}

// SimDistance is the number of bits two fingerprints differ in.
func SimDistance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// words splits text as the fingerprint reads it: lower-cased, at
// anything neither letter nor digit, and every word with a digit in it
// read as "0": the dates, counters, ids and version numbers that change
// from one copy of a page to the next do not change its fingerprint.
func words(text string) []string {
	ws := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	for i, w := range ws {
		if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			ws[i] = "0"
		}
	}
	return ws
}

// wordCount is len(words(text)), without the words.
func wordCount(text string) int {
	n, in := 0, false
	for _, r := range text {
		w := unicode.IsLetter(r) || unicode.IsNumber(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// simHash is SimHash without the minimum: 0 only for a text of no words.
func simHash(text string) uint64 {
	words := words(text)
	if len(words) == 0 {
		return 0
	}
	const k = 3
	var v [64]int
	seen := make(map[uint64]bool, len(words))
	add := func(h uint64) {
		if seen[h] {
			return // a set of shingles: a repeated one counts once
		}
		seen[h] = true
		for i := range 64 {
			v[i] += int(h>>i&1)<<1 - 1 // +1 for a set bit, -1 for a clear one
		}
	}
	if len(words) < k {
		add(shingleHash(words))
	}
	for i := 0; i+k <= len(words); i++ {
		add(shingleHash(words[i : i+k]))
	}
	var h uint64
	for i := range 64 {
		if v[i] > 0 {
			h |= 1 << i
		}
	}
	return h
}

// simDistance is SimDistance.
func simDistance(a, b uint64) int { return SimDistance(a, b) }

// shingleHash is FNV-1a over the words (a 0xff byte, which UTF-8 never
// holds, after each), finished by splitmix64's mixer so that every bit
// depends on every byte.
func shingleHash(words []string) uint64 {
	h := uint64(14695981039346656037)
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			h ^= uint64(w[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
