package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"unicode"
	"unicode/utf8"
)

// lowerHasher is a SHA-256 of what is written to it, lower-cased rune by
// rune with unicode.ToLower (as strings.ToLower does). It is fed collapsed
// text, so pages that differ only in markup, whitespace or letter case hash
// alike.
type lowerHasher struct {
	h   hash.Hash
	buf [4096]byte
	n   int
}

func newLowerHasher() *lowerHasher { return &lowerHasher{h: sha256.New()} }

// Write takes valid UTF-8, whole runes per call.
func (l *lowerHasher) Write(p []byte) {
	for i := 0; i < len(p); {
		if l.n > len(l.buf)-utf8.UTFMax {
			l.h.Write(l.buf[:l.n])
			l.n = 0
		}
		c := p[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			l.buf[l.n] = c
			l.n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		l.n += utf8.EncodeRune(l.buf[l.n:], unicode.ToLower(r))
		i += size
	}
}

// Sum returns the hex digest.
func (l *lowerHasher) Sum() string {
	l.h.Write(l.buf[:l.n])
	l.n = 0
	return hex.EncodeToString(l.h.Sum(nil))
}
