package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/caffeine-go/caffeine/webtable"
)

// DefaultMaxTextBytes is the Text limit when Options.MaxTextBytes is 0.
const DefaultMaxTextBytes = 1 << 20

// Page is what one fetched page says about itself. Every string is valid
// UTF-8.
type Page struct {
	// Title is the first <title>, whitespace collapsed, at most
	// MaxTitleBytes (cut ones end in Ellipsis).
	Title string
	// Text is the visible text of the page's own content: script, style,
	// noscript, template, iframe and head contents left out, and so are
	// navigation blocks, sidebars, footers, tables of contents and other
	// blocks made mostly of links (see boilerplate.go); whitespace runs
	// collapsed to one space, block elements (p, div, li, td, br, ...)
	// separating words.
	Text string
	// TitleCore is the part of Title that names the page rather than its
	// site: Title without a site's affix such as " — Python 3.11
	// documentation" or "PostgreSQL: Documentation: 15: ", found where
	// Title begins or ends with the page's first <h1> (its text outside
	// links) and the rest is set apart by a separator (" — ", " | ", ": ",
	// ...). "" when Title has no such affix.
	TitleCore string
	// LinkDensity is the share of all the visible text (boilerplate
	// included) that is link text, 0 to 1: near 1 for an index or a table
	// of contents.
	LinkDensity float64
	// Description is <meta name=description>, whitespace collapsed, at
	// most MaxDescriptionBytes (cut ones end in Ellipsis).
	Description string
	// Lang is <html lang>, else <meta http-equiv=content-language>,
	// lower-cased as declared ("en", "en-us"); "" if neither is a tag.
	// Document resolves it against the text (see DetectLang): the
	// declared tag when the text agrees or is unclear, else the detected
	// ISO 639-1 code.
	Lang string
	// LangMismatch is set by Document when the page claims a language
	// that its text clearly is not: the one it declares (lang attribute,
	// meta or Content-Language header), else the one its URL's path names
	// (/cs-CZ/, /fr/): a translation's template around an untranslated
	// text. Of near-copies, one without it is shown (observers/near.go).
	LangMismatch bool
	// Canonical is the normalized absolute rel=canonical, "" if none or
	// unusable.
	Canonical string
	// NoIndex and NoFollow come from <meta name=robots> and <meta
	// name=caffeine-crawler> ("none" sets both) and Options.XRobotsTag:
	// the rules for all robots and for Agent.
	NoIndex  bool
	NoFollow bool
	// Links are the outlinks in document order, one per URL, at most
	// MaxLinks. Left out: rel=nofollow/ugc/sponsored links, non-http(s)
	// URLs, URLs longer than MaxURLBytes, links to the page itself, links
	// inside <template>, and all links when NoFollow.
	Links []Link
	// Hash is the hex SHA-256 of the lower-cased visible text, boilerplate
	// included -- of all the text, that is, even past MaxTextBytes, so long
	// pages that differ only at the end still differ. Pages that differ
	// only in markup, whitespace or letter case share it. "" when the page
	// has no visible text.
	Hash string
	// Charset is the WHATWG name of the encoding the body was read in.
	Charset string
	// Sections are the headings (<h1>–<h6>) of the page's own text that
	// a link can point to, in page order, at most MaxSections: a heading
	// with an id, or inside an <a id> or <a name>, or just after the
	// start of an element with an id (a section's <div id>); At is the
	// heading's offset in Text.
	Sections []webtable.Section
}

// Options tunes HTML. The zero value is ready to use.
type Options struct {
	// MaxTextBytes caps Text (cut at a rune boundary), and Title and
	// Description when below their own limits (MaxTitleBytes,
	// MaxDescriptionBytes). 0 means DefaultMaxTextBytes; negative means
	// no limit on Text.
	MaxTextBytes int
	// XRobotsTag is the response's X-Robots-Tag header, if any (several
	// joined with ", ").
	XRobotsTag string
	// ContentLanguage is the response's Content-Language header, if any:
	// the language Document takes when the page declares none and its
	// text does not clearly say another.
	ContentLanguage string
}

