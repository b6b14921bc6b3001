package extract

import (
	"bytes"
	"strings"
	"unicode"

	"golang.org/x/net/html/atom"
)

// Boilerplate: the parts of a page that every page of its site repeats
// (navigation bars, headers, footers, sidebars, tables of contents) are
// left out of Page.Text, block by block, from the page alone (see
// boilerplate in doc.go). A block is a container element that needs its
// end tag (div, nav, ul, table, ...); it is dropped when its end comes and
// it is
//
//   - a <nav>, <aside> or <footer>, an element with role navigation,
//     complementary, contentinfo or search, or one whose class or id is a
//     known navigation block (navheader, navfooter, related, sidebar,
//     sphinxsidebar, toc, breadcrumb, nosearch, ...), or
//   - made mostly of link text: at least minBlockLinks links whose text is
//     at least linkDenseShare of the block's text;
//
// unless it holds an <h1> (the page's own heading is not boilerplate).
// Text already dropped with an inner block does not count in an outer
// one. Links in dropped blocks stay in Page.Links, with their anchors.

const (
	minBlockLinks  = 3
	linkDenseShare = 0.6
	maxBlockDepth  = 256 // deeper containers are not tracked (kept)
)

// block is an open container element.
type block struct {
	a         atom.Atom
	textStart int  // len(scanner.text.b) at its start
	linkStart int  // scanner.linkBytes at its start
	links     int  // scanner.links at its start
	h1s       int  // scanner.h1s at its start
	nav       bool // named as navigation (tag, role, class or id)
}

// isContainer reports whether a element is tracked as a block.
func isContainer(a atom.Atom) bool {
	switch a {
	case atom.Div, atom.Nav, atom.Aside, atom.Footer, atom.Header, atom.Section, atom.Article,
		atom.Main, atom.Ul, atom.Ol, atom.Dl, atom.Table, atom.Menu, atom.Form:
		return true
	}
	return false
}

// navClasses are class and id values of navigation blocks: DocBook's
// (the PostgreSQL manual), Publican's (the Debian handbook: docnav,
// banner), Sphinx's, asciidoc's, SQLite's and common ones.
var navClasses = map[string]bool{
	"navheader": true, "navfooter": true, "docnav": true, "banner": true, "navigation": true, "nav": true, "navbar": true,
	"menu": true, "mainmenu": true, "submenu": true, "related": true, "sidebar": true,
	"sphinxsidebar": true, "sphinxsidebarwrapper": true, "toc": true, "breadcrumb": true,
	"breadcrumbs": true, "footer": true, "nosearch": true, "skip-link": true, "site-header": true,
	"site-footer": true,
}

// openBlock starts tracking container a; the tag's attributes are still
// unread.
func (s *scanner) openBlock(a atom.Atom) {
	if len(s.blocks) >= maxBlockDepth {
		s.deep++
		return
	}
	b := block{a: a, textStart: len(s.text.b), linkStart: s.linkBytes, links: s.nLinks, h1s: s.h1s}
	switch a {
	case atom.Nav, atom.Aside, atom.Footer:
		b.nav = true
	}
	var buf [24]byte // longer than any name in navClasses
	for more := !b.nav; more; {
		var k, v []byte
		k, v, more = s.z.TagAttr()
		switch string(k) {
		case "role":
			switch string(lowerWord(bytes.TrimSpace(v), &buf)) {
			case "navigation", "complementary", "contentinfo", "search":
				b.nav = true
			}
		case "class", "id":
			if string(k) == "id" {
				s.noteID(v)
			}
			for c := range bytes.FieldsSeq(v) {
				if navClasses[string(lowerWord(c, &buf))] {
					b.nav = true
				}
			}
		}
	}
	s.blocks = append(s.blocks, b)
}

// lowerWord returns w in ASCII lower case, in buf; nil if w is longer than
// buf (no name we look for is).
func lowerWord(w []byte, buf *[24]byte) []byte {
	if len(w) > len(buf) {
		return nil
	}
	for i, c := range w {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(w)]
}

// closeBlock ends the innermost open container a (and any left open
// inside it), dropping its text if it is boilerplate. An end tag with no
// open container of its kind is ignored.
func (s *scanner) closeBlock(a atom.Atom) {
	if s.deep > 0 {
		s.deep--
		return
	}
	i := len(s.blocks) - 1
	for i >= 0 && s.blocks[i].a != a {
		i--
	}
	if i < 0 {
		return
	}
	for j := len(s.blocks) - 1; j >= i; j-- {
		s.endBlock(s.blocks[j])
	}
	s.blocks = s.blocks[:i]
}

func (s *scanner) endBlock(b block) {
	if s.h1s > b.h1s {
		return // holds the page's heading
	}
	text := len(s.text.b) - b.textStart
	if text <= 0 {
		return
	}
	linkText := s.linkBytes - b.linkStart
	dense := s.nLinks-b.links >= minBlockLinks && float64(linkText) >= linkDenseShare*float64(text)
	if !b.nav && !dense {
		return
	}
	s.text.rewind(b.textStart)
	s.dropSections(b.textStart)
	s.linkBytes, s.nLinks = b.linkStart, b.links
	s.dropped += text
}

// titleSeparators set a site's name apart from a page's in titles.
var titleSeparators = []string{" — ", " – ", " -- ", " - ", " | ", " · ", " :: ", ": ", " » ", " / ", " ~ "}

// titleCore returns title without a site affix: the rest of title when it
// begins or ends with heading (case aside) and a separator sets the rest
// apart; "" when there is no such affix.
func titleCore(title, heading string) string {
	if heading == "" || len(heading) >= len(title) {
		return ""
	}
	hasWord := func(s string) bool {
		return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
	}
	if n := len(heading); strings.EqualFold(title[:n], heading) {
		rest := title[n:]
		for _, sep := range titleSeparators {
			if strings.HasPrefix(rest, sep) && hasWord(rest[len(sep):]) {
				return title[:n]
			}
		}
	}
	if n := len(title) - len(heading); strings.EqualFold(title[n:], heading) {
		rest := title[:n]
		for _, sep := range titleSeparators {
			if strings.HasSuffix(rest, sep) && hasWord(rest[:len(rest)-len(sep)]) {
				return title[n:]
			}
		}
	}
	return ""
}
