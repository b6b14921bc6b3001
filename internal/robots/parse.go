package robots

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxSize is the most of a robots.txt that Parse reads: RFC 9309 asks a
// crawler to read at least the first 500 KiB.
const MaxSize = 512 << 10

// maxLine is the most of a line that is read, as Google reads it (8 times
// a browser's 2,083-byte URL limit, less one); the rest is ignored.
const maxLine = 8*2083 - 1

// maxDelay bounds a Crawl-delay, which time.Duration must hold.
const maxDelay = 1e9 // seconds, about 31 years

// key is what a line says.
type key int

const (
	keyUnknown key = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
	keyCrawlDelay
)

// Parse reads body, a robots.txt, for the crawler whose product token is
// token (see Token). Lines it cannot read are ignored one by one; nothing
// in body is an error. Of a body longer than MaxSize, the first MaxSize
// bytes are read, without the line that the limit cuts.
func Parse(body []byte, token string) *Rules {
	if len(body) > MaxSize {
		if c := body[MaxSize]; c != '\n' && c != '\r' {
			body = body[:bytes.LastIndexAny(body[:MaxSize], "\r\n")+1]
		} else {
			body = body[:MaxSize]
		}
	}
	p := parser{token: token}
	eachLine(body, p.line)
	return p.rules()
}

// parser follows the groups of a file for one product token. A group is
// one or more user-agent lines and the rules after them; a user-agent
// line after a rule starts the next group. Lines that are not rules
// (Sitemap, Crawl-delay, unknown keys) do not end a group's user-agent
// lines.
type parser struct {
	token string

	global, specific bool // the current group is for "*", names token
	inRules          bool // an Allow or Disallow line followed the group's user-agent lines
	named            bool // some group names token: the "*" groups do not apply

	specificRules, globalRules []rule
	specificDelay, globalDelay time.Duration
	sitemaps                   []string
}

func (p *parser) line(s string) {
	k, value, ok := keyValue(s)
	if !ok {
		return
	}
	switch k {
	case keyUserAgent:
		if p.inRules {
			p.global, p.specific, p.inRules = false, false, false
		}
		// Google: a '*' followed by a space and more is still "*".
		if value == "*" || len(value) > 1 && value[0] == '*' && isSpace(value[1]) {
			p.global = true
		} else if t := Token(value); t != "" && strings.EqualFold(t, p.token) {
			p.specific, p.named = true, true
		}
	case keyAllow, keyDisallow:
		if !p.global && !p.specific {
			return // before any user-agent line, or for other crawlers
		}
		p.inRules = true
		value = escape(value)
		p.add(rule{pattern: value, allow: k == keyAllow})
		if k == keyAllow {
			// Google: /index.htm and /index.html allow their directory too.
			if i := strings.LastIndexByte(value, '/'); i >= 0 && strings.HasPrefix(value[i:], "/index.htm") {
				p.add(rule{pattern: value[:i+1] + "$", allow: true})
			}
		}
	case keyCrawlDelay:
		if !p.global && !p.specific {
			return
		}
		d, ok := parseDelay(value)
		if !ok {
			return
		}
		if p.specific {
			p.specificDelay = max(p.specificDelay, d)
		} else {
			p.globalDelay = max(p.globalDelay, d)
		}
	case keySitemap:
		if value != "" {
			p.sitemaps = append(p.sitemaps, value)
		}
	}
}

// add files r under the current group: a group that names token and "*"
// is token's.
func (p *parser) add(r rule) {
	if p.specific {
		p.specificRules = append(p.specificRules, r)
	} else {
		p.globalRules = append(p.globalRules, r)
	}
}

func (p *parser) rules() *Rules {
	r := &Rules{rules: p.globalRules, CrawlDelay: p.globalDelay, Sitemaps: p.sitemaps}
	if p.named {
		r.rules, r.CrawlDelay = p.specificRules, p.specificDelay
	}
	return r
}

// parseDelay reads a Crawl-delay in seconds: a finite, non-negative
// number.
func parseDelay(s string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	return time.Duration(min(f, maxDelay) * float64(time.Second)), true
}

// eachLine calls fn with each line of body, ended by LF, CR or CRLF, cut
// after maxLine bytes, after skipping a leading UTF-8 byte order mark or
// the start of one.
func eachLine(body []byte, fn func(string)) {
	const bom = "\xEF\xBB\xBF"
	for i := 0; i < len(bom) && len(body) > 0 && body[0] == bom[i]; i++ {
		body = body[1:]
	}
	for {
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			fn(string(body[:min(len(body), maxLine)]))
			return
		}
		fn(string(body[:min(i, maxLine)]))
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
	}
}

// keyValue splits a line into its key and value, without the comment
// that '#' starts and without surrounding white space. ok is false for a
// line with no key (empty, a comment, no separator).
func keyValue(line string) (k key, value string, ok bool) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = trimSpace(line)
	if line == "" {
		return 0, "", false
	}
	name, value, found := strings.Cut(line, ":")
	if !found {
		// Google: a missing colon is read into white space between
		// exactly two words ("disallow /").
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			return 0, "", false
		}
		name, value = line[:i], trimSpace(line[i:])
		if strings.ContainsAny(value, " \t") {
			return 0, "", false
		}
	}
	name, value = trimSpace(name), trimSpace(value)
	if name == "" {
		return 0, "", false
	}
	return keyOf(name), value, true
}

// keyOf recognises a key by its prefix, and a few frequent typos, as
// Google does.
func keyOf(name string) key {
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("user-agent", "useragent", "user agent"):
		return keyUserAgent
	case has("allow"):
		return keyAllow
	case has("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"):
		return keyDisallow
	case has("sitemap", "site-map"):
		return keySitemap
	case strings.EqualFold(name, "crawl-delay"):
		return keyCrawlDelay
	}
	return keyUnknown
}

// isSpace is absl::ascii_isspace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
