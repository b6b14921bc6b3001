package webtable

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errNoBase is returned for a relative reference without a base URL.
var errNoBase = errors.New("webtable: relative URL without a base")

// parsed is an http(s) URL in canonical form, split into its parts. Every
// part is ASCII and its own canonical form: parsing String() again gives
// the same parts.
type parsed struct {
	scheme   string // "http" or "https"
	host     string // lower-case ASCII name, dotted IPv4, or bracketed IPv6
	port     string // decimal, "" for the scheme's default
	path     string // "/" followed by segments; no dot segments; encoded
	query    string // encoded, without the "?"
	hasQuery bool   // a "?" was present, even with an empty query
}

func (p *parsed) String() string {
	n := len(p.scheme) + 3 + len(p.host) + len(p.path)
	if p.port != "" {
		n += 1 + len(p.port)
	}
	if p.hasQuery {
		n += 1 + len(p.query)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(p.scheme)
	b.WriteString("://")
	b.WriteString(p.host)
	if p.port != "" {
		b.WriteByte(':')
		b.WriteString(p.port)
	}
	b.WriteString(p.path)
	if p.hasQuery {
		b.WriteByte('?')
		b.WriteString(p.query)
	}
	return b.String()
}

// parse parses raw as the WHATWG URL parser does for the special schemes
// http and https, against base when base is not nil, and returns the
// result in canonical form. Other schemes are refused with ErrNotHTTP.
func parse(raw string, base *parsed) (parsed, error) {
	in := cleanInput(raw)
	if scheme, rest, ok := splitScheme(in); ok {
		s := strings.ToLower(scheme)
		if s != "http" && s != "https" {
			return parsed{}, fmt.Errorf("%w: %q", ErrNotHTTP, raw)
		}
		if base != nil && s == base.scheme {
			// "http:foo" against an http base is relative.
			return relative(base, rest, raw)
		}
		return authority(s, strings.TrimLeft(rest, `/\`), raw)
	}
	if base == nil {
		return parsed{}, fmt.Errorf("%w: %q", errNoBase, raw)
	}
	return relative(base, in, raw)
}

// cleanInput strips leading and trailing C0 controls and spaces and
// removes tabs and newlines anywhere, as the WHATWG parser does first.
func cleanInput(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	s = s[i:j]
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// splitScheme splits "scheme:rest" when s starts with a scheme: a letter,
// then letters, digits, "+", "-" or ".", then ":".
func splitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !isAlpha(s[0]) {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return s[:i], s[i+1:], true
		case isAlpha(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
		default:
			return "", s, false
		}
	}
	return "", s, false
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSlash(c byte) bool { return c == '/' || c == '\\' }

// relative resolves the reference ref (scheme already removed) against
// base, as the WHATWG "relative state" does.
func relative(base *parsed, ref, raw string) (parsed, error) {
	if len(ref) >= 2 && isSlash(ref[0]) && isSlash(ref[1]) {
		return authority(base.scheme, strings.TrimLeft(ref, `/\`), raw)
	}
	out := parsed{scheme: base.scheme, host: base.host, port: base.port}
	switch {
	case ref == "":
		out.path, out.query, out.hasQuery = base.path, base.query, base.hasQuery
		return out, nil
	case isSlash(ref[0]):
		return withPath(out, "", ref[1:]), nil
	case ref[0] == '?':
		out.path = base.path
		return withQuery(out, ref[1:]), nil
	case ref[0] == '#':
		out.path, out.query, out.hasQuery = base.path, base.query, base.hasQuery
		return out, nil
	}
	return withPath(out, shorten(base.path), ref), nil
}

// authority parses "host[:port][/path][?query][#fragment]", the user
// information before an "@" dropped.
func authority(scheme, s, raw string) (parsed, error) {
	end := strings.IndexAny(s, `/\?#`)
	if end < 0 {
		end = len(s)
	}
	auth, rest := s[:end], s[end:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	hostStr, portStr, hasPort := auth, "", false
	inside := false
	for i := 0; i < len(auth); i++ {
		switch auth[i] {
		case '[':
			inside = true
		case ']':
			inside = false
		case ':':
			if !inside {
				hostStr, portStr, hasPort = auth[:i], auth[i+1:], true
			}
		}
		if hasPort {
			break
		}
	}
	if hostStr == "" {
		return parsed{}, fmt.Errorf("webtable: %q has no host", raw)
	}
	host, err := parseHost(hostStr)
	if err != nil {
		return parsed{}, fmt.Errorf("webtable: %q: %w", raw, err)
	}
	port, err := parsePort(scheme, portStr)
	if err != nil {
		return parsed{}, fmt.Errorf("webtable: %q: %w", raw, err)
	}
	out := parsed{scheme: scheme, host: host, port: port}
	if rest != "" && isSlash(rest[0]) {
		rest = rest[1:]
	}
	return withPath(out, "", rest), nil
}

// parsePort returns the decimal port of s, "" when s is empty or the
// scheme's default.
func parsePort(scheme, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return "", fmt.Errorf("invalid port %q", s)
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return "", fmt.Errorf("port %q out of range", s)
		}
	}
	if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
		return "", nil
	}
	return strconv.Itoa(n), nil
}

// shorten removes the last segment of a path.
func shorten(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return path
}

// withPath sets out's path to prefix followed by the segments of s (up to
// a "?" or "#"), removing dot segments as the WHATWG path state does,
// then parses the query that may follow.
func withPath(out parsed, prefix, s string) parsed {
	b := make([]byte, 0, len(prefix)+len(s)+1)
	b = append(b, prefix...)
	i := 0
	for {
		j := i
		for j < len(s) && s[j] != '/' && s[j] != '\\' && s[j] != '?' && s[j] != '#' {
			j++
		}
		seg := s[i:j]
		slash := j < len(s) && isSlash(s[j])
		switch {
		case isDoubleDot(seg):
			if k := lastSlash(b); k >= 0 {
				b = b[:k]
			}
			if !slash {
				b = append(b, '/')
			}
		case isSingleDot(seg):
			if !slash {
				b = append(b, '/')
			}
		default:
			b = append(b, '/')
			b = appendEscaped(b, seg, &pathSet)
		}
		if !slash {
			out.path = string(b)
			if j < len(s) && s[j] == '?' {
				return withQuery(out, s[j+1:])
			}
			return out
		}
		i = j + 1
	}
}

func lastSlash(b []byte) int {
	for k := len(b) - 1; k >= 0; k-- {
		if b[k] == '/' {
			return k
		}
	}
	return -1
}

// withQuery sets out's query to s up to a "#".
func withQuery(out parsed, s string) parsed {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	out.query = string(appendEscaped(nil, s, &querySet))
	out.hasQuery = true
	return out
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDot(s string) bool {
	switch len(s) {
	case 2:
		return s == ".."
	case 4:
		return strings.EqualFold(s, ".%2e") || strings.EqualFold(s, "%2e.")
	case 6:
		return strings.EqualFold(s, "%2e%2e")
	}
	return false
}

// Percent-encode sets: the bytes written as %XX in a path and in a query.
// They are the WHATWG path and special-query sets (controls, non-ASCII,
// space, `"`, "#", "<", ">", and for paths "?", "^", "`", "{", "}"; for
// queries "'"), plus "|" in paths, which Go's net/url would otherwise
// re-encode on the wire with the rest of the path.
var pathSet, querySet = encodeSet(" \"#<>?^`{}|"), encodeSet(" \"#<>'")

func encodeSet(extra string) [256]bool {
	var set [256]bool
	for c := range 256 {
		set[c] = c < 0x20 || c > 0x7e
	}
	for i := 0; i < len(extra); i++ {
		set[extra[i]] = true
	}
	return set
}

const upperHex = "0123456789ABCDEF"

// appendEscaped appends s to b percent-encoding the bytes of set, and
// makes existing escapes canonical: an escaped unreserved character is
// decoded, other escapes get upper-case hex, and a "%" that starts no
// escape becomes "%25". The result reads back the same through Go's
// net/url and through this parser.
func appendEscaped(b []byte, s string, set *[256]bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
				if d := unhex(s[i+1])<<4 | unhex(s[i+2]); isUnreserved(d) {
					b = append(b, d)
				} else {
					b = append(b, '%', upperHex[d>>4], upperHex[d&15])
				}
				i += 2
				continue
			}
			b = append(b, "%25"...)
		case set[c]:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
