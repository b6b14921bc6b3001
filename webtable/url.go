package webtable

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
)

// ErrNotHTTP is returned for URLs that are not http or https (mailto:,
// javascript:, data:, ...): they are never crawled.
var ErrNotHTTP = errors.New("webtable: not an http(s) URL")

// Normalize returns the canonical form of an absolute http(s) URL: scheme and
// host lowercased, default port and fragment dropped, "." and ".." resolved,
// an empty path made "/", percent-escapes made consistent (unreserved
// characters decoded, the rest upper-case hex). Two URLs that name the same
// resource in these ways normalize to the same string.
func Normalize(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("webtable: parse %q: %w", raw, err)
	}
	return NormalizeURL(u)
}

// Resolve resolves ref against base and normalizes the result.
func Resolve(base *url.URL, ref string) (string, error) {
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return "", fmt.Errorf("webtable: parse %q: %w", ref, err)
	}
	return NormalizeURL(base.ResolveReference(r))
}

// NormalizeURL is Normalize for a parsed URL; u is not modified.
func NormalizeURL(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%w: %q", ErrNotHTTP, u.String())
	}
	host := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", fmt.Errorf("webtable: %q has no host", u.String())
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	hostport := host
	if strings.Contains(host, ":") { // IPv6 literal
		ip := net.ParseIP(host)
		if ip == nil {
			return "", fmt.Errorf("webtable: %q has an invalid IPv6 host", u.String())
		}
		host = ip.String()
		hostport = "[" + host + "]"
	}
	if port != "" {
		hostport = net.JoinHostPort(host, port)
	}
	// Decode escaped unreserved characters first, so an escaped dot segment
	// (%2E%2E) is cleaned like a plain one.
	p := fixEscapes(u.EscapedPath())
	if p == "" {
		p = "/"
	}
	trailing := strings.HasSuffix(p, "/")
	p = path.Clean(p)
	if trailing && p != "/" {
		p += "/"
	}
	out := scheme + "://" + hostport + p
	if u.RawQuery != "" || u.ForceQuery {
		out += "?" + fixEscapes(u.RawQuery)
	}
	return out, nil
}

// fixEscapes decodes percent-escapes of unreserved characters and
// upper-cases the others, so equivalent spellings compare equal.
func fixEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			c := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteString(strings.ToUpper(s[i+1 : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
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

// Row returns the row key of a normalized URL: the host's labels reversed,
// then ":scheme", then ":port" if any, then the path and query.
func Row(normalized string) (string, error) {
	u, err := url.Parse(normalized)
	if err != nil {
		return "", fmt.Errorf("webtable: parse %q: %w", normalized, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%w: %q", ErrNotHTTP, normalized)
	}
	var b strings.Builder
	if h := u.Hostname(); strings.Contains(h, ":") {
		b.WriteString("[" + h + "]") // IPv6: keep the colons apart from ours
	} else {
		b.WriteString(ReverseHost(h))
	}
	b.WriteByte(':')
	b.WriteString(u.Scheme)
	if p := u.Port(); p != "" {
		b.WriteByte(':')
		b.WriteString(p)
	}
	rest := u.EscapedPath()
	if rest == "" {
		rest = "/"
	}
	b.WriteString(rest)
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(u.RawQuery)
	}
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
