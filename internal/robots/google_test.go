package robots

import (
	"net/url"
	"strings"
	"testing"
)

// The IsUserAgentAllowed expectations of Google's reference parser,
// robots_test.cc of github.com/google/robotstxt at commit
// 22b355ff855419e6a3ff8ff09c0ad7fdb17116f9 (Apache License 2.0), every
// one, in the file's order. test names the TEST they come from; google
// marks behaviour beyond RFC 9309 (Google's GoogleOnly_ tests, and the
// missing colon of ID_LineSyntax_Line).
type googleCase struct {
	test   string
	google bool
	robots string
	checks []googleCheck
}

type googleCheck struct {
	agent, url string
	want       bool
}

// googleChecks is how many IsUserAgentAllowed expectations robots_test.cc
// holds.
const googleChecks = 145

func googleCases() []googleCase {
	const foo = "FooBot"
	yes := func(agent, url string) googleCheck { return googleCheck{agent, url, true} }
	no := func(agent, url string) googleCheck { return googleCheck{agent, url, false} }

	groups := "allow: /foo/bar/\n" +
		"\n" +
		"user-agent: FooBot\n" +
		"disallow: /\n" +
		"allow: /x/\n" +
		"user-agent: BarBot\n" +
		"disallow: /\n" +
		"allow: /y/\n" +
		"\n" +
		"\n" +
		"allow: /w/\n" +
		"user-agent: BazBot\n" +
		"\n" +
		"user-agent: FooBot\n" +
		"allow: /z/\n" +
		"disallow: /\n"

	caseInsensitive := func(robots string) googleCase {
		return googleCase{test: "ID_REPLineNamesCaseInsensitive", robots: robots, checks: []googleCheck{
			yes(foo, "http://foo.bar/x/y"), no(foo, "http://foo.bar/a/b"),
		}}
	}
	uaCaseInsensitive := func(robots string) googleCase {
		return googleCase{test: "ID_UserAgentValueCaseInsensitive", robots: robots, checks: []googleCheck{
			yes("Foo", "http://foo.bar/x/y"), no("Foo", "http://foo.bar/a/b"),
			yes("foo", "http://foo.bar/x/y"), no("foo", "http://foo.bar/a/b"),
		}}
	}

	// GoogleOnly_LineTooLong builds lines of kMaxLineLen = 2083 * 8.
	const maxLineLen = 2083 * 8
	pad := func(c string, n int) string { return "/x/" + strings.Repeat(c, n-len("/x/")) }
	long := pad("a", maxLineLen-len("/x/")-len("disallow: ")+len("\n"))
	longA := pad("a", maxLineLen-len("/x/")-len("allow: ")+len("\n"))
	longB := pad("b", len(longA))

	// GoogleOnly_DocumentationChecks.
	fish := "user-agent: FooBot\ndisallow: /\nallow: /fish\n"
	fishStar := "user-agent: FooBot\ndisallow: /\nallow: /fish*\n"
	fishSlash := "user-agent: FooBot\ndisallow: /\nallow: /fish/\n"
	php := "user-agent: FooBot\ndisallow: /\nallow: /*.php\n"
	phpEnd := "user-agent: FooBot\ndisallow: /\nallow: /*.php$\n"
	fishPHP := "user-agent: FooBot\ndisallow: /\nallow: /fish*.php\n"

	return []googleCase{
		{test: "GoogleOnly_SystemTest", google: true, robots: "", checks: []googleCheck{
			yes(foo, ""), // empty robots.txt: everything allowed
		}},
		{test: "GoogleOnly_SystemTest", google: true, robots: "user-agent: FooBot\ndisallow: /\n", checks: []googleCheck{
			yes("", ""), // empty user-agent to be matched: everything allowed
			no(foo, ""), // empty url: implicitly disallowed
		}},
		{test: "GoogleOnly_SystemTest", google: true, robots: "", checks: []googleCheck{
			yes("", ""), // all params empty: same as robots.txt empty
		}},

		{test: "ID_LineSyntax_Line", robots: "user-agent: FooBot\ndisallow: /\n", checks: []googleCheck{
			no(foo, "http://foo.bar/x/y"),
		}},
		{test: "ID_LineSyntax_Line", robots: "foo: FooBot\nbar: /\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/y"),
		}},
		{test: "ID_LineSyntax_Line", google: true, robots: "user-agent FooBot\ndisallow /\n", checks: []googleCheck{
			no(foo, "http://foo.bar/x/y"), // the missing colon is assumed
		}},

		{test: "ID_LineSyntax_Groups", robots: groups, checks: []googleCheck{
			yes(foo, "http://foo.bar/x/b"),
			yes(foo, "http://foo.bar/z/d"),
			no(foo, "http://foo.bar/y/c"),
			yes("BarBot", "http://foo.bar/y/c"),
			yes("BarBot", "http://foo.bar/w/a"),
			no("BarBot", "http://foo.bar/z/d"),
			yes("BazBot", "http://foo.bar/z/d"),
			// Lines with rules outside groups are ignored.
			no(foo, "http://foo.bar/foo/bar/"),
			no("BarBot", "http://foo.bar/foo/bar/"),
			no("BazBot", "http://foo.bar/foo/bar/"),
		}},

		{test: "ID_LineSyntax_Groups_OtherRules", robots: "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", checks: []googleCheck{
			no(foo, "http://foo.bar/"),
			no("BarBot", "http://foo.bar/"),
		}},
		{test: "ID_LineSyntax_Groups_OtherRules", robots: "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", checks: []googleCheck{
			no(foo, "http://foo.bar/"),
			no("BarBot", "http://foo.bar/"),
		}},

		caseInsensitive("USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n"),
		caseInsensitive("user-agent: FooBot\nallow: /x/\ndisallow: /\n"),
		caseInsensitive("uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n"),

		uaCaseInsensitive("User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n"),
		uaCaseInsensitive("User-Agent: foo bar\nAllow: /x/\nDisallow: /\n"),
		uaCaseInsensitive("User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n"),

		{test: "GoogleOnly_AcceptUserAgentUpToFirstSpace", google: true, robots: "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n", checks: []googleCheck{
			yes("Foo", "http://foo.bar/x/y"),
			no("Foo Bar", "http://foo.bar/x/y"),
		}},

		{test: "ID_GlobalGroups_Secondary", robots: "", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/y"),
		}},
		{test: "ID_GlobalGroups_Secondary", robots: "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", checks: []googleCheck{
			no(foo, "http://foo.bar/x/y"),
			yes("BarBot", "http://foo.bar/x/y"),
		}},
		{test: "ID_GlobalGroups_Secondary", robots: "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n", checks: []googleCheck{
			yes("QuxBot", "http://foo.bar/x/y"),
		}},

		{test: "ID_AllowDisallow_Value_CaseSensitive", robots: "user-agent: FooBot\ndisallow: /x/\n", checks: []googleCheck{
			no(foo, "http://foo.bar/x/y"),
		}},
		{test: "ID_AllowDisallow_Value_CaseSensitive", robots: "user-agent: FooBot\ndisallow: /X/\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/y"),
		}},

		{test: "ID_LongestMatch", robots: "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", checks: []googleCheck{
			no(foo, "http://foo.bar/x/page.html"),
		}},
		{test: "ID_LongestMatch", robots: "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/page.html"),
			no(foo, "http://foo.bar/x/"),
		}},
		{test: "ID_LongestMatch", robots: "user-agent: FooBot\ndisallow: \nallow: \n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/page.html"), // equivalent patterns: allow is used
		}},
		{test: "ID_LongestMatch", robots: "user-agent: FooBot\ndisallow: /\nallow: /\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/page.html"),
		}},
		{test: "ID_LongestMatch", robots: "user-agent: FooBot\ndisallow: /x\nallow: /x/\n", checks: []googleCheck{
			no(foo, "http://foo.bar/x"),
			yes(foo, "http://foo.bar/x/"),
		}},
		{test: "ID_LongestMatch", robots: "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/page.html"),
		}},
		{test: "ID_LongestMatch", robots: "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", checks: []googleCheck{
			no(foo, "http://foo.bar/page.html"),
			yes(foo, "http://foo.bar/page"),
		}},
		{test: "ID_LongestMatch", robots: "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/page.html"),
			no(foo, "http://foo.bar/x/y.html"),
		}},
		{test: "ID_LongestMatch", robots: "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/x/page"),
			no(foo, "http://foo.bar/y/page"),
		}},

		{test: "ID_Encoding", robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par"),
		}},
		{test: "ID_Encoding", robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/foo/bar/%E3%83%84"),
			no(foo, "http://foo.bar/foo/bar/ツ"), // the URL is not %-encoded
		}},
		{test: "ID_Encoding", robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/foo/bar/%E3%83%84"),
			no(foo, "http://foo.bar/foo/bar/ツ"),
		}},
		{test: "ID_Encoding", robots: "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", checks: []googleCheck{
			no(foo, "http://foo.bar/foo/bar/baz"),
			yes(foo, "http://foo.bar/foo/bar/%62%61%7A"),
		}},

		{test: "ID_SpecialCharacters", robots: "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n", checks: []googleCheck{
			no(foo, "http://foo.bar/foo/bar/quz"),
			yes(foo, "http://foo.bar/foo/quz"),
			yes(foo, "http://foo.bar/foo//quz"),
			yes(foo, "http://foo.bar/foo/bax/quz"),
		}},
		{test: "ID_SpecialCharacters", robots: "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n", checks: []googleCheck{
			no(foo, "http://foo.bar/foo/bar"),
			yes(foo, "http://foo.bar/foo/bar/qux"),
			yes(foo, "http://foo.bar/foo/bar/"),
			yes(foo, "http://foo.bar/foo/bar/baz"),
		}},
		{test: "ID_SpecialCharacters", robots: "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/foo/bar"),
			no(foo, "http://foo.bar/foo/quz"),
		}},

		{test: "GoogleOnly_IndexHTMLisDirectory", google: true, robots: "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n", checks: []googleCheck{
			yes("foobot", "http://foo.com/allowed-slash/"),
			no("foobot", "http://foo.com/allowed-slash/index.htm"),
			yes("foobot", "http://foo.com/allowed-slash/index.html"),
			no("foobot", "http://foo.com/anyother-url"),
		}},

		{test: "GoogleOnly_LineTooLong", google: true, robots: "user-agent: FooBot\ndisallow: " + long + "/qux\n", checks: []googleCheck{
			yes(foo, "http://foo.bar/fux"),
			no(foo, "http://foo.bar"+long+"/fux"), // the rule cut at kMaxLineLen
		}},
		{test: "GoogleOnly_LineTooLong", google: true, robots: "user-agent: FooBot\ndisallow: /\nallow: " + longA + "/qux\nallow: " + longB + "/qux\n", checks: []googleCheck{
			no(foo, "http://foo.bar/"),
			yes(foo, "http://foo.bar"+longA+"/qux"),
			yes(foo, "http://foo.bar"+longB+"/fux"),
		}},

		{test: "GoogleOnly_DocumentationChecks", google: true, robots: fish, checks: []googleCheck{
			no(foo, "http://foo.bar/bar"),
			yes(foo, "http://foo.bar/fish"),
			yes(foo, "http://foo.bar/fish.html"),
			yes(foo, "http://foo.bar/fish/salmon.html"),
			yes(foo, "http://foo.bar/fishheads"),
			yes(foo, "http://foo.bar/fishheads/yummy.html"),
			yes(foo, "http://foo.bar/fish.html?id=anything"),
			no(foo, "http://foo.bar/Fish.asp"),
			no(foo, "http://foo.bar/catfish"),
			no(foo, "http://foo.bar/?id=fish"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: fishStar, checks: []googleCheck{
			no(foo, "http://foo.bar/bar"),
			yes(foo, "http://foo.bar/fish"),
			yes(foo, "http://foo.bar/fish.html"),
			yes(foo, "http://foo.bar/fish/salmon.html"),
			yes(foo, "http://foo.bar/fishheads"),
			yes(foo, "http://foo.bar/fishheads/yummy.html"),
			yes(foo, "http://foo.bar/fish.html?id=anything"),
			no(foo, "http://foo.bar/Fish.bar"),
			no(foo, "http://foo.bar/catfish"),
			no(foo, "http://foo.bar/?id=fish"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: fishSlash, checks: []googleCheck{
			no(foo, "http://foo.bar/bar"),
			yes(foo, "http://foo.bar/fish/"),
			yes(foo, "http://foo.bar/fish/salmon"),
			yes(foo, "http://foo.bar/fish/?salmon"),
			yes(foo, "http://foo.bar/fish/salmon.html"),
			yes(foo, "http://foo.bar/fish/?id=anything"),
			no(foo, "http://foo.bar/fish"),
			no(foo, "http://foo.bar/fish.html"),
			no(foo, "http://foo.bar/Fish/Salmon.html"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: php, checks: []googleCheck{
			no(foo, "http://foo.bar/bar"),
			yes(foo, "http://foo.bar/filename.php"),
			yes(foo, "http://foo.bar/folder/filename.php"),
			yes(foo, "http://foo.bar/folder/filename.php?parameters"),
			yes(foo, "http://foo.bar//folder/any.php.file.html"),
			yes(foo, "http://foo.bar/filename.php/"),
			yes(foo, "http://foo.bar/index?f=filename.php/"),
			no(foo, "http://foo.bar/php/"),
			no(foo, "http://foo.bar/index?php"),
			no(foo, "http://foo.bar/windows.PHP"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: phpEnd, checks: []googleCheck{
			no(foo, "http://foo.bar/bar"),
			yes(foo, "http://foo.bar/filename.php"),
			yes(foo, "http://foo.bar/folder/filename.php"),
			no(foo, "http://foo.bar/filename.php?parameters"),
			no(foo, "http://foo.bar/filename.php/"),
			no(foo, "http://foo.bar/filename.php5"),
			no(foo, "http://foo.bar/php/"),
			no(foo, "http://foo.bar/filename?php"),
			no(foo, "http://foo.bar/aaaphpaaa"),
			no(foo, "http://foo.bar//windows.PHP"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: fishPHP, checks: []googleCheck{
			no(foo, "http://foo.bar/bar"),
			yes(foo, "http://foo.bar/fish.php"),
			yes(foo, "http://foo.bar/fishheads/catfish.php?parameters"),
			no(foo, "http://foo.bar/Fish.PHP"),
		}},
		// Section "Order of precedence for group-member records".
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: "user-agent: FooBot\nallow: /p\ndisallow: /\n", checks: []googleCheck{
			yes(foo, "http://example.com/page"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: "user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", checks: []googleCheck{
			yes(foo, "http://example.com/folder/page"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: "user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", checks: []googleCheck{
			no(foo, "http://example.com/page.htm"),
		}},
		{test: "GoogleOnly_DocumentationChecks", google: true, robots: "user-agent: FooBot\nallow: /$\ndisallow: /\n", checks: []googleCheck{
			yes(foo, "http://example.com/"),
			no(foo, "http://example.com/page.html"),
		}},
	}
}

// googlePath is Google's GetPathParamsQuery: the path, params and query
// of url as given (Google leaves escaping the URL to its caller), "/"
// when it has none.
func googlePath(url string) string {
	start := 0
	if strings.HasPrefix(url, "//") {
		start = 2
	}
	find := func(chars string, from int) int {
		if i := strings.IndexAny(url[from:], chars); i >= 0 {
			return from + i
		}
		return -1
	}
	early := find("/?;", start)
	protoEnd := -1
	if i := strings.Index(url[start:], "://"); i >= 0 {
		protoEnd = start + i
	}
	if early >= 0 && (protoEnd < 0 || early < protoEnd) {
		protoEnd = -1
	}
	if protoEnd < 0 {
		protoEnd = start
	} else {
		protoEnd += 3
	}
	pathStart := find("/?;", protoEnd)
	if pathStart < 0 {
		return "/"
	}
	hash := find("#", start)
	if hash >= 0 && hash < pathStart {
		return "/"
	}
	end := len(url)
	if hash >= 0 {
		end = hash
	}
	if url[pathStart] != '/' {
		return "/" + url[pathStart:end]
	}
	return url[pathStart:end]
}

// TestGoogleSuite runs every IsUserAgentAllowed expectation of Google's
// robots_test.cc through Parse and Allowed.
func TestGoogleSuite(t *testing.T) {
	var n, agree, rfc, rfcAgree int
	for _, c := range googleCases() {
		for _, ch := range c.checks {
			n++
			if strings.HasPrefix(c.test, "ID_") {
				rfc++
			}
			got := Parse([]byte(c.robots), ch.agent).Allowed(googlePath(ch.url))
			if got == ch.want {
				agree++
				if strings.HasPrefix(c.test, "ID_") {
					rfcAgree++
				}
				continue
			}
			t.Errorf("%s: agent %q url %q: allowed = %v, want %v\nrobots.txt:\n%s", c.test, ch.agent, clip(ch.url), got, ch.want, clip(c.robots))
		}
	}
	if n != googleChecks {
		t.Errorf("%d expectations, robots_test.cc has %d", n, googleChecks)
	}
	t.Logf("%d/%d of Google's expectations agree (RFC 9309 tests, ID_: %d/%d)", agree, n, rfcAgree, rfc)
}

// TestGoogleSuiteAsTheCrawlerAsks runs the suite as the crawler asks:
// with the product token of the User-Agent (Token) and the path of the
// parsed URL (Path). It differs from Google's answers only where the
// crawler does what the suite leaves to the caller.
func TestGoogleSuiteAsTheCrawlerAsks(t *testing.T) {
	differ := map[string]string{
		// The token of "Foo Bar" is Foo, whose group allows /x/.
		"Foo Bar http://foo.bar/x/y": "the crawler matches by product token",
		// Path percent-encodes the URL, as RFC 9309 section 2.2.2 asks.
		"FooBot http://foo.bar/foo/bar/ツ": "the crawler percent-encodes the URL",
	}
	var n, agree int
	for _, c := range googleCases() {
		for _, ch := range c.checks {
			n++
			u, err := url.Parse(ch.url)
			if err != nil {
				t.Fatalf("%s: %v", c.test, err)
			}
			got := Parse([]byte(c.robots), Token(ch.agent)).Allowed(Path(u))
			_, expected := differ[ch.agent+" "+ch.url]
			if got == ch.want {
				agree++
			}
			if got == ch.want == expected {
				t.Errorf("%s: agent %q url %q: allowed = %v, Google's %v (expected to differ: %v)", c.test, ch.agent, clip(ch.url), got, ch.want, expected)
			}
		}
	}
	t.Logf("%d/%d of Google's expectations agree as the crawler asks", agree, n)
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:100] + "..." + s[len(s)-100:]
	}
	return s
}

// TestGooglePath checks googlePath with Google's TestGetPathParamsQuery.
func TestGooglePath(t *testing.T) {
	for url, want := range map[string]string{
		"":                          "/",
		"http://www.example.com":    "/",
		"http://www.example.com/":   "/",
		"http://www.example.com/a":  "/a",
		"http://www.example.com/a/": "/a/",
		"http://www.example.com/a/b?c=http://d.e/":    "/a/b?c=http://d.e/",
		"http://www.example.com/a/b?c=d&e=f#fragment": "/a/b?c=d&e=f",
		"example.com":                      "/",
		"example.com/":                     "/",
		"example.com/a":                    "/a",
		"example.com/a/":                   "/a/",
		"example.com/a/b?c=d&e=f#fragment": "/a/b?c=d&e=f",
		"a":                                "/",
		"a/":                               "/",
		"/a":                               "/a",
		"a/b":                              "/b",
		"example.com?a":                    "/?a",
		"example.com/a;b#c":                "/a;b",
		"//a/b/c":                          "/b/c",
	} {
		if got := googlePath(url); got != want {
			t.Errorf("googlePath(%q) = %q, want %q", url, got, want)
		}
	}
}

// TestEscape is Google's TestMaybeEscapePattern.
func TestEscape(t *testing.T) {
	for s, want := range map[string]string{
		"http://www.example.com": "http://www.example.com",
		"/a/b/c":                 "/a/b/c",
		"á":                      "%C3%A1",
		"%aa":                    "%AA",
	} {
		if got := escape(s); got != want {
			t.Errorf("escape(%q) = %q, want %q", s, got, want)
		}
	}
}
