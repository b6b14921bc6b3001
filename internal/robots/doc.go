// Package robots reads robots.txt files as RFC 9309 says, and as Google's
// reference parser (github.com/google/robotstxt) reads them where the RFC
// leaves a choice: the crawler and the freshness probe ask it whether a
// path may be fetched.
//
// # Basics
//
//	rules, err := robots.FromStatus(resp.StatusCode, body, robots.Token(userAgent))
//	if err != nil { ... } // 5xx or 429: unreachable, fetch nothing for now
//	ok := rules.Allowed(robots.Path(u))
//
// A file is read line by line, and a line that cannot be read is ignored
// alone: a rule before the first user-agent line, an unknown key, a
// Crawl-delay that is not a number. Groups name crawlers by product token
// (the User-Agent's leading letters, '-' and '_', compared without regard
// to case, whole: "caffeine" does not name "caffeine-crawler"). The rules
// of every group that names the crawler apply, merged; those of the "*"
// groups only when none names it. Of the rules whose pattern matches the
// path (anchored at its start, '*' for any characters, a final '$' for
// its end), the longest pattern wins and allow wins a tie; an empty
// Disallow matches nothing. /robots.txt itself is always allowed.
// Patterns and paths are compared with every octet outside US-ASCII
// percent-encoded and every %xx escape in upper case.
//
// # Caveats
//
// Like Google, and beyond the RFC: a key is recognised by its prefix and
// a few frequent typos ("useragent", "dissallow"); a line with no colon
// but two words ("disallow /") is read as if it had one; a user-agent
// value is read up to its first character that cannot be in a product
// token ("Foo Bar" names Foo); an Allow pattern ending in /index.htm or
// /index.html also allows its directory; a line is cut after 16,665
// bytes; a leading UTF-8 byte order mark is skipped. Crawl-delay, which
// Google ignores, is read here: the largest of the groups that apply.
//
// A file is read up to MaxSize bytes (RFC 9309 asks for at least 500
// KiB); a line the limit cuts is ignored. A 429 is taken as unreachable,
// as Google takes it, although the RFC groups it with the other 4xx.
package robots