// MemoryCost is the most memory HTML may hold, in multiples of the body's
// length: the tokenizer's buffer holds the longest token (a whole body
// of script or text at worst) and grows by doubling, the old buffer still
// live at each step, up to six times the token (a 10 MiB script: a 32 MB
// buffer and 64 MB behind it). Callers that extract many bodies at once
// bound the sum (internal/budget.Hold).
const MemoryCost = 7

// HTML extracts the Page that body says about itself. pageURL is where it
// was fetched from (after redirects); contentType is the response's
// Content-Type header.
//
// It returns ErrBadURL if pageURL is not a usable http(s) URL and ErrNotHTML
// if IsHTML rejects the body; in any other case it returns what it could
// extract, however broken the markup or the encoding. The Page shares no
// memory with body.
func HTML(pageURL string, body []byte, contentType string, opt Options) (Page, error) {
	self, err := webtable.Normalize(pageURL)
	if err != nil {
		return Page{}, fmt.Errorf("%w %q: %v", ErrBadURL, pageURL, err)
	}
	base, err := url.Parse(self)
	if err != nil {
		return Page{}, fmt.Errorf("%w %q: %v", ErrBadURL, pageURL, err)
	}
	if !IsHTML(contentType, body) {
		return Page{}, ErrNotHTML
	}
	limit := opt.MaxTextBytes
	switch {
	case limit == 0:
		limit = DefaultMaxTextBytes
	case limit < 0:
		limit = 0 // collapser: no limit
	}

	text, cs := decode(body, contentType)
	textCap := len(text) / 2 // visible text is usually well under half the markup
	if limit > 0 {
		textCap = min(textCap, limit)
	}
	s := scanner{
		z:       html.NewTokenizer(bytes.NewReader(text)),
		text:    collapser{limit: limit, b: make([]byte, 0, textCap)},
		all:     collapser{discard: true, hash: newLowerHasher()},
		heading: collapser{limit: 4 * maxAnchorRunes},
		limit:   limit,
		cur:     -1,
	}
	s.run()

	p := Page{
		Title:       s.title,
		Text:        s.text.String(),
		Description: s.description,
		Lang:        s.lang,
		Charset:     cs,
	}
	if p.Lang == "" {
		p.Lang = s.contentLang
	}
	p.NoIndex, p.NoFollow = s.noindex, s.nofollow
	if opt.XRobotsTag != "" {
		xRobotsTag(opt.XRobotsTag, &p.NoIndex, &p.NoFollow)
	}
	if s.all.n > 0 {
		p.Hash = s.all.hash.Sum()
		p.LinkDensity = min(float64(s.allLinkBytes)/float64(s.all.n), 1)
	}
	p.TitleCore = titleCore(p.Title, s.heading.String())
	p.Sections = s.pageSections(p.Text)

	r := resolver{base: base, memo: make(map[string]string, len(s.links)+2)}
	if s.baseHref != nil {
		// The first <base href> applies to every link, even earlier ones.
		if b := r.resolve(*s.baseHref); b != "" {
			if u, err := url.Parse(b); err == nil {
				r.base = u
				clear(r.memo)
			}
		}
	}
	if s.canonical != nil {
		p.Canonical = r.resolve(*s.canonical)
	}
	if !p.NoFollow {
		p.Links = r.links(s.links, self)
	}
	return p, nil
}

// capped is limit, or max when limit is 0 (none) or greater.
func capped(max, limit int) int {
	if limit <= 0 {
		return max
	}
	return min(max, limit)
}

