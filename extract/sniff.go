package extract

import (
	"bytes"
	"net/http"
	"strings"
)

// IsHTML reports whether body, served with contentType, should be parsed as
// HTML. text/html and application/xhtml+xml count unless the body is plainly
// binary (an image, archive or PDF signature, or control bytes that no text
// has). A missing or catch-all type (application/octet-stream and the like)
// is sniffed with http.DetectContentType; any other declared type is
// believed and is not HTML.
func IsHTML(contentType string, body []byte) bool {
	mt, params, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		if strings.Contains(strings.ToLower(params), "utf-16") {
			return true // full of NULs by design
		}
		return !looksBinary(body)
	case unreliableType(mt):
		return strings.HasPrefix(http.DetectContentType(bytes.TrimPrefix(body, utf8BOM)), "text/html")
	}
	return false
}

var utf8BOM = []byte("\xef\xbb\xbf")

// unreliableType reports whether a declared media type says nothing about
// the body: missing, malformed, or a catch-all servers send by default.
func unreliableType(mt string) bool {
	switch mt {
	case "", "application/octet-stream", "binary/octet-stream", "application/unknown",
		"unknown/unknown", "application/x-unknown-content-type", "*/*":
		return true
	}
	return !strings.Contains(mt, "/")
}

// looksBinary reports whether body is evidently not text: a binary
// signature, or control bytes making up more than 1/16 of the first 512
// bytes (random data has 1/10; a broken page has a stray NUL or two). ESC
// does not count: ISO-2022-JP pages are full of it.
func looksBinary(body []byte) bool {
	ct := http.DetectContentType(body)
	if strings.HasPrefix(ct, "text/") {
		return false
	}
	if ct != "application/octet-stream" {
		return true // a known signature: image, audio, video, font, pdf, zip, gzip, ...
	}
	head := body
	if len(head) > 512 {
		head = head[:512]
	}
	n := 0
	for _, c := range head {
		if c <= 0x08 || 0x0e <= c && c <= 0x1a || 0x1c <= c && c <= 0x1f {
			n++
		}
	}
	return n > 1 && n*16 > len(head)
}
