package serving

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2/search/query"
	"golang.org/x/net/idna"
)

// escapeHostValues escapes the colons in the unquoted values of host: and
// site: ("host:127.0.0.1:8000"), which the query-string syntax would
// otherwise read as another field separator.
func escapeHostValues(s string) string {
	if !strings.Contains(s, "host:") && !strings.Contains(s, "site:") {
		return s
	}
	var b strings.Builder
	inQuote, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch {
		case escaped:
			escaped = false
			continue
		case c == '\\':
			escaped = true
			continue
		case c == '"':
			inQuote = !inQuote
			continue
		case inQuote:
			continue
		}
		atStart := i == 0 || strings.IndexByte(" \t\n(+-", s[i-1]) >= 0
		if !atStart || !(strings.HasPrefix(s[i:], "host:") || strings.HasPrefix(s[i:], "site:")) {
			continue
		}
		b.WriteString(s[i+1 : i+5])
		i += 5
		for ; i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != ')' && s[i] != '"'; i++ {
			if s[i] == ':' && s[i-1] != '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i])
		}
		i--
	}
	return b.String()
}

// validHost is a host name or an IPv4 address (letters, digits, dots,
// hyphens, underscores), or an IPv6 address in brackets.
var validHost = regexp.MustCompile(`^([a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\])$`)

// hostQuery is the query of host:V or site:V. Hosts are indexed as the URL
// has them: lower case, ASCII (punycode), with the port when the URL has
// one. host:H matches H on any port, host:H:P only that port; site:H also
// matches every subdomain of H (site:example.com matches www.example.com).
func hostQuery(field, v string) (query.Query, error) {
	host, port, err := splitHost(v)
	if err != nil {
		return nil, badQuery("%s: needs a host name such as example.com or 127.0.0.1:8000, not %q", field, clip(v, 60))
	}
	term := func(t string) query.Query {
		q := query.NewTermQuery(t)
		q.SetField(fHost)
		return q
	}
	re := func(r string) query.Query {
		q := query.NewRegexpQuery(r)
		q.SetField(fHost)
		return q
	}
	qh := regexp.QuoteMeta(host)
	var qs []query.Query
	if port != "" {
		qs = append(qs, term(host+":"+port))
		if field == fieldSite {
			qs = append(qs, re(`.*\.`+qh+":"+port))
		}
	} else {
		qs = append(qs, term(host), re(qh+`:[0-9]+`))
		if field == fieldSite {
			qs = append(qs, re(`.*\.`+qh+`(:[0-9]+)?`))
		}
	}
	if len(qs) == 1 {
		return qs[0], nil
	}
	return query.NewDisjunctionQuery(qs), nil
}

// splitHost reads HOST or HOST:PORT as a user types it: any case, Unicode
// or punycode, a trailing dot allowed.
func splitHost(v string) (host, port string, err error) {
	v = strings.ToLower(strings.TrimSpace(v))
	host = v
	if i := strings.LastIndexByte(v, ':'); i >= 0 && !strings.HasSuffix(v, "]") {
		host, port = v[:i], v[i+1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return "", "", errBadHost
		}
	}
	host = strings.TrimSuffix(host, ".")
	if !strings.HasPrefix(host, "[") {
		// Lookup refuses underscores, which some hosts have: those stay
		// as they are.
		if a, err := idna.Lookup.ToASCII(host); err == nil {
			host = a
		}
	}
	if !validHost.MatchString(host) {
		return "", "", errBadHost
	}
	return host, port, nil
}

var errBadHost = badQuery("bad host")