// scanner is one pass over a page's tokens.
type scanner struct {
	z     *html.Tokenizer
	text  collapser
	limit int

	title, description        string
	lang, contentLang         string
	noindex, nofollow         bool
	baseHref, canonical       *string
	haveTitle, haveDesc       bool
	links                     []rawLink
	cur                       int       // index in links of the open <a>, -1 if none
	anchor                    collapser // text of the open <a>
	anchorAlt                 string    // first img alt inside the open <a>
	rawOwner                  atom.Atom // element whose raw text comes next
	template, foreign, inDesc int       // nesting depths

	all          collapser // all the visible text, boilerplate included: hashed and counted, not kept
	inLink       bool      // inside an <a href> (nofollow too)
	linkBytes    int       // bytes of text (kept in text) inside links
	allLinkBytes int       // bytes of all the visible text inside links
	nLinks       int       // <a href> elements whose text is kept
	blocks       []block   // open containers (see boilerplate.go)
	deep         int       // containers open past maxBlockDepth
	dropped      int       // bytes of boilerplate left out of text
	h1s          int       // <h1> elements started
	inH1         bool      // inside the first <h1>
	heading      collapser // the first <h1>'s text outside links
	head         heading   // the <h1>–<h6> being read (sections.go)
	pendingID    string    // the id of an element begun since the last visible text
	sections     []webtable.Section
}

