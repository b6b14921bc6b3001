package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestHomePage(t *testing.T) {
	f := canned()
	s, _ := newTestServer(t, f, Options{})
	res, body := get(t, s, "/")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "home", body,
		"The index holds <b>1\u202f100 pages</b> from <b>2 hosts</b>",
		`<a href="/top?host=www.example.com">www.example.com</a>`,
		`<a href="/search?q=example">example</a>`,
		`<a href="/search?q=percolator%20incremental%20processing">percolator incremental processing</a>`,
	)
	if strings.Contains(body, "<img") || strings.Contains(body, "<script>") {
		t.Errorf("home: unescaped payload:\n%s", body)
	}
	// The view is kept: a second visit asks the backend nothing.
	get(t, s, "/")
	if got, want := f.calls(), []string{"Top  12"}; !slices.Equal(got, want) {
		t.Errorf("backend calls %q, want %q", got, want)
	}
}

func TestExampleQueries(t *testing.T) {
	titles := []string{
		"PostgreSQL 15 Documentation — PostgreSQL",
		"9.4. String Functions and Operators — PostgreSQL",
		"CREATE TABLE — PostgreSQL",
		"The SQL Language — PostgreSQL",
		"CREATE TABLE — PostgreSQL",
		"a of — PostgreSQL",
		"Part VII. Internals — PostgreSQL",
	}
	got := exampleQueries(titles, 5)
	want := []string{"postgresql documentation", "string functions operators", "create table", "sql language", "internals"}
	if !slices.Equal(got, want) {
		t.Errorf("exampleQueries = %q, want %q", got, want)
	}
}

func TestZeroResultsTips(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	_, body := get(t, s, "/search?q=nothing")
	wantContains(t, "nothing", body, "Check the spelling.", "Use fewer words", "<summary>Query syntax</summary>", "Remove operators such as")
	_, body = get(t, s, "/search?q="+url.QueryEscape(`"nothing here" -foo site:x.com title:<b>x</b>~1`))
	wantContains(t, "operators", body, `: <a href="/search?q=nothing&#43;here&#43;%3Cb%3Ex%3C&#43;b%3E">nothing here &lt;b&gt;x&lt; b&gt;</a>.</li>`)
	if _, body := get(t, s, "/search?q=percolator"); strings.Contains(body, "Check the spelling") {
		t.Error("tips on a page with results")
	}
}

func TestPlainWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"vacuum freeze", ""},
		{`"vacuum freeze" -full`, "vacuum freeze"},
		{"+title:vacuum site:example.com vacu* freez~1", "vacuum vacu freez"},
		{"site:example.com", ""},
		{"-x", ""},
	} {
		if got := plainWords(c.in); got != c.want {
			t.Errorf("plainWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCommonAffix(t *testing.T) {
	for _, c := range []struct {
		titles   []string
		pre, suf string
	}{
		{[]string{"A — PostgreSQL 15 Documentation", "B c — PostgreSQL 15 Documentation", "D — PostgreSQL 15 Documentation"}, "", " — PostgreSQL 15 Documentation"},
		{[]string{"Git - git-log", "Git - git-add", "Git - gitglossary"}, "Git - ", ""},
		{[]string{"SQLite: x | Docs", "SQLite: y | Docs", "SQLite: z | Docs"}, "SQLite: ", " | Docs"},
		{[]string{"A — Site", "B — Site"}, "", ""},              // too few to tell
		{[]string{"A — Site", "B — Site", "C — Other"}, "", ""}, // not on every one
		{[]string{"A — Site", "B — Site", " — Site"}, "", ""},   // one would be left empty
		{[]string{"Time: x", "Time: y", "Time: z: w"}, "Time: ", ""},
	} {
		pre, suf := commonAffix(c.titles)
		if pre != c.pre || suf != c.suf {
			t.Errorf("commonAffix(%q) = %q, %q; want %q, %q", c.titles, pre, suf, c.pre, c.suf)
		}
	}
}

func TestSiteNameLeftOff(t *testing.T) {
	f := canned()
	for i := range f.results["many"] {
		f.results["many"][i].Title += " — Example Manual"
	}
	s, _ := newTestServer(t, f, Options{})
	_, body := get(t, s, "/search?q=many")
	wantContains(t, "many", body, `<a href="https://www.example.com/p00" rel="noreferrer nofollow" title="Page 00 — Example Manual">Page 00</a>`)
	if strings.Contains(body, ">Page 01 — Example") {
		t.Error("site name shown")
	}
}
