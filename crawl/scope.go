package crawl

import (
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// scope decides which URLs the crawl follows. It is immutable once built.
type scope struct {
	mode     Scope
	hosts    map[string]bool // host[:port] (ScopeHost) or registrable domain (ScopeDomain)
	prefixes []string        // ScopePrefix
}

func newScope(mode Scope, seeds []string) *scope {
	s := &scope{mode: mode, hosts: make(map[string]bool)}
	for _, seed := range seeds {
		u, err := url.Parse(seed)
		if err != nil {
			continue
		}
		switch mode {
		case ScopeHost:
			s.hosts[u.Host] = true
		case ScopeDomain:
			s.hosts[domainOf(u.Hostname())] = true
		case ScopePrefix:
			p := seed
			if q := strings.IndexByte(p, '?'); q >= 0 {
				p = p[:q]
			}
			p = p[:strings.LastIndexByte(p, '/')+1]
			s.prefixes = append(s.prefixes, p)
		}
	}
	return s
}

func domainOf(host string) string {
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host // IP addresses, bare TLDs
}

// contains reports whether the normalized URL u is in scope.
func (s *scope) contains(u string) bool {
	switch s.mode {
	case ScopePrefix:
		for _, p := range s.prefixes {
			if strings.HasPrefix(u, p) {
				return true
			}
		}
		return false
	}
	host := hostPort(u)
	if s.mode == ScopeDomain {
		pu := url.URL{Host: host}
		return s.hosts[domainOf(pu.Hostname())]
	}
	return s.hosts[host]
}

// hostPort returns the host[:port] of a normalized URL without parsing it
// (normalized URLs always have "://" and a path).
func hostPort(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	rest := u[i+3:]
	if j := strings.IndexAny(rest, "/?"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
