package web

import (
	"math"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/caffeine-go/caffeine/serving"
)

func TestAgo(t *testing.T) {
	cases := []struct {
		d    time.Duration // before now
		want string
	}{
		{0, "just now"},
		{9 * time.Second, "just now"},
		{-9 * time.Second, "just now"},
		{10 * time.Second, "10 seconds ago"},
		{59 * time.Second, "59 seconds ago"},
		{time.Minute, "1 minute ago"},
		{3*time.Minute + 59*time.Second, "3 minutes ago"},
		{time.Hour, "1 hour ago"},
		{47 * time.Hour, "47 hours ago"},
		{48 * time.Hour, "2 days ago"},
		{59 * 24 * time.Hour, "59 days ago"},
		{90 * 24 * time.Hour, "3 months ago"},
		{800 * 24 * time.Hour, "2 years ago"},
		{-2 * time.Hour, "in 2 hours"},
		{-time.Minute, "in 1 minute"},
	}
	for _, c := range cases {
		if got := ago(testNow, testNow.Add(-c.d)); got != c.want {
			t.Errorf("ago(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := ago(testNow, time.Time{}); got != "never" {
		t.Errorf("ago(zero) = %q", got)
	}
}

func TestDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 s"},
		{850 * time.Microsecond, "850 µs"},
		{1234 * time.Microsecond, "1.2 ms"},
		{2 * time.Millisecond, "2 ms"},
		{12 * time.Millisecond, "12 ms"},
		{999 * time.Millisecond, "999 ms"},
		{1200 * time.Millisecond, "1.2 s"},
		{4750 * time.Millisecond, "4.75 s"},
		{12 * time.Second, "12 s"},
		{3*time.Minute + 5*time.Second, "3 min 5 s"},
		{3 * time.Minute, "3 min"},
		{2*time.Hour + 3*time.Minute, "2 h 3 min"},
		{76 * time.Hour, "3 d 4 h"},
		{-1500 * time.Millisecond, "−1.5 s"},
	}
	for _, c := range cases {
		if got := duration(c.d); got != c.want {
			t.Errorf("duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := seconds(math.NaN()); got != "–" {
		t.Errorf("seconds(NaN) = %q", got)
	}
	if got := seconds(0.25); got != "250 ms" {
		t.Errorf("seconds(0.25) = %q", got)
	}
}

func TestNumber(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.15, "0.15"}, {0.0012345, "0.00123"}, {0.00001, "1.00e-05"}, {1, "1"}, {2.5, "2.5"},
		{12.75, "12.8"}, {123.4, "123"}, {12345.6, "12346"}, {-2.5, "-2.5"}, {math.Inf(1), "–"},
	}
	for _, c := range cases {
		if got := number(c.v); got != c.want {
			t.Errorf("number(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1\u202f000", 1234567: "1\u202f234\u202f567", -1234: "-1\u202f234"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSafeHref(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"https://www.example.com/a?b=c#d", "https://www.example.com/a?b=c#d"},
		{"http://127.0.0.1:8000/x", "http://127.0.0.1:8000/x"},
		{"HTTP://EXAMPLE.COM/", "HTTP://EXAMPLE.COM/"},
		{"javascript:alert(1)", ""},
		{"JavaScript:alert(1)", ""},
		{" javascript:alert(1)", ""},
		{"java\tscript:alert(1)", ""},
		{"javascript://example.com/%0aalert(1)", ""},
		{"data:text/html,<script>alert(1)</script>", ""},
		{"vbscript:msgbox", ""},
		{"//evil.example/", ""},
		{"/relative", ""},
		{"", ""},
		{"http:///no-host", ""},
		{"mailto:a@example.com", ""},
		{"http://exa mple.com/", ""},
	}
	for _, c := range cases {
		if got := safeHref(c.in); got != c.want {
			t.Errorf("safeHref(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSnippetHTML(t *testing.T) {
	got := snippetHTML([]serving.Span{
		{Text: "a <b> & "},
		{Text: `"quoted" <script>`, Mark: true},
		{Text: "</mark><mark>x\x00\xff"},
	})
	want := `a &lt;b&gt; &amp; <mark>&#34;quoted&#34; &lt;script&gt;</mark>&lt;/mark&gt;&lt;mark&gt;x` + "\uFFFD\uFFFD"
	if string(got) != want {
		t.Errorf("snippetHTML =\n%s, want\n%s", got, want)
	}
	if got := snippetHTML(nil); got != "" {
		t.Errorf("snippetHTML(nil) = %q", got)
	}
	if got := snippetText([]serving.Span{{Text: "a "}, {Text: "<b>", Mark: true}}); got != "a <b>" {
		t.Errorf("snippetText = %q", got)
	}
}

func TestClip(t *testing.T) {
	if got := clip("héllo wörld", 5); got != "héllo…" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("short", 5); got != "short" {
		t.Errorf("clip = %q", got)
	}
}

// FuzzSnippetHTML: whatever the page text, a rendered snippet parses as
// text and <mark> elements only, and its text is the spans' text.
func FuzzSnippetHTML(f *testing.F) {
	f.Add("plain", "match", "<script>alert(1)</script>")
	f.Add("</mark><img src=x onerror=alert(1)>", `"'&`, "<!--")
	f.Add("\x00", "\xff\xfe", "<mark>")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		spans := []serving.Span{{Text: a}, {Text: b, Mark: true}, {Text: c}}
		out := string(snippetHTML(spans))
		ctx := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
		nodes, err := html.ParseFragment(strings.NewReader(out), ctx)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		marks := 0
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			switch n.Type {
			case html.TextNode:
				text.WriteString(n.Data)
			case html.ElementNode:
				if n.Data != "mark" || len(n.Attr) > 0 {
					t.Fatalf("element <%s %v> in %q", n.Data, n.Attr, out)
				}
				marks++
			default:
				t.Fatalf("node type %d in %q", n.Type, out)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		for _, n := range nodes {
			walk(n)
		}
		if marks != 1 {
			t.Fatalf("%d marks in %q", marks, out)
		}
		clean := func(s string) string {
			s = strings.ToValidUTF8(s, "\uFFFD")
			s = strings.ReplaceAll(s, "\x00", "\uFFFD")
			// The HTML parser normalizes newlines.
			return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
		}
		// Spans are escaped one by one: a run of invalid bytes across two
		// spans is two replacement characters.
		if want := clean(a) + clean(b) + clean(c); text.String() != want {
			t.Fatalf("text %q, want %q", text.String(), want)
		}
	})
}

// FuzzSafeHref: a link is only ever an absolute http(s) URL.
func FuzzSafeHref(f *testing.F) {
	for _, s := range []string{"https://example.com/", "javascript:alert(1)", " http://x/", "//x", "http:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := safeHref(s)
		if got == "" {
			return
		}
		l := strings.ToLower(got)
		if got != s || !(strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) {
			t.Fatalf("safeHref(%q) = %q", s, got)
		}
	})
}

func TestURLHTML(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:20001/a?b=<c>", `http://127.0.0.1<span class="port">:20001</span>/a?b=&lt;c&gt;`},
		{"https://example.com/x:1", "https://example.com/x:1"},
		{"http://[::1]/", "http://[::1]/"},
		{"http://[::1]:8080", `http://[::1]<span class="port">:8080</span>`},
		{"not a url <b>", "not a url &lt;b&gt;"},
	} {
		if got := string(urlHTML(c.in)); got != c.want {
			t.Errorf("urlHTML(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
