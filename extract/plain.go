package extract

import (
	"fmt"

	"github.com/caffeine-go/caffeine/webtable"
)

// Text extracts a text/plain body: the charset of contentType (else UTF-8
// when the body is valid UTF-8, else windows-1252) decodes it; Title is its
// first non-blank line, Text all of it with whitespace collapsed, Hash as
// for HTML. Plain text has no links, no robots rules and no language
// markup. It returns ErrBadURL for an unusable pageURL.
func Text(pageURL string, body []byte, contentType string, opt Options) (Page, error) {
	if _, err := webtable.Normalize(pageURL); err != nil {
		return Page{}, fmt.Errorf("%w %q: %v", ErrBadURL, pageURL, err)
	}
	text, cs := decode(body, contentType)
	return textPage(text, "", cs, opt), nil
}

// textPage builds the Page of a document whose text is text (valid UTF-8,
// lines separated by newlines): Title is title if not blank, else text's
// first line.
func textPage(text []byte, title, charset string, opt Options) Page {
	limit := textLimit(opt)
	c := collapser{limit: limit, hash: newLowerHasher()}
	c.write(text)
	p := Page{
		Title:   collapseCut([]byte(title), MaxTitleBytes),
		Text:    c.String(),
		Charset: charset,
	}
	xRobotsTag(opt.XRobotsTag, &p.NoIndex, &p.NoFollow)
	if p.Title == "" {
		p.Title = firstLine(text)
	}
	if c.any {
		p.Hash = c.hash.Sum()
	}
	return p
}
