package robots

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

const agent = "caffeine-crawler"

// TestRules covers what the crawler relies on beyond Google's suite.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name, robots string
		allowed      []string
		disallowed   []string
	}{
		{
			name:       "stray rules before the first user-agent",
			robots:     "disallow: /a\nallow: /private/x\nuser-agent: *\ndisallow: /private/\n",
			allowed:    []string{"/", "/a"},
			disallowed: []string{"/private/", "/private/x"},
		},
		{
			name:       "a crawl-delay that is no number",
			robots:     "user-agent: *\ncrawl-delay: fast\ndisallow: /private/\n",
			allowed:    []string{"/"},
			disallowed: []string{"/private/a"},
		},
		{
			name:       "lines nobody knows",
			robots:     "user-agent: *\nnoindex: /x\nhost: example.com\n: /y\nfoo bar baz\ndisallow: /private/\n",
			allowed:    []string{"/x", "/y"},
			disallowed: []string{"/private/a"},
		},
		{
			name:       "a longer product token does not match",
			robots:     "user-agent: caffeine\ndisallow: /\n",
			allowed:    []string{"/", "/a"},
			disallowed: nil,
		},
		{
			name:       "the product token in any case",
			robots:     "user-agent: *\ndisallow: /\nuser-agent: Caffeine-Crawler/2.0\ndisallow: /b\n",
			allowed:    []string{"/", "/a"},
			disallowed: []string{"/b"},
		},
		{
			name:       "groups for us merge; * is ignored then",
			robots:     "user-agent: caffeine-crawler\ndisallow: /a\n\nuser-agent: *\ndisallow: /\n\nuser-agent: other\nuser-agent: caffeine-crawler\ndisallow: /b\n",
			allowed:    []string{"/", "/c"},
			disallowed: []string{"/a", "/b/c"},
		},
		{
			name:    "a group naming us with no rules",
			robots:  "user-agent: *\ndisallow: /\n\nuser-agent: caffeine-crawler\n",
			allowed: []string{"/", "/a"},
		},
		{
			name:       "* groups merge",
			robots:     "user-agent: *\ndisallow: /a\n\nuser-agent: other\ndisallow: /\n\nuser-agent: *\ndisallow: /b\n",
			allowed:    []string{"/", "/c"},
			disallowed: []string{"/a", "/b"},
		},
		{
			name:       "patterns are anchored at the start",
			robots:     "user-agent: *\ndisallow: /fish*.php\ndisallow: /*.gif$\n",
			allowed:    []string{"/x/fish.php", "/a.gif?x", "/a.gifs"},
			disallowed: []string{"/fish.php", "/fishy/cat.php?x", "/a/b.gif"},
		},
		{
			name:       "allow wins a tie; the pattern's length counts",
			robots:     "user-agent: *\ndisallow: /a*\nallow: /a$\ndisallow: /b/*.html\nallow: /b/c\n",
			allowed:    []string{"/a", "/b/c", "/b/x.htm"},
			disallowed: []string{"/ab", "/b/cc.html"},
		},
		{
			name:    "an empty disallow allows everything",
			robots:  "user-agent: *\ndisallow:\n",
			allowed: []string{"/", "/a"},
		},
		{
			name:       "robots.txt itself",
			robots:     "user-agent: *\ndisallow: /\n",
			allowed:    []string{"/robots.txt"},
			disallowed: []string{"/", "/robots.txt?x", "/robots.txtx"},
		},
		{
			name:       "comments",
			robots:     "# hello\nuser-agent: * # all\ndisallow: /a#b\ndisallow: /c # d\n",
			allowed:    []string{"/", "/b"},
			disallowed: []string{"/a", "/a%23b", "/c"},
		},
		{
			name:       "non-ASCII rules are percent-encoded",
			robots:     "user-agent: *\ndisallow: /ツ\ndisallow: /%e3%81%82\n",
			allowed:    []string{"/"},
			disallowed: []string{"/%E3%83%84", "/%E3%83%84/x", "/%E3%81%82"},
		},
		{
			name:       "CR and CRLF line ends and a byte order mark",
			robots:     "\xEF\xBB\xBFuser-agent: *\rdisallow: /a\r\ndisallow: /b\n\rdisallow: /c",
			allowed:    []string{"/"},
			disallowed: []string{"/a", "/b", "/c"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.robots), agent)
			for _, p := range tc.allowed {
				if !r.Allowed(p) {
					t.Errorf("%q disallowed, want allowed", p)
				}
			}
			for _, p := range tc.disallowed {
				if r.Allowed(p) {
					t.Errorf("%q allowed, want disallowed", p)
				}
			}
		})
	}
}

