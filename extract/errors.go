package extract

import "errors"

// ErrBadURL is returned by HTML when the page URL is not an absolute
// http(s) URL that webtable can normalize.
var ErrBadURL = errors.New("extract: unusable page URL")

// ErrNotHTML is returned by HTML when the body is not HTML (see IsHTML).
var ErrNotHTML = errors.New("extract: not HTML")

// ErrNotDocument is returned by Document for a body of no kind it extracts.
var ErrNotDocument = errors.New("extract: not a document kind (html, pdf, txt)")

// ErrBadPDF is wrapped by the errors of PDF: a body that is not a readable
// PDF (malformed, encrypted, too large, too many pages, too slow).
var ErrBadPDF = errors.New("extract: unreadable PDF")
