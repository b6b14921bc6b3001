package crawl

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
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
		"255.255.255.255": false, "64:ff9b::a00:1": false, "::7f00:1": false, "::": false,
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

// privateSpellings are ways a browser accepts to write a loopback or
// private host; webtable.Normalize turns each into one canonical form.
var privateSpellings = []string{
	"127.0.0.1", "2130706433", "0x7f.1", "0x7F000001", "0177.0.0.1", "0177.0.0.01", "127.1", "127.0.1",
	"127.0.0.1.", "%31%32%37.0.0.1", "１２７.０.０.１", "127。0。0。1", "0", "0.0.0.0", "0x0",
	"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]", "[::1]", "[0::1]", "[::127.0.0.1]", "[::]",
	"localhost", "localhost.", "LOCALHOST", "LocalHost.", "ｌｏｃａｌｈｏｓｔ", "%6c%6f%63%61%6c%68%6f%73%74", "a.localhost",
	"10.0.0.1", "012.1", "167772161", "192.168.1.1", "0xc0a80101", "172.16.0.1", "169.254.169.254", "0xa9fea9fe",
	"[fe80::1]", "[fc00::1]", "[64:ff9b::a00:1]", "100.64.0.1", "224.0.0.1", "255.255.255.255", "4294967295",
}

// Every spelling is refused once normalized, before any connection.
func TestCheckHostSpellings(t *testing.T) {
	for _, host := range privateSpellings {
		n, err := webtable.Normalize("http://" + host + "/")
		if err != nil {
			t.Errorf("Normalize(%q): %v", host, err)
			continue
		}
		u, err := url.Parse(n)
		if err != nil {
			t.Fatalf("net/url: %q: %v", n, err)
		}
		if err := checkHost(u.Hostname()); !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("checkHost(%q) (from %q) = %v, want a refusal", u.Hostname(), host, err)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil && publicAddr(ip) {
			t.Errorf("publicAddr(%s) (from %q) = true", ip, host)
		}
	}
	for _, host := range []string{"8.8.8.8", "0x08080808", "134744072", "[2001:4860:4860::8888]", "example.com", "localhost.example.com", "xn--bcher-kva.de"} {
		n, err := webtable.Normalize("http://" + host + "/")
		if err != nil {
			t.Fatalf("Normalize(%q): %v", host, err)
		}
		u, _ := url.Parse(n)
		if err := checkHost(u.Hostname()); err != nil {
			t.Errorf("checkHost(%q) (from %q) = %v, want none", u.Hostname(), host, err)
		}
	}
}

// The dialer refuses every loopback form a name can resolve to.
func TestDialRefusesResolved(t *testing.T) {
	s := newSite(t)
	s.page("/", "secret")
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	tr := newTransport(false, 5e9, 1)
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1", "0.0.0.0", "::"} {
		_, err := tr.DialContext(t.Context(), "tcp", net.JoinHostPort(ip, port))
		if !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("dial %s: %v, want a refusal", ip, err)
		}
	}
	if s.count("/") != 0 {
		t.Error("request reached the server")
	}
}

// A crawl seeded with every spelling of a loopback address, as a link or a
// seed may hold it, sends the server nothing and records each refusal.
func TestPrivateSpellingsCrawl(t *testing.T) {
	s := newSite(t)
	s.page("/", "secret admin page")
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	var seeds []string
	for _, host := range privateSpellings {
		seeds = append(seeds, "http://"+host+":"+port+"/")
	}
	tb := openTable(t, "")
	opt := testOptions(seeds...)
	opt.AllowPrivate = false
	tb.crawl(opt)
	for _, seed := range seeds {
		if e := string(tb.get(seed, webtable.Error)); !strings.Contains(e, "private") {
			t.Errorf("%s: error %q, want a private-address refusal", seed, e)
		}
	}
	if n := s.count("/") + s.count("/robots.txt"); n != 0 {
		t.Errorf("server got %d requests", n)
	}
}
