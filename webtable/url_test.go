package webtable

import (
	"errors"
	"net/url"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HTTP://WWW.Example.COM/", "http://www.example.com/"},
		{"http://example.com", "http://example.com/"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:8080/a", "http://example.com:8080/a"},
		{"http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com/a/b/", "http://example.com/a/b/"},
		{"http://example.com/a#frag", "http://example.com/a"},
		{"http://example.com/%7euser/%2f", "http://example.com/~user/%2F"},
		{"http://example.com/?q=%6a", "http://example.com/?q=j"},
		{"http://example.com./x", "http://example.com/x"},
		{"  http://example.com/x  ", "http://example.com/x"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		// Empty segments are kept; dot segments go, also escaped.
		{"http://a.com/b//c", "http://a.com/b//c"},
		{"http://a.com/b//../c/./d/%2e%2E/e", "http://a.com/b/c/e"},
		{"http://a.com/b/..", "http://a.com/"},
		{"http://a.com/b/.", "http://a.com/b/"},
		// Characters a URL cannot hold are encoded as a browser does.
		{"http://a.com/a b?c d#e f", "http://a.com/a%20b?c%20d"},
		{"http://a.com/é?é", "http://a.com/%C3%A9?%C3%A9"},
		{"http://a.com/<\"{}|^`>?<\"'>", "http://a.com/%3C%22%7B%7D%7C%5E%60%3E?%3C%22%27%3E"},
		{"http://a.com/100%?50%zz", "http://a.com/100%25?50%25zz"},
		{"http://a.com/?", "http://a.com/?"},
		{"http://a.com\\b\\c", "http://a.com/b/c"},
		{"http:\t//a.com/\nx\r", "http://a.com/x"},
		{"http://user:pw@a.com/", "http://a.com/"},
		{"http://a.com:0080/", "http://a.com/"},
		// Hosts: IDNA, and every IPv4 spelling in dotted form.
		{"http://BÜCHER.de/", "http://xn--bcher-kva.de/"},
		{"http://xn--BCHER-kva.de/", "http://xn--bcher-kva.de/"},
		{"http://ｅｘａｍｐｌｅ。com/", "http://example.com/"},
		{"http://%65xample.com/", "http://example.com/"},
		{"http://2130706433/", "http://127.0.0.1/"},
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"http://0177.0.0.1/", "http://127.0.0.1/"},
		{"http://127.1/", "http://127.0.0.1/"},
		{"http://0/", "http://0.0.0.0/"},
		{"http://１２７.０.０.１/", "http://127.0.0.1/"},
		{"http://127.0.0.1./", "http://127.0.0.1/"},
		{"http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/"},
		{"http://[1:0:0:2::3:0]/", "http://[1::2:0:0:3:0]/"},
		{"http://LOCALHOST./", "http://localhost/"},
	}
	for _, tc := range tests {
		got, err := Normalize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"http://f:999999/c", "http://a b/", "http://999999999999/", "http://1.2.3.4.5/",
		"http://[::1%eth0]/", "http://user@/x", "http://xn--a.com/", "http://a%zz.com/", "http:///"} {
		if got, err := Normalize(bad); err == nil {
			t.Errorf("Normalize(%q) = %q, want an error", bad, got)
		}
	}
	for _, bad := range []string{"mailto:a@b.c", "javascript:alert(1)", "ftp://x/y", "data:text/html,hi", "/relative"} {
		if _, err := Normalize(bad); err == nil {
			t.Errorf("Normalize(%q) accepted", bad)
		} else if bad != "/relative" && !errors.Is(err, ErrNotHTTP) {
			t.Errorf("Normalize(%q) = %v, want ErrNotHTTP", bad, err)
		}
	}
}

