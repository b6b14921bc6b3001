package robots

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrUnreachable is returned by FromStatus when robots.txt answered with
// a server error (5xx) or 429: RFC 9309 asks a crawler to fetch nothing
// from the host then.
var ErrUnreachable = errors.New("robots: robots.txt unreachable")

// Rules are what a robots.txt says to one crawler. A Rules is not changed
// after Parse returns it and is safe for concurrent use.
type Rules struct {
	rules []rule

	// CrawlDelay is the largest Crawl-delay of the groups that apply, 0
	// if none has one.
	CrawlDelay time.Duration
	// Sitemaps are the Sitemap lines' values in the file's order, as
	// written (a line of any group, or of none).
	Sitemaps []string
}

// rule is one Allow or Disallow line.
type rule struct {
	pattern string // percent-encoded as escape does
	allow   bool
}

// AllowAll returns Rules that allow every path: those of a robots.txt
// that is missing (4xx) or empty.
func AllowAll() *Rules { return &Rules{} }

// DisallowAll returns Rules that disallow every path but /robots.txt.
func DisallowAll() *Rules { return &Rules{rules: []rule{{pattern: "/"}}} }

// FromStatus returns the rules of a robots.txt fetched with status and
// body for the crawler whose product token is token (see Token). A 2xx
// body is parsed; 3xx (more redirects than were followed), 4xx but 429,
// and 1xx allow every path, as RFC 9309 says of an unavailable file; 5xx
// and 429 return an error wrapping ErrUnreachable.
func FromStatus(status int, body []byte, token string) (*Rules, error) {
	switch {
	case status >= 200 && status < 300:
		return Parse(body, token), nil
	case status == http.StatusTooManyRequests || status >= 500:
		return nil, fmt.Errorf("%w (status %d)", ErrUnreachable, status)
	default:
		return AllowAll(), nil
	}
}

// Allowed reports whether r allows path, the escaped path and query of a
// URL (see Path); an empty path is "/".
func (r *Rules) Allowed(path string) bool {
	if path == "" {
		path = "/"
	}
	if path == "/robots.txt" { // RFC 9309 section 2.2.2
		return true
	}
	allow, disallow := -1, -1
	for _, ru := range r.rules {
		n := len(ru.pattern)
		if ru.allow && n <= allow || !ru.allow && n <= disallow || !match(path, ru.pattern) {
			continue
		}
		if ru.allow {
			allow = n
		} else {
			disallow = n
		}
	}
	// An empty pattern matches with length 0, which decides nothing.
	return disallow <= 0 || disallow <= allow
}

// Token returns the product token of a User-Agent: its leading letters,
// '-' and '_' ("caffeine-crawler" of "caffeine-crawler/1.0 (+url)"), the
// part robots.txt groups name.
func Token(userAgent string) string {
	i := 0
	for i < len(userAgent) && tokenByte(userAgent[i]) {
		i++
	}
	return userAgent[:i]
}

func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
}
