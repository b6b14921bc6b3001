package crawl

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// textSum hashes the visible text of an HTML document: text nodes outside
// script, style, noscript and template, with every run of whitespace
// collapsed to one space and leading/trailing whitespace dropped. Markup,
// attribute and comment changes (a new session id in a link, a reordered
// attribute, a build timestamp in a comment) are thus not "changes".
func textSum(root *html.Node) string {
	return extract(root, "").textSum
}

// extracted is what one walk over a parsed page finds.
type extracted struct {
	links    []string // href of a and area elements without rel=nofollow, as written
	base     string   // the first <base href>, as written
	nofollow bool     // <meta name=robots|our agent content=nofollow>
	textSum  string
}

// extract walks a parsed document once for its links, base, robots meta
// and visible-text hash. agent is the lower-cased robots product token.
func extract(root *html.Node, agent string) extracted {
	w := &textHasher{h: sha256.New(), agent: agent}
	w.walk(root)
	w.out.textSum = hex.EncodeToString(w.h.Sum(nil))
	return w.out
}

type textHasher struct {
	h       hash.Hash
	agent   string
	started bool // some text was written
	space   bool // whitespace seen since the last word
	buf     []byte
	out     extracted
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

func (w *textHasher) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.CommentNode, html.DoctypeNode:
		return
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Noscript, atom.Template:
			return
		case atom.A, atom.Area:
			if href, ok := attr(n, "href"); ok {
				if rel, _ := attr(n, "rel"); !hasToken(rel, "nofollow", ' ') {
					w.out.links = append(w.out.links, href)
				}
			}
		case atom.Base:
			if href, ok := attr(n, "href"); ok && w.out.base == "" {
				w.out.base = href
			}
		case atom.Meta:
			name, _ := attr(n, "name")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "robots" || (name != "" && w.agent != "" && strings.HasPrefix(w.agent, name)) {
				if content, _ := attr(n, "content"); hasToken(content, "nofollow", ',') || hasToken(content, "none", ',') {
					w.out.nofollow = true
				}
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
}

func hasToken(list, tok string, sep byte) bool {
	for t := range strings.SplitSeq(list, string(sep)) {
		if strings.EqualFold(strings.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}

func (w *textHasher) text(s string) {
	buf := w.buf[:0]
	word := func(b string) {
		if w.space && w.started {
			buf = append(buf, ' ')
		}
		w.space, w.started = false, true
		buf = append(buf, b...)
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
				w.space = true
			} else {
				word(s[i : i+1])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			w.space = true
		} else {
			word(s[i : i+size])
		}
		i += size
	}
	w.h.Write(buf)
	w.buf = buf
}