func TestResolve(t *testing.T) {
	base, _ := mustParse("http://example.com/docs/a/page.html")
	for ref, want := range map[string]string{
		"other.html":              "http://example.com/docs/a/other.html",
		"../b/":                   "http://example.com/docs/b/",
		"/root":                   "http://example.com/root",
		"//cdn.example.org/x":     "http://cdn.example.org/x",
		"https://Other.org:443/y": "https://other.org/y",
		"#top":                    "http://example.com/docs/a/page.html",
		"?q=1":                    "http://example.com/docs/a/page.html?q=1",
		"":                        "http://example.com/docs/a/page.html",
		"? #":                     "http://example.com/docs/a/page.html?%20",
		"p.html? #x":              "http://example.com/docs/a/p.html?%20",
		"p.html?":                 "http://example.com/docs/a/p.html?",
		"a//b/../c":               "http://example.com/docs/a/a//c",
		"../../../../x":           "http://example.com/x",
		"http:other.html":         "http://example.com/docs/a/other.html",
		"https:other.org/y":       "https://other.org/y",
		"\\\\other.org\\y":        "http://other.org/y",
		" \t/x\ny ":               "http://example.com/xy",
	} {
		if got, err := Resolve(base, ref); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	// Resolve remembers its last base; a changed base is a new one.
	base.Path = "/other/"
	if got, err := Resolve(base, "x"); err != nil || got != "http://example.com/other/x" {
		t.Errorf("Resolve after the base changed = %q, %v", got, err)
	}
	if got, err := Resolve(nil, "http://a.com/x"); err != nil || got != "http://a.com/x" {
		t.Errorf("absolute ref against no base = %q, %v", got, err)
	}
	if got, err := Resolve(&url.URL{Scheme: "mailto", Opaque: "a@b.c"}, "x"); err == nil {
		t.Errorf("relative ref against a mailto base = %q", got)
	}
	if got, err := Resolve(&url.URL{Scheme: "mailto", Opaque: "a@b.c"}, "http://a.com"); err != nil || got != "http://a.com/" {
		t.Errorf("absolute ref against a mailto base = %q, %v", got, err)
	}
}

func TestRowRoundTrip(t *testing.T) {
	for in, row := range map[string]string{
		"http://www.example.com/a?b=c":  "com.example.www:http/a?b=c",
		"https://example.com:8443/":     "com.example:https:8443/",
		"http://127.0.0.1:9000/x":       "127.0.0.1:http:9000/x",
		"http://[::1]:8080/x":           "[::1]:http:8080/x",
		"http://a.b.example.org/%C3%A9": "org.example.b.a:http/%C3%A9",
	} {
		got, err := Row(in)
		if err != nil || got != row {
			t.Errorf("Row(%q) = %q, %v; want %q", in, got, err, row)
			continue
		}
		back, err := URL(row)
		if err != nil || back != in {
			t.Errorf("URL(%q) = %q, %v; want %q", row, back, err, in)
		}
	}
	if HostOfRow("com.example.www:http/a/b") != "com.example.www:http" {
		t.Error("HostOfRow")
	}
}

// Normalizing is idempotent and rows round-trip, whatever the input.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"http://example.com/a/../b?c#d", "HTTPS://X.Y:443/%7e", "http://[::1]/", "http://a/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			return
		}
		n2, err := Normalize(n)
		if err != nil || n2 != n {
			t.Fatalf("Normalize not idempotent: %q → %q → %q (%v)", s, n, n2, err)
		}
		row, err := Row(n)
		if err != nil {
			t.Fatalf("Row(%q): %v", n, err)
		}
		back, err := URL(row)
		if err != nil || back != n {
			t.Fatalf("URL(Row(%q)) = %q, %v", n, back, err)
		}
		checkNetURL(t, n)
	})
}

// Whatever a page links to, a resolved URL is its own normal form, its
// row round-trips, and Go's net/url (which fetches it) reads it as it is.
func FuzzResolve(f *testing.F) {
	for _, s := range [][2]string{
		{"http://0/", "? #"}, {"http://a.com/b/c", "../d//e/./%2e%2E/f?g h#i"}, {"https://a.com/", "http:x"},
		{"http://a.com/", "//BÜCHER.de/%zz"}, {"http://a.com/", "\\\\0x7f.1\\x"}, {"http://[::1]:8080/", "[x]?'\""},
		{"http://a.com/p?q", "#f"}, {"http://a.com/", "http://a.com:99999/"}, {"http://a.com/", "%2e%2e/x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, base, ref string) {
		b, err := url.Parse(base)
		if err != nil {
			return
		}
		r, err := Resolve(b, ref)
		if err != nil {
			return
		}
		if n, err := Normalize(r); err != nil || n != r {
			t.Fatalf("Resolve(%q, %q) = %q, not normal: %q, %v", base, ref, r, n, err)
		}
		if nb, err := NewBase(base); err == nil {
			if r2, err := nb.Resolve(ref); err != nil || r2 != r {
				t.Fatalf("Base(%q).Resolve(%q) = %q, %v; Resolve gave %q", base, ref, r2, err, r)
			}
		}
		row, err := Row(r)
		if err != nil {
			t.Fatalf("Row(%q): %v", r, err)
		}
		if back, err := URL(row); err != nil || back != r {
			t.Fatalf("URL(Row(%q)) = %q, %v", r, back, err)
		}
		checkNetURL(t, r)
	})
}