func TestCrawlDelayAndSitemaps(t *testing.T) {
	const robots = "sitemap: https://example.com/a.xml\n" +
		"crawl-delay: 9\n" + // before any user-agent: no group's
		"user-agent: *\ncrawl-delay: 7\ndisallow: /y\n" +
		"user-agent: caffeine-crawler\ncrawl-delay: fast\ncrawl-delay: 0.5\ndisallow: /z\n" +
		"Sitemap: https://example.com/b.xml # the second\n" +
		"user-agent: caffeine-crawler\ncrawl-delay: 2\ndisallow: /x\n" +
		"user-agent: other\ncrawl-delay: 30\n" +
		"site-map: /c.xml\nsitemap:\n"
	r := Parse([]byte(robots), agent)
	if r.CrawlDelay != 2*time.Second {
		t.Errorf("CrawlDelay = %v, want 2s (the largest of our groups)", r.CrawlDelay)
	}
	if want := []string{"https://example.com/a.xml", "https://example.com/b.xml", "/c.xml"}; !slices.Equal(r.Sitemaps, want) {
		t.Errorf("Sitemaps = %q, want %q", r.Sitemaps, want)
	}
	if d := Parse([]byte(robots), "nobody").CrawlDelay; d != 7*time.Second {
		t.Errorf("* CrawlDelay = %v, want 7s", d)
	}
	for value, want := range map[string]time.Duration{
		"1": time.Second, "0.25": 250 * time.Millisecond, "-1": 0, "NaN": 0, "1e12": 1e9 * time.Second, "1e400": 0, "1s": 0, "": 0,
	} {
		if d := Parse([]byte("user-agent: *\ncrawl-delay: "+value), agent).CrawlDelay; d != want {
			t.Errorf("crawl-delay: %s gives %v, want %v", value, d, want)
		}
	}
}

func TestMaxSize(t *testing.T) {
	// body is head, comment lines up to MaxSize-cut bytes, then tail: the
	// limit falls cut bytes into tail.
	body := func(head, tail string, cut int) []byte {
		n := MaxSize - cut - len(head)
		return []byte(head + "#" + strings.Repeat("x", n-2) + "\n" + tail)
	}
	for _, tc := range []struct {
		name, head, tail string
		cut              int
		allowed          []string
		disallowed       []string
	}{
		// Cut to "allow: /", the line would allow everything.
		{name: "cut allow", head: "user-agent: *\ndisallow: /\n", tail: "allow: /a/b\n", cut: 8,
			disallowed: []string{"/", "/a/b"}},
		{name: "cut disallow", head: "user-agent: *\n", tail: "disallow: /b/c\n", cut: 12,
			allowed: []string{"/b/x"}},
		{name: "past the limit", head: "user-agent: *\n", tail: "disallow: /b\n", cut: 0,
			allowed: []string{"/b"}},
		{name: "a line that ends at the limit", head: "user-agent: *\n", tail: "disallow: /b\nallow: /b\n", cut: len("disallow: /b"),
			disallowed: []string{"/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := body(tc.head, tc.tail, tc.cut)
			if got := string(b[MaxSize-tc.cut:]); got != tc.tail {
				t.Fatalf("the limit falls before %q", got)
			}
			r := Parse(b, agent)
			for _, p := range tc.allowed {
				if !r.Allowed(p) {
					t.Errorf("%q disallowed, want allowed", p)
				}
			}
			for _, p := range tc.disallowed {
				if r.Allowed(p) {
					t.Errorf("%q allowed, want disallowed", p)
				}
			}
		})
	}
}

