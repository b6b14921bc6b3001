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
	}
	for _, tc := range tests {
		got, err := Normalize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
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
	} {
		if got, err := Resolve(base, ref); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
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
	})
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
