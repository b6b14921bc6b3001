package web

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// safeHref returns s when it is an absolute http or https URL, else "".
// Only such URLs of crawled pages become links; html/template would turn a
// javascript: URL into "#ZgotmplZ", but data:, relative and
// protocol-relative URLs pass its filter.
func safeHref(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return s
	}
	return ""
}

// sectionHref is the link to a section of the page at href (a safeHref),
// "" when there is no link or no section.
func sectionHref(href, fragment string) string {
	if href == "" || fragment == "" {
		return ""
	}
	base, _, _ := strings.Cut(href, "#")
	return base + "#" + (&url.URL{Fragment: fragment}).EscapedFragment()
}

// docHref is the document page of a URL.
func docHref(u string) string { return "/doc?url=" + url.QueryEscape(u) }

// topHref is the top page of a host.
func topHref(host string) string { return "/top?host=" + url.QueryEscape(host) }

// snippetHTML renders spans: each span's text is escaped first, and only
// then are the matches wrapped in <mark>, so page text can never open a tag.
func snippetHTML(spans []serving.Span) template.HTML {
	var b strings.Builder
	for _, sp := range spans {
		if sp.Mark {
			b.WriteString("<mark>")
		}
		escapeText(&b, sp.Text)
		if sp.Mark {
			b.WriteString("</mark>")
		}
	}
	return template.HTML(b.String())
}

// escapeText writes s escaped for HTML text and attribute values. Invalid
// UTF-8 and NUL become U+FFFD, as html/template does.
func escapeText(b *strings.Builder, s string) {
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		case 0:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
}

// snippetText is the plain text of a snippet.
func snippetText(spans []serving.Span) string {
	var b strings.Builder
	for _, sp := range spans {
		b.WriteString(sp.Text)
	}
	return b.String()
}

// clip shortens s to at most n runes, with an ellipsis when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n])) + "…"
}

// ago says how long before now t was: "3 minutes ago", "in 2 hours",
// "just now"; "never" for the zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d > -10*time.Second && d < 10*time.Second:
		return "just now"
	case d < 0:
		return "in " + span(-d)
	}
	return span(d) + " ago"
}

// span is a coarse length of time in words: "1 minute", "5 days".
func span(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d < time.Minute:
		return plural(int(d/time.Second), "second")
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 2*day:
		return plural(int(d/time.Hour), "hour")
	case d < 60*day:
		return plural(int(d/day), "day")
	case d < 730*day:
		return plural(int(d/(30*day)), "month")
	}
	return plural(int(d/(365*day)), "year")
}

// plural is "1 page", "2 pages".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// duration is a precise, short length of time: "850 µs", "12 ms", "1.2 s",
// "3 min 5 s", "2 h 3 min", "3 d 4 h".
func duration(d time.Duration) string {
	if d < 0 {
		return "−" + duration(-d)
	}
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0 s"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d/time.Microsecond)
	case d < 10*time.Millisecond:
		return trimZero(fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))) + " ms"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d/time.Millisecond)
	case d < 10*time.Second:
		return trimZero(fmt.Sprintf("%.2f", d.Seconds())) + " s"
	case d < time.Minute:
		return fmt.Sprintf("%.0f s", math.Floor(d.Seconds()))
	case d < time.Hour:
		return pair(int(d/time.Minute), "min", int(d%time.Minute/time.Second), "s")
	case d < day:
		return pair(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "min")
	}
	return pair(int(d/day), "d", int(d%day/time.Hour), "h")
}

func pair(a int, ua string, b int, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d %s", a, ua)
	}
	return fmt.Sprintf("%d %s %d %s", a, ua, b, ub)
}

// seconds is duration for a float number of seconds (latencies).
func seconds(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return "–"
	}
	return duration(time.Duration(s * float64(time.Second)))
}

// trimZero drops trailing zeros of a decimal: "1.50" → "1.5", "2.00" → "2".
func trimZero(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// number formats a float with about three significant digits and no
// exponent: PageRanks (about 0.15 to a few thousand), rates, scores.
func number(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return trimZero(strconv.FormatFloat(v, 'f', 1, 64))
	case a >= 1:
		return trimZero(strconv.FormatFloat(v, 'f', 2, 64))
	case a >= 0.001:
		return trimZero(strconv.FormatFloat(v, 'f', 3-int(math.Floor(math.Log10(a)))-1, 64))
	}
	return strconv.FormatFloat(v, 'e', 2, 64)
}

// count formats an integer with thin thousands separators: "12 345".
func count[T int | int64 | uint64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune('\u202f')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// countAny is count for templates, which hold ints of several types.
func countAny(v any) string {
	switch n := v.(type) {
	case int:
		return count(n)
	case int64:
		return count(n)
	case uint64:
		return count(n)
	}
	return fmt.Sprint(v)
}

// timestamp is an absolute time for tooltips and tables, in UTC.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// urlHTML is DisplayURL escaped for HTML, with the port kept on one line:
// a long URL may break anywhere on a narrow screen, but not inside
// ":8080" (the port reads as a number only whole).
func urlHTML(u string) template.HTML {
	d := webtable.DisplayURL(u)
	i := strings.Index(d, "://")
	if i < 0 {
		return template.HTML(template.HTMLEscapeString(d))
	}
	rest := d[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	c := strings.LastIndexByte(rest[:end], ':')
	if c < 0 || strings.HasSuffix(rest[:end], "]") {
		return template.HTML(template.HTMLEscapeString(d))
	}
	return template.HTML(template.HTMLEscapeString(d[:i+3]+rest[:c]) +
		`<span class="port">` + template.HTMLEscapeString(rest[c:end]) + `</span>` +
		template.HTMLEscapeString(rest[end:]))
}