func TestFromStatus(t *testing.T) {
	body := []byte("user-agent: *\ndisallow: /\n")
	for _, tc := range []struct {
		status  int
		allowed bool
		err     bool
	}{
		{200, false, false}, {204, false, false}, {301, true, false}, {304, true, false},
		{401, true, false}, {403, true, false}, {404, true, false}, {410, true, false},
		{429, false, true}, {500, false, true}, {503, false, true},
	} {
		r, err := FromStatus(tc.status, body, agent)
		if tc.err {
			if !errors.Is(err, ErrUnreachable) || r != nil {
				t.Errorf("status %d: %v, %v; want ErrUnreachable", tc.status, r, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("status %d: %v", tc.status, err)
			continue
		}
		if got := r.Allowed("/a"); got != tc.allowed {
			t.Errorf("status %d: Allowed = %v, want %v", tc.status, got, tc.allowed)
		}
	}
	if DisallowAll().Allowed("/a") || !DisallowAll().Allowed("/robots.txt") || !AllowAll().Allowed("/a") {
		t.Error("DisallowAll or AllowAll")
	}
}

func TestToken(t *testing.T) {
	for ua, want := range map[string]string{
		"caffeine-crawler/0.1 (+https://github.com/caffeine-go/caffeine)": "caffeine-crawler",
		"Foo_Bar":                  "Foo_Bar",
		"Googlebot Images":         "Googlebot",
		"Mozilla/5.0 (compatible)": "Mozilla",
		"*":                        "",
		"":                         "",
	} {
		if got := Token(ua); got != want {
			t.Errorf("Token(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestPath(t *testing.T) {
	for raw, want := range map[string]string{
		"http://h":               "/",
		"http://h/":              "/",
		"http://h/a/b?c=d&e=f#g": "/a/b?c=d&e=f",
		"http://h/a?":            "/a?",
		"http://h/ツ":             "/%E3%83%84",
		"http://h/%e3%83%84?q=ツ": "/%E3%83%84?q=%E3%83%84",
		"http://h/a%2fb":         "/a%2Fb",
		"http://h/a b":           "/a%20b",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := Path(u); got != want {
			t.Errorf("Path(%q) = %q, want %q", raw, got, want)
		}
	}
}

// matchGoogle is Google's RobotsMatchStrategy::Matches (robots.cc at the
// commit of google_test.go): the positions of path that the pattern so
// far can reach.
func matchGoogle(path, pattern string) bool {
	pos := []int{0}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i+1 == len(pattern) {
			return pos[len(pos)-1] == len(path)
		}
		if c == '*' {
			from := pos[0]
			pos = pos[:0]
			for p := from; p <= len(path); p++ {
				pos = append(pos, p)
			}
			continue
		}
		next := pos[:0]
		for _, p := range pos {
			if p < len(path) && path[p] == c {
				next = append(next, p+1)
			}
		}
		pos = next
		if len(pos) == 0 {
			return false
		}
	}
	return true
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"/fish/salmon.php", "/fish*.php"}, {"/a.php.php", "/*.php$"}, {"/a$b", "/a$b"},
		{"/", "$"}, {"/abcabc", "/*abc*c$"}, {"/x", "*"}, {"", ""}, {"/aab", "/*ab$"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, pattern string) {
		if got, want := match(path, pattern), matchGoogle(path, pattern); got != want {
			t.Errorf("match(%q, %q) = %v, Google's %v", path, pattern, got, want)
		}
	})
}

// FuzzParse: no input panics, each line is read alone (a line of garbage
// added anywhere leaves the verdicts as they were), /robots.txt is always
// allowed.
func FuzzParse(f *testing.F) {
	f.Add([]byte("user-agent: *\ndisallow: /a\nallow: /a/b$\ncrawl-delay: 1\n"), []byte("zz: \xff"), uint(1), "/a/b")
	f.Add([]byte("User-agent: caffeine-crawler\r\nDisallow: /*.gif$\r\n"), []byte("disallow /"), uint(0), "/x.gif")
	f.Fuzz(func(t *testing.T, body, garbage []byte, at uint, path string) {
		r := Parse(body, agent)
		if !r.Allowed("/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		r.Allowed(path)
		// Garbage: a line with no key, an unknown one, or a Crawl-delay
		// that is no number.
		g := string(garbage)
		if len(g) >= maxLine || strings.ContainsAny(g, "\r\n") || len(body) > 1<<16 {
			return
		}
		if k, v, ok := keyValue(g); ok && k != keyUnknown {
			if _, number := parseDelay(v); k != keyCrawlDelay || number {
				return
			}
		}
		lines := strings.SplitAfter(string(body), "\n")
		i := int(at % uint(len(lines)+1))
		if i > 0 && !strings.HasSuffix(lines[i-1], "\n") {
			return
		}
		with := strings.Join(slices.Insert(slices.Clone(lines), i, string(garbage)+"\n"), "")
		if strings.HasPrefix(with, "\xEF") || strings.HasPrefix(string(body), "\xEF") {
			return // a byte order mark is only skipped at the start
		}
		r2 := Parse([]byte(with), agent)
		for _, p := range []string{path, "/", "/a", "/a/b", "/x.gif"} {
			if r.Allowed(p) != r2.Allowed(p) {
				t.Fatalf("line %q at %d changed the verdict on %q", garbage, i, p)
			}
		}
		if r.CrawlDelay != r2.CrawlDelay {
			t.Fatalf("line %q changed Crawl-delay", garbage)
		}
	})
}

func BenchmarkAllowed(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("user-agent: *\n")
	for i := range 100 {
		fmt.Fprintf(&sb, "disallow: /dir%d/\nallow: /dir%d/*.html$\n", i, i)
	}
	r := Parse([]byte(sb.String()), agent)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.Allowed("/dir50/sub/page.html?x=1")
	}
}

func Example() {
	body := []byte("User-agent: *\nDisallow: /private/\nAllow: /private/open\nCrawl-delay: 2\n" +
		"Sitemap: https://example.com/sitemap.xml\n")
	r, err := FromStatus(200, body, Token("caffeine-crawler/0.1 (+https://example.com)"))
	if err != nil {
		panic(err)
	}
	u, _ := url.Parse("https://example.com/private/x")
	fmt.Println(r.Allowed(Path(u)), r.Allowed("/private/open/y"), r.CrawlDelay, r.Sitemaps)
	// Output: false true 2s [https://example.com/sitemap.xml]
}
