package extract

import "errors"

// ErrBadURL is returned by HTML when the page URL is not an absolute
// http(s) URL that webtable can normalize.
var ErrBadURL = errors.New("extract: unusable page URL")

// ErrNotHTML is returned by HTML when the body is not HTML (see IsHTML).
var ErrNotHTML = errors.New("extract: not HTML")
