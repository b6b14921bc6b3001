// Package hostile serves a site made to take a crawler's memory: pages
// past the crawler's body limit of one long script, one long title, one
// long attribute, deep nesting, a hundred thousand links, random words
// (a term each, the worst case for an index) or random bytes, all linked
// from the root, and the small pages the links lead to. Bodies are
// generated as they are written, from the page's number: the server holds
// none of them. bulkbench -hostile serves it to measure the memory budget.
package hostile

import (
	"bufio"
	"fmt"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
)

// Kinds are the kinds of large page, each at /KIND/N.
var Kinds = []string{"text", "words", "nest", "links", "title", "attrs", "script", "binary"}

// Targets is how many distinct small pages the links pages link to, at
// /small/N.
const Targets = 2000

// Site is the hostile site: Pages large pages of each kind, each Size
// bytes long.
type Site struct {
	Pages int
	Size  int
}

// ServeHTTP serves the root, the large pages and the small ones; anything
// else (robots.txt, sitemaps) is a 404.
func (s Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><head><title>A hostile site</title></head><body>\n")
		for _, k := range Kinds {
			for i := range s.Pages {
				fmt.Fprintf(w, "<a href=\"/%s/%d\">%s %d</a>\n", k, i, k, i)
			}
		}
		fmt.Fprint(w, "</body></html>\n")
		return
	}
	kind, num, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	i, err := strconv.Atoi(num)
	if !ok || err != nil || i < 0 || (kind == "small" && i >= Targets) || (kind != "small" && (i >= s.Pages || !known(kind))) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if kind == "binary" {
		w.Header().Set("Content-Type", "text/html") // says HTML, is not
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	page{w: bw, rng: rand.New(rand.NewSource(int64(i))), size: s.Size}.write(kind, i)
}

func known(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// page writes one page's body.
type page struct {
	w       *bufio.Writer
	rng     *rand.Rand
	size    int
	written int
	err     error // the first failed write: the client went away
}

func (p *page) put(s string) {
	if p.err != nil {
		return
	}
	n, err := p.w.WriteString(s)
	p.written, p.err = p.written+n, err
}

// fill writes what next returns until the page holds size bytes or a
// write fails.
func (p *page) fill(next func() string) {
	for p.written < p.size && p.err == nil {
		p.put(next())
	}
}

func (p page) write(kind string, i int) {
	words := []string{"alpha ", "beta ", "gamma ", "delta ", "page ", "text "}
	switch kind {
	case "small":
		p.put(fmt.Sprintf("<!doctype html><html><head><title>Small page %d</title></head><body><p>A small page, number %d.</p></body></html>\n", i, i))
	case "text":
		p.put(fmt.Sprintf("<html><head><title>Long text %d</title></head><body><p>", i))
		p.fill(func() string { return words[p.rng.Intn(len(words))] })
	case "words":
		p.put(fmt.Sprintf("<html><head><title>Random words %d</title></head><body><p>", i))
		p.fill(func() string { return "w" + strconv.FormatInt(p.rng.Int63(), 36) + " " })
	case "nest":
		p.put("<html><head><title>Deep nesting</title></head><body>")
		for p.written < p.size/2 && p.err == nil {
			p.put("<div><span><b>")
		}
		p.fill(func() string { return "x</b></span></div>" })
	case "links":
		p.put("<html><head><title>Many links</title></head><body>")
		j := 0
		p.fill(func() string {
			j++
			return fmt.Sprintf("<a href=\"/small/%d?from=%d\">a link with a long anchor text, number %d</a>\n", (j*7+i)%Targets, j%3, j)
		})
	case "title":
		p.put("<html><head><title>")
		p.fill(func() string { return "title title title " })
		p.put("</title></head><body>x</body></html>")
	case "attrs":
		p.put("<html><head><title>A long attribute</title></head><body><div class=\"")
		p.fill(func() string { return "aaaaaaaaaaaaaaaa" })
		p.put("\">x</div></body></html>")
	case "script":
		p.put("<html><head><title>A long script</title><script>")
		p.fill(func() string { return "var a = 1; " })
		p.put("</script></head><body>y</body></html>")
	case "binary":
		buf := make([]byte, 4096)
		p.fill(func() string { p.rng.Read(buf); return string(buf) })
	}
}
