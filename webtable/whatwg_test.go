package webtable

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

// whatwgCase is one entry of the web-platform-tests URL test data.
type whatwgCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

func loadWhatwg(t *testing.T) []whatwgCase {
	t.Helper()
	data, err := os.ReadFile("testdata/whatwg/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var cases []whatwgCase
	for _, r := range raw {
		var c whatwgCase
		if json.Unmarshal(r, &c) != nil { // the comments are strings
			continue
		}
		cases = append(cases, c)
	}
	return cases
}

func isHTTP(s string) bool {
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "http:") || strings.HasPrefix(s, "https:")
}

// TestWhatwg runs the web-platform-tests URL cases (testdata/whatwg) that
// concern http(s): a valid case agrees when Resolve(base, input) equals
// Normalize(href), an invalid one must be refused. Normalize stands in
// for the expected href because the stored form deliberately differs from
// a browser's href in these ways, all on both sides of the comparison:
// user information, default ports and fragments are dropped, escapes are
// upper-cased ("%2f" → "%2F"), and "|" in a path is escaped.
//
// Deliberate exceptions, among the cases without a base (Normalize):
//   - "http://./" and "http://../": trailing dots are dropped from hosts,
//     leaving none; refused.
//   - "http://foo.09..": the same, and what is left ends in a number, so
//     it is read as an IPv4 address, which "foo.09" is not; refused.
//   - "http://!\"$&'()*+,-.;=_`{}~/": a host may hold only letters,
//     digits, "-", "_" and "." (what DNS names use, and what Go's net/url,
//     used to fetch, accepts); refused.
func TestWhatwg(t *testing.T) {
	var valid, agree, invalid, refused int
	var nValid, nAgree, nInvalid, nRefused int
	for _, c := range loadWhatwg(t) {
		if c.Base == nil {
			if !isHTTP(strings.TrimSpace(c.Input)) {
				continue
			}
			got, err := Normalize(c.Input)
			switch {
			case c.Failure:
				nInvalid++
				if err != nil {
					nRefused++
				} else {
					t.Logf("accepted invalid %q: %q", c.Input, got)
				}
			case isHTTP(c.Href):
				nValid++
				if want, _ := Normalize(c.Href); err == nil && got == want {
					nAgree++
				} else {
					t.Logf("Normalize(%q) = %q, %v; want %q", c.Input, got, err, want)
				}
			}
			continue
		}
		if !isHTTP(*c.Base) {
			continue
		}
		base, err := url.Parse(*c.Base)
		if err != nil {
			t.Fatalf("base %q: %v", *c.Base, err)
		}
		got, err := Resolve(base, c.Input)
		if c.Failure {
			invalid++
			if err != nil {
				refused++
			} else {
				t.Logf("accepted invalid %q (base %q): %q", c.Input, *c.Base, got)
			}
			continue
		}
		if !isHTTP(c.Href) {
			continue
		}
		valid++
		if want, _ := Normalize(c.Href); err == nil && got == want {
			agree++
		} else {
			t.Logf("Resolve(%q, %q) = %q, %v; want %q", *c.Base, c.Input, got, err, want)
		}
	}
	t.Logf("with an http(s) base: %d/%d valid agree, %d/%d invalid refused", agree, valid, refused, invalid)
	t.Logf("without a base: %d/%d valid agree, %d/%d invalid refused", nAgree, nValid, nRefused, nInvalid)
	if valid < 100 || invalid < 40 {
		t.Fatalf("test data: %d valid, %d invalid cases; expected over 100 and 40", valid, invalid)
	}
	for _, r := range []struct {
		what  string
		n, of int
	}{{"valid agree", agree, valid}, {"invalid refused", refused, invalid}, {"valid agree (no base)", nAgree, nValid}, {"invalid refused (no base)", nRefused, nInvalid}} {
		if r.n*100 < r.of*95 {
			t.Errorf("%s: %d of %d, below 95%%", r.what, r.n, r.of)
		}
	}
}