func (s *scanner) run() {
	s.anchor.limit = 4 * maxAnchorRunes
	for {
		tt := s.z.Next()
		switch tt {
		case html.ErrorToken:
			// io.EOF, or nothing else: the reader is in memory and no
			// buffer limit is set.
			s.closeAnchor()
			for len(s.blocks) > 0 { // the end of the page closes them
				s.closeBlock(s.blocks[len(s.blocks)-1].a)
			}
			return
		case html.TextToken:
			s.onText(s.z.Text())
		case html.StartTagToken, html.SelfClosingTagToken:
			s.rawOwner = 0
			s.onStart(tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			s.rawOwner = 0
			s.onEnd()
		default:
			s.rawOwner = 0
		}
	}
}

func (s *scanner) onText(t []byte) {
	owner := s.rawOwner
	s.rawOwner = 0
	switch owner {
	case atom.Title:
		// An svg <title> is a tooltip, not the page's.
		if !s.haveTitle && s.foreign == 0 && s.template == 0 {
			s.haveTitle = true
			s.title = collapseCut(t, capped(MaxTitleBytes, s.limit))
		}
		return
	case atom.Script, atom.Style, atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes:
		return
	}
	if s.template > 0 || s.inDesc > 0 {
		return
	}
	n, m := len(s.text.b), s.all.n
	s.text.write(t)
	s.all.write(t)
	if len(s.text.b) > n {
		s.pendingID = ""
	}
	if s.head.open {
		s.head.text.write(t)
	}
	if s.inLink {
		s.linkBytes += len(s.text.b) - n
		s.allLinkBytes += s.all.n - m
	} else if s.inH1 {
		s.heading.write(t)
	}
	if s.cur >= 0 {
		s.anchor.write(t)
	}
}

func (s *scanner) onStart(selfClosing bool) {
	a := tagAtom(s.z.Raw())
	switch a {
	case atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes,
		atom.Textarea, atom.Xmp, atom.Plaintext:
		// The tokenizer reads these as raw text; textarea, xmp and
		// plaintext are shown, the rest are not.
		switch a {
		case atom.Textarea, atom.Xmp, atom.Plaintext:
			s.brk()
		default:
			s.rawOwner = a
		}
		return
	case atom.Template:
		s.template++
		return
	case atom.Svg, atom.Math:
		if !selfClosing {
			s.foreign++
		}
		return
	case atom.Desc:
		if s.foreign > 0 && !selfClosing {
			s.inDesc++
		}
		return
	}
	if s.foreign > 0 && breaksOutOfForeign(a) {
		// The tree builder would close the <svg>/<math> here.
		s.foreign, s.inDesc = 0, 0
	}
	if isBlock(a) {
		s.brk()
	}
	if s.template > 0 {
		return
	}
	if isContainer(a) && !selfClosing {
		s.openBlock(a) // reads the tag's attributes
		return
	}
	switch a {
	case atom.H1:
		s.h1s++
		s.inH1 = s.h1s == 1
		s.openHeading()
	case atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		s.openHeading()
	case atom.A:
		s.closeAnchor() // an <a> start closes any open <a>
		s.inLink = false
		s.onAnchor()
	case atom.Area:
		s.onArea()
	case atom.Img, atom.Image:
		if s.cur >= 0 && s.anchorAlt == "" {
			if alt, ok := s.attr("alt"); ok {
				s.anchorAlt = collapseAnchor(alt)
			}
		}
	case atom.Meta:
		s.onMeta()
	case atom.Link:
		if s.canonical == nil {
			s.onLink()
		}
	case atom.Base:
		if s.baseHref == nil {
			if h, ok := s.attr("href"); ok {
				v := string(h)
				s.baseHref = &v
			}
		}
	case atom.Html:
		if s.lang == "" {
			for more := true; more; {
				var k, v []byte
				k, v, more = s.z.TagAttr()
				if string(k) == "lang" || string(k) == "xml:lang" {
					s.lang = langTag(string(v))
					break
				}
			}
		}
	}
}

func (s *scanner) onEnd() {
	a := tagAtom(s.z.Raw())
	switch a {
	case atom.Template:
		if s.template > 0 {
			s.template--
		}
		return
	case atom.Svg, atom.Math:
		if s.foreign > 0 {
			s.foreign--
		}
		if s.foreign == 0 {
			s.inDesc = 0
		}
		return
	case atom.Desc:
		if s.inDesc > 0 {
			s.inDesc--
		}
		return
	case atom.A:
		s.closeAnchor()
		s.inLink = false
		return
	}
	if isBlock(a) {
		s.brk()
	}
	switch {
	case a == atom.H1:
		s.inH1 = false
		s.closeHeading()
	case a == atom.H2 || a == atom.H3 || a == atom.H4 || a == atom.H5 || a == atom.H6:
		s.closeHeading()
	case isContainer(a) && s.template == 0:
		s.pendingID = "" // its id named what it held
		s.closeBlock(a)
	}
}

func (s *scanner) brk() {
	s.text.brk()
	s.all.brk()
	s.anchor.brk()
	s.heading.brk()
}

// attr returns the value of the current tag's attribute key. It consumes
// the tag's attributes, so call it once per tag.
func (s *scanner) attr(key string) ([]byte, bool) {
	for more := true; more; {
		var k, v []byte
		k, v, more = s.z.TagAttr()
		if string(k) == key {
			return v, true
		}
	}
	return nil, false
}

func (s *scanner) onAnchor() {
	var href, title []byte
	found, nofollow := false, false
	for more := true; more; {
		var k, v []byte
		k, v, more = s.z.TagAttr()
		switch string(k) {
		case "href":
			if !found { // the first of repeated attributes counts
				href, found = v, true
			}
		case "rel":
			nofollow = nofollow || relNoFollow(v)
		case "title":
			if title == nil {
				title = v
			}
		case "id", "name":
			s.noteID(v)
		}
	}
	if !found {
		return
	}
	s.inLink = true
	s.nLinks++
	if nofollow {
		return
	}
	if len(s.links) == maxRawLinks {
		return
	}
	s.links = append(s.links, rawLink{href: string(href), anchor: collapseAnchor(title)})
	s.cur = len(s.links) - 1
	s.anchor.reset()
	s.anchorAlt = ""
}

// closeAnchor settles the open <a>'s anchor: its text, else an image's alt,
// else the title attribute already stored.
func (s *scanner) closeAnchor() {
	if s.cur < 0 {
		return
	}
	l := &s.links[s.cur]
	switch {
	case len(s.anchor.b) > 0:
		l.anchor = anchorText(s.anchor.String(), s.anchor.full)
	case s.anchorAlt != "":
		l.anchor = s.anchorAlt
	}
	s.cur = -1
}

func (s *scanner) onArea() {
	var href, alt, title []byte
	found, nofollow := false, false
	for more := true; more; {
		var k, v []byte
		k, v, more = s.z.TagAttr()
		switch string(k) {
		case "href":
			if !found {
				href, found = v, true
			}
		case "rel":
			nofollow = nofollow || relNoFollow(v)
		case "alt":
			alt = v
		case "title":
			title = v
		}
	}
	if !found || nofollow || len(s.links) == maxRawLinks {
		return
	}
	anchor := collapseAnchor(alt)
	if anchor == "" {
		anchor = collapseAnchor(title)
	}
	s.links = append(s.links, rawLink{href: string(href), anchor: anchor})
}

func (s *scanner) onMeta() {
	var name, equiv, content []byte
	for more := true; more; {
		var k, v []byte
		k, v, more = s.z.TagAttr()
		switch string(k) {
		case "name":
			name = v
		case "http-equiv":
			equiv = v
		case "content":
			content = v
		}
	}
	switch {
	case robotsMeta(string(name)):
		metaRobots(string(content), &s.noindex, &s.nofollow)
	case strings.EqualFold(strings.TrimSpace(string(name)), "description"):
		if !s.haveDesc {
			s.haveDesc = true
			s.description = collapseCut(content, capped(MaxDescriptionBytes, s.limit))
		}
	}
	if s.contentLang == "" && strings.EqualFold(strings.TrimSpace(string(equiv)), "content-language") {
		s.contentLang = langTag(string(content))
	}
}

func (s *scanner) onLink() {
	var rel, href []byte
	found := false
	for more := true; more; {
		var k, v []byte
		k, v, more = s.z.TagAttr()
		switch string(k) {
		case "rel":
			rel = v
		case "href":
			if !found {
				href, found = v, true
			}
		}
	}
	if found && relHas(rel, "canonical") {
		v := string(href)
		s.canonical = &v
	}
}

// tagAtom returns the atom of the current tag token's name, read from the
// token's raw bytes ("<Name ...>" or "</name>"). Tokenizer.TagName would
// copy the name to replace NULs, and a name with a NUL is no element we
// care about anyway. Unknown and overlong names give 0.
func tagAtom(raw []byte) atom.Atom {
	var buf [16]byte // longer than any element name we act on
	n := 0
	i := 1 // past '<'
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}

// isBlock reports whether an element's edges separate words.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body, atom.Br,
		atom.Button, atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir,
		atom.Div, atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer,
		atom.Form, atom.Frameset, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Head, atom.Header, atom.Hgroup, atom.Hr, atom.Html, atom.Input, atom.Legend,
		atom.Li, atom.Listing, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.Optgroup,
		atom.Option, atom.P, atom.Pre, atom.Section, atom.Select, atom.Summary, atom.Table,
		atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr, atom.Ul, atom.Video,
		atom.Audio, atom.Canvas, atom.Object, atom.Embed:
		return true
	}
	return false
}

// breaksOutOfForeign reports whether a start tag ends <svg>/<math> content
// in the HTML tree builder.
func breaksOutOfForeign(a atom.Atom) bool {
	switch a {
	case atom.B, atom.Big, atom.Blockquote, atom.Body, atom.Br, atom.Center, atom.Code,
		atom.Dd, atom.Div, atom.Dl, atom.Dt, atom.Em, atom.Embed, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Head, atom.Hr, atom.I, atom.Img, atom.Li, atom.Listing,
		atom.Menu, atom.Meta, atom.Nobr, atom.Ol, atom.P, atom.Pre, atom.Ruby, atom.S,
		atom.Small, atom.Span, atom.Strong, atom.Strike, atom.Sub, atom.Sup, atom.Table,
		atom.Tt, atom.U, atom.Ul, atom.Var:
		return true
	}
	return false
}