// checkNetURL fails unless net/url parses the normalized URL n and prints
// it back unchanged, with a request line free of spaces and controls.
func checkNetURL(t *testing.T, n string) {
	t.Helper()
	u, err := url.Parse(n)
	if err != nil {
		t.Fatalf("net/url cannot parse %q: %v", n, err)
	}
	if u.String() != n {
		t.Fatalf("net/url prints %q as %q", n, u.String())
	}
	for _, c := range []byte(u.RequestURI()) {
		if c <= ' ' || c >= 0x7f {
			t.Fatalf("request URI of %q holds %q", n, c)
		}
	}
}

func mustParse(s string) (*url.URL, error) { return url.Parse(s) }

func TestNormalizeEdgeCases(t *testing.T) {
	if got, err := Normalize("http://h/a/%2E%2E/b"); err != nil || got != "http://h/b" {
		t.Errorf("escaped dot segment: %q, %v", got, err)
	}
	if _, err := Normalize("http://[::zz]/"); err == nil {
		t.Error("invalid IPv6 host accepted")
	}
	if got, err := Normalize("http://[0:0::1]/"); err != nil || got != "http://[::1]/" {
		t.Errorf("IPv6 canonical form: %q, %v", got, err)
	}
}

func TestIDNA(t *testing.T) {
	a, err1 := Normalize("http://BÜCHER.de/")
	b, err2 := Normalize("http://xn--bcher-kva.de/")
	if err1 != nil || err2 != nil || a != b {
		t.Errorf("Normalize: %q, %v and %q, %v; want one URL", a, err1, b, err2)
	}
	ra, _ := Row(a)
	rb, _ := Row(b)
	if ra != rb || ra != "de.xn--bcher-kva:http/" {
		t.Errorf("rows %q, %q", ra, rb)
	}
	for in, want := range map[string]string{
		"xn--bcher-kva.de": "bücher.de",
		"example.com":      "example.com",
		"xn--a.com":        "xn--a.com", // not valid punycode: as it is
		"127.0.0.1":        "127.0.0.1",
	} {
		if got := DisplayHost(in); got != want {
			t.Errorf("DisplayHost(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"http://xn--bcher-kva.de:8080/xn--a?b": "http://bücher.de:8080/xn--a?b",
		"https://xn--bcher-kva.de":             "https://bücher.de",
		"http://[::1]:80/xn--":                 "http://[::1]:80/xn--",
		"mailto:xn--a":                         "mailto:xn--a",
	} {
		if got := DisplayURL(in); got != want {
			t.Errorf("DisplayURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// benchLinks are hrefs as pages hold them.
var benchLinks = []string{
	"other.html", "../b/", "/root?x=1", "//cdn.example.org/x", "https://Other.org:443/y", "#top",
	"p.html?q=a b#x", "/docs/3.12/library/functions.html#len", "http://example.com/a/b/c/d.html",
}

// BenchmarkResolve resolves one page's links; ns/op is per link.
func BenchmarkResolve(b *testing.B) {
	base, _ := url.Parse("http://example.com/docs/a/page.html")
	for i := 0; b.Loop(); i++ {
		Resolve(base, benchLinks[i%len(benchLinks)])
	}
}

// BenchmarkBaseResolve is BenchmarkResolve with the base parsed once.
func BenchmarkBaseResolve(b *testing.B) {
	base, _ := NewBase("http://example.com/docs/a/page.html")
	for i := 0; b.Loop(); i++ {
		base.Resolve(benchLinks[i%len(benchLinks)])
	}
}

func BenchmarkNormalize(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		Normalize("http://example.com/docs/a/" + benchLinks[i%len(benchLinks)])
	}
}
