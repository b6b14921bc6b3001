package crawl

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2001:4860:4860::8888": true, "93.184.216.34": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "0.0.0.0": false, "::1": false, "fe80::1": false,
		"fc00::1": false, "::ffff:127.0.0.1": false, "100.64.0.1": false, "224.0.0.1": false,
		"255.255.255.255": false, "64:ff9b::a00:1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// Without AllowPrivate nothing reaches a loopback server: not an IP
// literal, not a name that resolves to one.
func TestPrivateRefused(t *testing.T) {
	s := newSite(t)
	s.page("/", "secret admin page")
	port := s.URL[strings.LastIndexByte(s.URL, ':'):]
	for _, seed := range []string{s.URL + "/", "http://localhost" + port + "/"} {
		t.Run(seed, func(t *testing.T) {
			tb := openTable(t, "")
			opt := testOptions(seed)
			opt.AllowPrivate = false
			tb.crawl(opt)
			if tb.get(seed, webtable.Body) != nil {
				t.Error("private page stored")
			}
			if e := string(tb.get(seed, webtable.Error)); e == "" {
				t.Error("no error recorded")
			} else if !strings.Contains(e, "private") {
				t.Errorf("error %q, want a private-address refusal", e)
			}
		})
	}
	if n := s.count("/") + s.count("/robots.txt"); n != 0 {
		t.Errorf("server got %d requests", n)
	}
}

// The dialer's check holds after DNS resolution: a name is refused once
// it resolves to loopback, even though the URL check passes it.
func TestPrivateAfterResolution(t *testing.T) {
	s := newSite(t)
	s.page("/", "secret")
	tr := newTransport(false, 5e9, 1)
	port := s.URL[strings.LastIndexByte(s.URL, ':'):]
	_, err := tr.DialContext(t.Context(), "tcp", "localhost"+port)
	if err == nil || !strings.Contains(err.Error(), "private") {
		t.Errorf("dial localhost: %v, want a refusal", err)
	}
	if s.count("/") != 0 {
		t.Error("request reached the server")
	}
}
