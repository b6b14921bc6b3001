package extract

import (
	"slices"
	"strings"
	"testing"
)

func TestBoilerplate(t *testing.T) {
	nav := `<a href="/a">Home</a> <a href="/b">Docs</a> <a href="/c">Download</a>`
	for _, tc := range []struct {
		name, body, text string
	}{
		{"nav", `<nav>` + nav + `</nav><p>Body text.</p>`, "Body text."},
		{"aside and footer", `<p>Body text.</p><aside>Related: stuff</aside><footer>© 2024 Someone</footer>`, "Body text."},
		{"role", `<div role="navigation">Skip to <b>content</b></div><p>Body text.</p>`, "Body text."},
		{"publican docnav and banner", `<div id="banner"><a href="/get/"><span class="text">Download the ebook</span></a></div><ul class="docnav top"><li class="previous"><a href="u.html"><strong>이전</strong></a></li><li class="home">데비안 관리자의 핸드북</li><li class="next"><a href="v.html"><strong>다음</strong></a></li></ul><div class="section"><h2>12.3. Automated Installation</h2><div class="para">The administrators need tools.</div></div><ul class="docnav"><li class="previous"><a href="u.html">Prev</a></li></ul>`, "12.3. Automated Installation The administrators need tools."},
		{"docbook navheader", `<div class="navheader"><table><tr><th>VACUUM</th></tr><tr><td><a href="u.html">Prev</a></td><td><a href="v.html">Next</a></td></tr></table></div><p>VACUUM reclaims storage.</p><div class="navfooter"><a href="u.html">Prev</a> UPDATE</div>`, "VACUUM reclaims storage."},
		{"sphinx related", `<div class="related" role="navigation"><h3>Navigation</h3><ul><li><a href="i">index</a></li><li><a href="m">modules</a> |</li></ul></div><div class="body"><p>The os module.</p></div><div class="sphinxsidebar"><p>Quick search</p></div>`, "The os module."},
		{"class among others", `<div class="wrapper toc">Table of Contents 1. Intro</div><p>Body.</p>`, "Body."},
		{"link-dense list", `<p>Intro.</p><ul><li>` + nav + `</li><li><a href="/d">Support</a></li></ul><p>More.</p>`, "Intro. More."},
		{"some links kept", `<div><p>Use <a href="/x">VACUUM</a> often, and <a href="/y">ANALYZE</a> after loading data, since <a href="/z">statistics</a> matter for plans.</p></div>`, "Use VACUUM often, and ANALYZE after loading data, since statistics matter for plans."},
		{"nested: inner dropped, outer kept", `<div id="main"><p>Body text that is long enough to matter.</p><div class="sidebar">` + nav + `</div></div>`, "Body text that is long enough to matter."},
		{"heading kept", `<header><h1>The Title</h1>` + nav + `</header><p>Body.</p>`, "The Title Home Docs Download Body."},
		{"git header kept", `<div id="header"><h1>git-stash(1) Manual Page</h1><h2>NAME</h2><p>git-stash - Stash the changes</p></div><div id="footer">Last updated 2024</div>`, "git-stash(1) Manual Page NAME git-stash - Stash the changes"},
		{"unclosed container", `<p>Body.</p><nav>` + nav, "Body."},
		{"stray end tags", `</nav></div><p>Body.</p></ul>`, "Body."},
		{"self-closing div", `<div class="toc"/><p>Body.</p>`, "Body."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustHTML(t, tc.body)
			if p.Text != tc.text {
				t.Errorf("Text %q, want %q", p.Text, tc.text)
			}
		})
	}
}

