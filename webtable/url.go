package webtable

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
)

// ErrNotHTTP is returned for URLs that are not http or https (mailto:,
// javascript:, data:, ...): they are never crawled.
var ErrNotHTTP = errors.New("webtable: not an http(s) URL")

// Normalize returns the canonical form of an absolute http(s) URL. raw is
// parsed as a browser parses it (the WHATWG URL standard: surrounding
// spaces and controls stripped, tabs and newlines removed, "\" read as
// "/"), then:
//   - scheme and host are lower-cased, the host in ASCII (IDNA: Unicode
//     labels as "xn--"), IPv4 addresses in dotted decimal whatever their
//     spelling, IPv6 compressed, trailing dots dropped;
//   - user information, the default port and the fragment are dropped;
//   - dot segments ("." and "..", also spelled "%2e") are removed, empty
//     segments kept ("/a//b" stays), an empty path made "/";
//   - characters a URL cannot hold (spaces, controls, non-ASCII, quotes,
//     "<", ">", ...) are percent-encoded as a browser encodes them, escaped
//     unreserved characters decoded, other escapes upper-cased, a "%"
//     that starts no escape written "%25";
//   - a "?" is kept even when the query is empty.
//
// The result is its own canonical form (Normalize returns it unchanged)
// and Go's net/url parses and prints it unchanged. Two URLs that name the
// same resource in these ways normalize to the same string.
func Normalize(raw string) (string, error) {
	p, err := parse(raw, nil)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// Resolve resolves ref against base as a browser resolves a link, and
// normalizes the result as Normalize does. If base is nil or not an
// http(s) URL, only absolute references resolve.
//
// Resolve remembers the last base it parsed, so a page's links cost one
// parse of the base; NewBase and Base.Resolve make that explicit.
func Resolve(base *url.URL, ref string) (string, error) {
	if base == nil {
		return (*Base)(nil).Resolve(ref)
	}
	if m := lastBase.Load(); m != nil && m.u == *base {
		return m.b.Resolve(ref)
	}
	b, err := NewBase(baseString(base))
	if err != nil {
		b = nil
	}
	lastBase.Store(&baseMemo{u: *base, b: b})
	return b.Resolve(ref)
}

// baseString is u with its path as written: u.String re-encodes a path
// holding characters a URL cannot (a space, a byte of no UTF-8), and then
// escapes "!", "'", "(", ")" and "*" too, which NewBase keeps as written.
// url.Parse keeps the path as written in RawPath whenever it differs from
// that encoding.
func baseString(u *url.URL) string {
	if u.RawPath == "" || u.Opaque != "" {
		return u.String()
	}
	c := *u
	c.Path, c.RawPath, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", "", "", false, "", ""
	s := c.String() + u.RawPath
	if u.ForceQuery || u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}

// lastBase is the base Resolve parsed last.
var lastBase atomic.Pointer[baseMemo]

type baseMemo struct {
	u url.URL // a copy: the caller may change its URL afterwards
	b *Base   // nil if u is not an http(s) URL
}

// Base is a parsed base URL, for resolving many references against one
// page: it skips parsing the base for every link. A Base is immutable and
// safe for concurrent use.
type Base struct{ p parsed }

// NewBase parses raw as Normalize does.
func NewBase(raw string) (*Base, error) {
	p, err := parse(raw, nil)
	if err != nil {
		return nil, err
	}
	return &Base{p}, nil
}

// String returns the normalized base URL.
func (b *Base) String() string { return b.p.String() }

// Resolve resolves ref against b as the package-level Resolve does. A nil
// Base resolves only absolute references.
func (b *Base) Resolve(ref string) (string, error) {
	var bp *parsed
	if b != nil {
		bp = &b.p
	}
	p, err := parse(ref, bp)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// Row returns the row key of a normalized URL: the host's labels reversed,
// then ":scheme", then ":port" if any, then the path and query.
func Row(normalized string) (string, error) {
	scheme, rest, ok := strings.Cut(normalized, "://")
	if !ok || scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%w: %q", ErrNotHTTP, normalized)
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		slash = len(rest)
	}
	hostport, tail := rest[:slash], rest[slash:]
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") { // IPv6: keep the colons apart from ours
		end := strings.IndexByte(hostport, ']')
		if end < 0 || end+1 < len(hostport) && hostport[end+1] != ':' {
			return "", fmt.Errorf("webtable: %q has an invalid host", normalized)
		}
		host, port = hostport[:end+1], strings.TrimPrefix(hostport[end+1:], ":")
	} else {
		host, port, _ = strings.Cut(hostport, ":")
		host = ReverseHost(host)
	}
	if host == "" || strings.ContainsAny(host, "@#?") || strings.ContainsAny(port, ":@#?") {
		return "", fmt.Errorf("webtable: %q has an invalid host", normalized)
	}
	if tail == "" {
		tail = "/"
	} else if tail[0] != '/' {
		tail = "/" + tail
	}
	if i := strings.IndexByte(tail, '#'); i >= 0 {
		tail = tail[:i]
	}
	var b strings.Builder
	b.Grow(len(normalized) + 2)
	b.WriteString(host)
	b.WriteByte(':')
	b.WriteString(scheme)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(tail)
	return b.String(), nil
}

// URL returns the URL of a row key made by Row.
func URL(row string) (string, error) {
	slash := strings.IndexByte(row, '/')
	if slash < 0 {
		return "", fmt.Errorf("webtable: %q is not a page row", row)
	}
	head := row[:slash]
	host := ""
	if strings.HasPrefix(head, "[") { // IPv6 literal
		end := strings.IndexByte(head, ']')
		if end < 0 {
			return "", fmt.Errorf("webtable: %q is not a page row", row)
		}
		host, head = head[:end+1], "x"+head[end+1:]
	}
	parts := strings.Split(head, ":")
	if len(parts) < 2 || len(parts) > 3 || (parts[1] != "http" && parts[1] != "https") {
		return "", fmt.Errorf("webtable: %q is not a page row", row)
	}
	if host == "" {
		host = ReverseHost(parts[0])
	}
	if len(parts) == 3 {
		host += ":" + parts[2]
	}
	return parts[1] + "://" + host + row[slash:], nil
}

// ReverseHost reverses the dot-separated labels of a host name
// (www.example.com ↔ com.example.www). IP addresses are kept as they are.
func ReverseHost(host string) string {
	if net.ParseIP(host) != nil || strings.Contains(host, ":") {
		return host
	}
	labels := strings.Split(host, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return strings.Join(labels, ".")
}

// HostOfRow returns the host part of a page row ("com.example.www:http"),
// the prefix all the host's rows share.
func HostOfRow(row string) string {
	if i := strings.IndexByte(row, '/'); i >= 0 {
		return row[:i]
	}
	return row
}
