package extract

import (
	"bytes"
	"net/http"
	"strings"
)

// The kinds of document Document extracts, as the page:kind column, the
// search document's "kind" field and the filetype: query operator name them.
const (
	KindHTML = "html"
	KindPDF  = "pdf"
	KindText = "txt"
)

// Kind returns the kind of document body is, served with contentType:
// KindHTML when IsHTML says so, KindPDF for application/pdf (or a body
// beginning with the PDF signature under a catch-all type), KindText for
// text/plain that is not plainly binary; "" for anything else, which is
// recorded with its type and not extracted.
func Kind(contentType string, body []byte) string {
	if IsHTML(contentType, body) {
		return KindHTML
	}
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "application/pdf" || mt == "application/x-pdf":
		return KindPDF
	case mt == "text/plain":
		if looksBinary(body) {
			return ""
		}
		return KindText
	case unreliableType(mt):
		switch ct := http.DetectContentType(bytes.TrimPrefix(body, utf8BOM)); {
		case ct == "application/pdf":
			return KindPDF
		case strings.HasPrefix(ct, "text/plain"):
			return KindText
		}
	}
	return ""
}

// Document extracts a page of any kind Kind knows: HTML with [HTML], PDF
// with [PDF], plain text with [Text], its language resolved against its
// text (see [DetectLang]). It returns the kind with the Page,
// and ErrNotDocument (with kind "") for a body of no such kind. A PDF that
// cannot be read is an error wrapping ErrBadPDF.
func Document(pageURL string, body []byte, contentType string, opt Options) (Page, string, error) {
	var (
		p   Page
		err error
		k   = Kind(contentType, body)
	)
	switch k {
	case KindHTML:
		p, err = HTML(pageURL, body, contentType, opt)
	case KindPDF:
		p, err = PDF(pageURL, body, opt)
	case KindText:
		p, err = Text(pageURL, body, contentType, opt)
	default:
		return Page{}, "", ErrNotDocument
	}
	if err == nil {
		p.Lang, p.LangMismatch = resolveLang(p.Lang, opt.ContentLanguage, urlLang(pageURL), p.Text)
	}
	return p, k, err
}

// textLimit is Options.MaxTextBytes as a collapser limit.
func textLimit(opt Options) int {
	switch {
	case opt.MaxTextBytes == 0:
		return DefaultMaxTextBytes
	case opt.MaxTextBytes < 0:
		return 0
	}
	return opt.MaxTextBytes
}

// firstLine returns the first line of text that has a visible character,
// whitespace collapsed, cut at MaxTitleBytes: the title of a document that
// names none.
func firstLine(text []byte) string {
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if len(line) > 4*MaxTitleBytes {
			line = line[:4*MaxTitleBytes]
		}
		if t := collapseCut(line, MaxTitleBytes); t != "" {
			return t
		}
	}
	return ""
}