// Links in boilerplate stay links, with their anchors; the hash is of all
// the text, so duplicate clustering does not change.
func TestBoilerplateLinksAndHash(t *testing.T) {
	body := `<title>T</title><div class="navheader"><a href="/prev">Prev</a> <a href="/next">Next</a> <a href="/up">Up</a></div><p>Body text.</p>`
	p := mustHTML(t, body)
	if p.Text != "Body text." {
		t.Errorf("Text %q", p.Text)
	}
	want := []string{"http://example.com/prev", "http://example.com/next", "http://example.com/up"}
	if got := linkURLs(p.Links); !slices.Equal(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
	if p.Links[0].Anchor != "Prev" {
		t.Errorf("anchor %q", p.Links[0].Anchor)
	}
	plain := mustHTML(t, `<title>T</title><div><a href="/prev">Prev</a> <a href="/next">Next</a> <a href="/up">Up</a></div><p>Body text.</p>`)
	if plain.Hash != p.Hash {
		t.Errorf("the hash depends on what is boilerplate")
	}
	if mustHTML(t, `<title>T</title><p>Body text.</p>`).Hash == p.Hash {
		t.Errorf("the hash is of the kept text only")
	}
	only := mustHTML(t, `<nav><a href="/a">A</a></nav>`)
	if only.Text != "" || only.Hash == "" {
		t.Errorf("boilerplate only: Text %q, Hash %q", only.Text, only.Hash)
	}
}

func TestBoilerplateLimit(t *testing.T) {
	body := `<nav>` + strings.Repeat("menu ", 100) + `</nav><p>` + strings.Repeat("word ", 100) + `</p>`
	p, err := HTML(testURL, []byte(body), "text/html", Options{MaxTextBytes: 50})
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, p, 50)
	if !strings.HasPrefix(p.Text, "word word") || len(p.Text) < 45 {
		t.Errorf("Text %q: the limit applies to the kept text", p.Text)
	}
}

func TestLinkDensity(t *testing.T) {
	for _, tc := range []struct {
		body     string
		min, max float64
	}{
		{`<p>No links here at all.</p>`, 0, 0},
		{`<p><a href="/a">all link</a></p>`, 1, 1},
		{`<p>half <a href="/a">link</a></p>`, 0.4, 0.6},
		{`<ul><li><a href="/a">one</a><li><a href="/b">two</a><li><a href="/c">three</a></ul><p>text</p>`, 0.6, 0.8},
		{`<p>nofollow <a rel="nofollow" href="/a">link</a></p>`, 0.2, 0.5},
	} {
		p := mustHTML(t, tc.body)
		if p.LinkDensity < tc.min || p.LinkDensity > tc.max {
			t.Errorf("%s: LinkDensity %.2f, want %.2f–%.2f", tc.body, p.LinkDensity, tc.min, tc.max)
		}
	}
}

func TestTitleCore(t *testing.T) {
	for _, tc := range []struct{ title, h1, want string }{
		{"os — Miscellaneous operating system interfaces — Python 3.11 documentation", `os — Miscellaneous operating system interfaces<a class="headerlink" href="#m">¶</a>`, "os — Miscellaneous operating system interfaces"},
		{"PostgreSQL: Documentation: 15: CREATE TABLE", "CREATE TABLE", "CREATE TABLE"},
		{"Widgets | ACME", "widgets", "Widgets"},
		{"Python Tutorial -- Input and Output", "Input and Output", "Input and Output"},
		{"Input and Output -- Python Tutorial", "Input and Output", "Input and Output"},
		{"git-commit(1)", "git-commit(1) Manual Page", ""},
		{"CREATE TABLE", "CREATE TABLE", ""},
		{"Tables and more", "Tables", ""},    // no separator
		{"Tables | ", "Tables", ""},          // nothing past the separator
		{"A guide - Intro", "Elsewhere", ""}, // the heading is not in the title
		{"Blog | Post", "", ""},
	} {
		body := "<title>" + tc.title + "</title>"
		if tc.h1 != "" {
			body += "<h1>" + tc.h1 + "</h1><h1>Second</h1>"
		}
		if got := mustHTML(t, body).TitleCore; got != tc.want {
			t.Errorf("%q, <h1>%s: TitleCore %q, want %q", tc.title, tc.h1, got, tc.want)
		}
	}
}
