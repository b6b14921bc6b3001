package extract

import "strings"

// Agent is the robots product token whose rules HTML honours besides the
// rules for all robots: <meta name=caffeine-crawler> as <meta name=robots>,
// and X-Robots-Tag directives prefixed "caffeine-crawler:". It is the
// product token of the crawler's default User-Agent. The crawler and the
// parse observer both read a page's robots rules through HTML, so both
// honour this one token, whatever User-Agent the page was fetched with.
const Agent = "caffeine-crawler"

// robotsMeta reports whether a <meta name> carries robots rules for us:
// "robots" or Agent, in any letter case.
func robotsMeta(name string) bool {
	name = strings.TrimSpace(name)
	return strings.EqualFold(name, "robots") || strings.EqualFold(name, Agent)
}

// metaRobots applies the directives of a <meta name=robots content=...>:
// comma- or space-separated, case-insensitive; "none" is noindex+nofollow.
func metaRobots(content string, noindex, nofollow *bool) {
	for _, tok := range strings.FieldsFunc(content, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
	}) {
		robotsDirective(tok, noindex, nofollow)
	}
}

// xRobotsTag applies an X-Robots-Tag header (several headers joined with
// ", "). A "name:" prefix naming a user agent makes the directives after it
// apply to that agent only: they are honoured when it names Agent (or "*"),
// ignored otherwise.
func xRobotsTag(header string, noindex, nofollow *bool) {
	agent := ""
	for _, part := range strings.Split(header, ",") {
		if name, rest, ok := strings.Cut(part, ":"); ok {
			name = strings.ToLower(strings.TrimSpace(name))
			switch name {
			case "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview":
				// a directive with a value, not a user agent
			default:
				agent, part = name, rest
			}
		}
		if agent == "" || agent == "*" || agent == Agent {
			robotsDirective(strings.TrimSpace(part), noindex, nofollow)
		}
	}
}

func robotsDirective(tok string, noindex, nofollow *bool) {
	switch strings.ToLower(tok) {
	case "noindex":
		*noindex = true
	case "nofollow":
		*nofollow = true
	case "none":
		*noindex, *nofollow = true, true
	}
}

// langTag returns the first language tag of a lang attribute or
// Content-Language value, lower-cased with "_" read as "-", or "" when it
// does not look like a BCP 47 tag.
func langTag(s string) string {
	s, _, _ = strings.Cut(s, ",")
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "_", "-")
	if s == "" || len(s) > 35 {
		return ""
	}
	for i, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' || c == '-':
			if i == 0 {
				return ""
			}
		default:
			return ""
		}
	}
	if primary, _, _ := strings.Cut(s, "-"); len(primary) > 8 {
		return ""
	}
	return s
}
