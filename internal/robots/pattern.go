package robots

import (
	"net/url"
	"strings"
)

// match reports whether pattern matches path from its start: '*' matches
// any characters, and a '$' that ends the pattern matches the path's end
// (anywhere else '$' is itself).
func match(path, pattern string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	seg, rest, wild := strings.Cut(pattern, "*")
	if !strings.HasPrefix(path, seg) {
		return false
	}
	path = path[len(seg):]
	if !wild {
		return !anchored || path == ""
	}
	// Each literal segment between stars matches at its leftmost place,
	// which leaves the most of the path to those after it.
	for {
		seg, rest, wild = strings.Cut(rest, "*")
		if !wild {
			if anchored {
				return strings.HasSuffix(path, seg)
			}
			return strings.Contains(path, seg)
		}
		i := strings.Index(path, seg)
		if i < 0 {
			return false
		}
		path = path[i+len(seg):]
	}
}

const upperHex = "0123456789ABCDEF"

// escape percent-encodes the octets of s outside US-ASCII and writes the
// hex digits of its %xx escapes in upper case, as Google's
// MaybeEscapePattern does. It returns s itself when nothing changes.
func escape(s string) string {
	need := false
	for i := 0; i < len(s) && !need; i++ {
		switch {
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			need = isLowerHex(s[i+1]) || isLowerHex(s[i+2])
			i += 2
		case s[i] >= 0x80:
			need = true
		}
	}
	if !need {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte('%')
			b.WriteByte(upper(s[i+1]))
			b.WriteByte(upper(s[i+2]))
			i += 2
		case c >= 0x80:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

func upper(c byte) byte {
	if isLowerHex(c) {
		return c - 'a' + 'A'
	}
	return c
}

// Path returns what Rules.Allowed matches for u: its escaped path ("/"
// when empty) and query, with octets outside US-ASCII percent-encoded and
// escapes in upper case, as the patterns are.
func Path(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return escape(p)
}
