package extract

import (
	"unicode"
	"unicode/utf8"
)

// collapser accumulates text with every run of whitespace (and control
// characters) turned into one space, and none at either end. Input must be
// valid UTF-8; stray invalid bytes are written as U+FFFD all the same.
type collapser struct {
	b     []byte
	limit int  // bytes kept in b (0: no limit), cut at a rune boundary
	full  bool // limit reached: b takes no more
	space bool // a space is owed before the next visible rune
	any   bool // a visible rune has been written
	// hash, if set, is fed all the collapsed text, the part past limit too.
	hash *lowerHasher
	// discard keeps nothing in b: the collapser only hashes and counts.
	discard bool
	// n counts the bytes of collapsed text written, past limit too.
	n int
}

// brk marks a word boundary, as a block element's edge does.
func (c *collapser) brk() { c.space = true }

func (c *collapser) write(s []byte) {
	for i := 0; i < len(s); {
		if c.full && c.hash == nil {
			return
		}
		ch := s[i]
		if ch < utf8.RuneSelf {
			if ch <= ' ' || ch == 0x7f {
				c.space = true
				i++
				continue
			}
			j := i + 1
			for j < len(s) && s[j] > ' ' && s[j] < 0x7f {
				j++
			}
			c.put(s[i:j])
			i = j
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			c.put([]byte("\uFFFD"))
		case unicode.IsSpace(r) || unicode.IsControl(r):
			c.space = true
		default:
			c.put(s[i : i+n])
		}
		i += n
	}
}

// put appends p, a run of visible characters, preceded by the owed space.
func (c *collapser) put(p []byte) {
	sp := c.space && c.any
	c.space, c.any = false, true
	c.n += len(p)
	if sp {
		c.n++
	}
	if c.discard {
		if c.hash != nil {
			if sp {
				c.hash.Write([]byte{' '})
			}
			c.hash.Write(p)
		}
		return
	}
	if c.hash != nil {
		if sp {
			c.hash.Write([]byte{' '})
		}
		c.hash.Write(p)
	}
	if c.full {
		return
	}
	need := len(p)
	if sp {
		need++
	}
	if c.limit > 0 && len(c.b)+need > c.limit {
		c.full = true
		room := c.limit - len(c.b) - (need - len(p))
		for room > 0 && !utf8.RuneStart(p[room]) {
			room--
		}
		if room <= 0 {
			return
		}
		p = p[:room]
	}
	if sp {
		c.b = append(c.b, ' ')
	}
	c.b = append(c.b, p...)
}

func (c *collapser) String() string { return string(c.b) }

// rewind drops what was written after the first n bytes of b, as if a
// block boundary came there.
func (c *collapser) rewind(n int) {
	if n >= len(c.b) {
		return
	}
	c.b = c.b[:n]
	c.full = false
	c.any = n > 0
	c.space = true
}

func (c *collapser) reset() {
	c.b, c.full, c.space, c.any = c.b[:0], false, false, false
}

// truncateRunes returns s cut to at most n runes, without a trailing space.
func truncateRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return s
	}
	s = s[:i]
	if len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
