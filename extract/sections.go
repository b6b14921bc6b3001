package extract

import (
	"bytes"
	"unicode/utf8"

	"github.com/caffeine-go/caffeine/webtable"
)

// Limits on Page.Sections.
const (
	// MaxSections caps Page.Sections: the first ones in page order are
	// kept.
	MaxSections = 200
	// MaxSectionHeadingBytes caps a section's heading (cut ones end in
	// Ellipsis).
	MaxSectionHeadingBytes = 256
	// maxFragmentBytes is the longest id kept as a section's fragment.
	maxFragmentBytes = 256
)

// heading is the <h1>–<h6> being read: the id that names it and its text.
type heading struct {
	open bool
	id   string
	at   int // len(text) when it began
	text collapser
}

// noteID records the id (or <a name>) of an element that starts here: the
// open heading's fragment if it has none yet, else the fragment of a
// heading that begins before any more visible text (a DocBook section's
// <div id> around its <h2>, an empty <a id> before it).
func (s *scanner) noteID(v []byte) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || len(v) > maxFragmentBytes || !utf8.Valid(v) || bytes.ContainsAny(v, " \t\n\r\f") {
		return
	}
	if s.head.open {
		if s.head.id == "" {
			s.head.id = string(v)
		}
		return
	}
	s.pendingID = string(v)
}

// openHeading starts a heading; the tag's attributes are still unread.
// Its fragment is its own id, else that of an element begun just before
// it, else an <a id> or <a name> inside it.
func (s *scanner) openHeading() {
	s.closeHeading() // headings do not nest
	pending := s.pendingID
	s.pendingID = ""
	s.head = heading{open: true, at: len(s.text.b), text: collapser{limit: MaxSectionHeadingBytes}}
	if id, ok := s.attr("id"); ok {
		s.noteID(id)
	}
	if s.head.id == "" {
		s.head.id = pending
	}
}

// closeHeading ends the open heading, keeping it as a section if it has a
// fragment and text.
func (s *scanner) closeHeading() {
	h := &s.head
	if !h.open {
		return
	}
	h.open = false
	if h.id == "" || len(h.text.b) == 0 || len(s.sections) >= MaxSections {
		return
	}
	text := h.text.String()
	if h.text.full {
		text = markCut(text, MaxSectionHeadingBytes)
	}
	s.sections = append(s.sections, webtable.Section{ID: h.id, Heading: text, At: h.at})
}

// dropSections forgets the sections that begin at or after the text offset
// n: their text was boilerplate, rewound.
func (s *scanner) dropSections(n int) {
	i := len(s.sections)
	for i > 0 && s.sections[i-1].At >= n {
		i--
	}
	s.sections = s.sections[:i]
	if s.head.open && s.head.at >= n {
		s.head.open = false
	}
}

// pageSections returns the sections whose heading lies within text.
func (s *scanner) pageSections(text string) []webtable.Section {
	s.closeHeading()
	var out []webtable.Section
	for _, sec := range s.sections {
		if sec.At >= len(text) {
			break
		}
		out = append(out, sec)
	}
	return out
}
