package extract

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// decode returns body as valid UTF-8 without a byte-order mark, and the
// name of the encoding it was read in (a WHATWG name such as "utf-8" or
// "windows-1252"). The result may share memory with body.
func decode(body []byte, contentType string) ([]byte, string) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "windows-1252" && !certain && utf8.Valid(body) {
		// DetermineEncoding looks at 1 KiB only and defaults to windows-1252;
		// a whole body of valid UTF-8 is UTF-8.
		name = "utf-8"
	}
	if name == "utf-8" {
		body = bytes.TrimPrefix(body, utf8BOM)
		if !utf8.Valid(body) {
			body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
		}
		return body, name
	}
	if bytes.HasPrefix(body, []byte{0xfe, 0xff}) || bytes.HasPrefix(body, []byte{0xff, 0xfe}) {
		body = body[2:] // the UTF-16 decoders would keep it as U+FEFF
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		// x/text decoders replace bad input rather than fail; should one
		// fail anyway, salvage the bytes as UTF-8.
		out, name = body, "utf-8"
	}
	if !utf8.Valid(out) {
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	return out, name
}
