package crawl

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Address ranges a crawler must not reach on behalf of the web (SSRF):
// besides what netip classifies as loopback, private, link-local and
// multicast, these special-purpose blocks.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("::/96"),         // IPv4-compatible (deprecated): ::127.0.0.1
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64 can reach IPv4 private space
	netip.MustParsePrefix("fec0::/10"),    // deprecated site-local
}

// publicAddr reports whether ip is a globally routable unicast address.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	if ip.Is4() && ip.As4() == [4]byte{255, 255, 255, 255} {
		return false
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// checkHost refuses, before any connection is tried, a URL host that is
// a non-public IP literal or a localhost name (RFC 6761: "localhost" and
// its subdomains are loopback). host is the host of a normalized URL
// (webtable.Normalize), so every spelling a browser accepts arrives here
// in one form: 2130706433, 0x7f.1 and 127.1 as 127.0.0.1, LOCALHOST. as
// localhost, full-width digits and IDNA as ASCII. Other names are checked
// after resolution, by the dialer.
func checkHost(host string) error {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if ip, err := netip.ParseAddr(h); err == nil && !publicAddr(ip) ||
		h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, host)
	}
	return nil
}

// newTransport returns the crawler's HTTP transport. Unless allowPrivate,
// its dialer refuses non-public addresses in Control, after DNS
// resolution, so neither a name that resolves to 127.0.0.1 nor a redirect
// to one gets through. With allowPrivate, only narrows it: the non-public
// addresses the dialer reaches are exactly those address and port pairs
// (Options.PrivateAddrs). Proxies are not used: they would bypass the
// check.
func newTransport(allowPrivate bool, timeout time.Duration, perHost int, only ...netip.AddrPort) *http.Transport {
	d := &net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	if !allowPrivate || len(only) > 0 {
		allowed := make(map[netip.AddrPort]bool, len(only))
		for _, a := range only {
			if allowPrivate {
				allowed[netip.AddrPortFrom(a.Addr().Unmap(), a.Port())] = true
			}
		}
		d.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				host, _, _ := net.SplitHostPort(address)
				return fmt.Errorf("%w: %s", ErrPrivateAddress, host)
			}
			ip := ap.Addr().Unmap()
			if !publicAddr(ip) && !allowed[netip.AddrPortFrom(ip, ap.Port())] {
				return fmt.Errorf("%w: %s", ErrPrivateAddress, ip)
			}
			return nil
		}
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   max(perHost, 2),
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
}
