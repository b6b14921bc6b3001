package webtable

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile is UTS #46 as the WHATWG URL standard applies it to hosts:
// non-transitional processing, the Bidi and ContextJ rules, hyphens and
// the DNS length unchecked, and no STD3 restriction (browsers accept "_").
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.StrictDomainName(false),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.VerifyDNSLength(false),
)

// parseHost returns the canonical form of a URL host: an IPv6 literal in
// brackets (RFC 5952 form, as WHATWG serializes it), an IPv4 address in
// dotted decimal whatever its spelling (2130706433, 0x7f.1, 0177.0.0.1),
// or a domain name in lower-case ASCII (IDNA, "xn--" labels for Unicode),
// without trailing dots.
func parseHost(s string) (string, error) {
	if s[0] == '[' {
		if len(s) < 2 || s[len(s)-1] != ']' {
			return "", fmt.Errorf("invalid IPv6 host %q", s)
		}
		return parseIPv6(s[1 : len(s)-1])
	}
	d := percentDecode(s)
	if asciiName(d) {
		d = strings.ToLower(d)
	} else {
		if !utf8.ValidString(d) {
			return "", fmt.Errorf("host %q is not UTF-8", s)
		}
		a, err := idnaProfile.ToASCII(d)
		if err != nil {
			return "", fmt.Errorf("host %q: %w", s, err)
		}
		d = a
	}
	if endsInNumber(d) {
		return parseIPv4(strings.TrimSuffix(d, "."))
	}
	d = strings.TrimRight(d, ".")
	if d == "" {
		return "", fmt.Errorf("empty host %q", s)
	}
	if endsInNumber(d) { // "0..": without its dots it reads as an address
		return parseIPv4(d)
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", fmt.Errorf("host %q has a character not allowed in a host name", s)
		}
	}
	return d, nil
}

// asciiName reports whether s can skip IDNA processing: only letters,
// digits, "-", "_" and ".", and no label starting with "xn--" (those are
// decoded and checked by IDNA).
func asciiName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
		if (c == 'x' || c == 'X') && (i == 0 || s[i-1] == '.') && len(s) >= i+4 && strings.EqualFold(s[i:i+4], "xn--") {
			return false
		}
	}
	return true
}

// percentDecode decodes the %XX escapes of s, leaving others as they are.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// endsInNumber reports whether the last label of a host (before one
// trailing dot) is a number (decimal, octal or 0x hex), which makes the
// whole host an IPv4 address.
func endsInNumber(s string) bool {
	s = strings.TrimSuffix(s, ".")
	last := s[strings.LastIndexByte(s, '.')+1:]
	if last == "" {
		return false
	}
	_, ok := ipv4Number(last)
	return ok || strings.Trim(last, "0123456789") == ""
}

var errIPv4 = errors.New("invalid IPv4 address")

// parseIPv4 parses an IPv4 address as browsers do: one to four parts,
// each decimal, octal (leading 0) or hex (0x), the last filling the
// remaining bytes.
func parseIPv4(s string) (string, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return "", fmt.Errorf("%w: %q", errIPv4, s)
	}
	var v uint64
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", fmt.Errorf("%w: %q", errIPv4, s)
		}
		if i < len(parts)-1 {
			if n > 255 {
				return "", fmt.Errorf("%w: %q", errIPv4, s)
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return "", fmt.Errorf("%w: %q", errIPv4, s)
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String(), nil
}

// ipv4Number parses one part of an IPv4 address; values above 2^32 are
// reported as 2^32.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = min(n*base+d, 1<<32)
	}
	return n, true
}

// parseIPv6 parses the inside of an IPv6 literal and returns it in
// brackets, zeros compressed, IPv4-mapped forms in hex as WHATWG does.
func parseIPv6(s string) (string, error) {
	if strings.IndexByte(s, '%') >= 0 { // no zones in URLs
		return "", fmt.Errorf("invalid IPv6 host [%s]", s)
	}
	ip, err := netip.ParseAddr(s)
	if err != nil || !ip.Is6() {
		return "", fmt.Errorf("invalid IPv6 host [%s]", s)
	}
	a := ip.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(a[2*i])<<8 | uint16(a[2*i+1])
	}
	// The first longest run of two or more zero pieces is compressed.
	start, length := -1, 1
	for i := 0; i < 8; {
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		i = j + 1
	}
	b := []byte{'['}
	for i := 0; i < 8; i++ {
		if i == start {
			b = append(b, "::"...)
			i += length - 1
			continue
		}
		if i > 0 && i != start+length {
			b = append(b, ':')
		}
		b = strconv.AppendUint(b, uint64(pieces[i]), 16)
	}
	return string(append(b, ']')), nil
}

// DisplayHost returns host (as stored: lower-case ASCII) in Unicode for
// showing to people: "xn--bcher-kva.de" becomes "bücher.de". A host that
// is not valid IDNA is returned as it is.
func DisplayHost(host string) string {
	if !strings.Contains(host, "xn--") {
		return host
	}
	u, err := idnaProfile.ToUnicode(host)
	if err != nil {
		return host
	}
	return u
}

// DisplayURL returns a normalized URL with its host in Unicode, for
// showing to people; it is not a key and is not fetched. Anything that
// is not an http(s) URL is returned as it is.
func DisplayURL(u string) string {
	i := strings.Index(u, "://")
	if i < 0 || !strings.Contains(u, "xn--") {
		return u
	}
	rest := u[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	hostport := rest[:end]
	host, port := hostport, ""
	if c := strings.LastIndexByte(hostport, ':'); c >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:c], hostport[c:]
	}
	return u[:i+3] + DisplayHost(host) + port + rest[end:]
}
