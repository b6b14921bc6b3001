package extract

import (
	"math/bits"
	"strings"
	"unicode"
)

// simHash returns the 64-bit similarity fingerprint of text: a simhash
// over its word 3-shingles (words lower-cased, split at anything neither
// letter nor digit), each shingle weighing the same. Texts that differ in a
// few words have fingerprints a few bits apart; 0 for a text of no words.
// Call it on Page.Text, which leaves boilerplate out.
func simHash(text string) uint64 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	if len(words) == 0 {
		return 0
	}
	const k = 3
	var v [64]int
	add := func(h uint64) {
		for i := range 64 {
			if h&(1<<i) != 0 {
				v[i]++
			} else {
				v[i]--
			}
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

// simDistance is the number of bits two fingerprints differ in.
func simDistance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

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
