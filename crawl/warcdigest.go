package crawl

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http/httputil"
	"strings"

	"github.com/nlnwa/gowarc"
)

// WARC digests (WARC 1.1, section 5.8: labelled-digest = algorithm ":"
// digest-value). Tools write them differently: wget, Heritrix and Python
// warcio "sha1:" and base32; warcio.js "sha256:" (earlier "sha-256:") and
// hex; others upper-case labels, base64, or base32 without padding. The
// importer takes any case and hyphens in the label and any of these
// encodings of the value.

// digestHashes are the algorithms the importer checks, by normalized label.
var digestHashes = map[string]func() hash.Hash{
	"md5":    md5.New,
	"sha1":   sha1.New,
	"sha224": sha256.New224,
	"sha256": sha256.New,
	"sha384": sha512.New384,
	"sha512": sha512.New,
}

// errDigestUnchecked is wrapped by parseDigest's errors: the digest names
// an algorithm the importer does not know, or a value it cannot decode.
var errDigestUnchecked = errors.New("digest not checked")

// warcDigest is a parsed WARC-Block-Digest or WARC-Payload-Digest.
type warcDigest struct {
	alg string // normalized label: md5, sha1, sha256...
	sum []byte // the decoded value
}

// key is the digest as a map key: the algorithm and the raw sum.
func (d warcDigest) key() string { return d.alg + ":" + string(d.sum) }

func (d warcDigest) new() hash.Hash { return digestHashes[d.alg]() }

// parseDigest reads a labelled digest. Its error wraps errDigestUnchecked.
func parseDigest(v string) (warcDigest, error) {
	label, value, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok {
		return warcDigest{}, fmt.Errorf("%w: no algorithm in %q", errDigestUnchecked, v)
	}
	alg := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(strings.TrimSpace(label)))
	newHash, ok := digestHashes[alg]
	if !ok {
		return warcDigest{}, fmt.Errorf("%w: unknown algorithm %q", errDigestUnchecked, label)
	}
	sum := decodeDigest(strings.TrimSpace(value), newHash().Size())
	if sum == nil {
		return warcDigest{}, fmt.Errorf("%w: %q is not a %s digest in hex, base32 or base64", errDigestUnchecked, value, alg)
	}
	return warcDigest{alg: alg, sum: sum}, nil
}

// decodeDigest decodes a digest value of size bytes written in hex,
// base32 or base64 (any case for hex and base32, padded or not), or
// returns nil. The encodings' lengths differ for every size but MD5's,
// whose hex and padded base32 both have 32 characters (base32 ends in
// '=').
func decodeDigest(v string, size int) []byte {
	if len(v) == 2*size {
		if b, err := hex.DecodeString(v); err == nil {
			return b
		}
	}
	if b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimRight(strings.ToUpper(v), "=")); err == nil && len(b) == size {
		return b
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(strings.TrimRight(v, "=")); err == nil && len(b) == size {
			return b
		}
	}
	return nil
}

// block is a record's content block as read.
type block struct {
	raw       []byte   // at most the limit readBlock was given
	cut       bool     // the block was longer than raw
	badDigest string   // a digest field the block or its payload does not match, with its value
	unchecked []string // digest fields not checked, and why
	// payload is the key (warcDigest.key) of the payload's digest: the
	// record's WARC-Payload-Digest when it matched, else (a response or
	// resource) the SHA-1 the importer computed. Empty for a revisit.
	payload string
}

// errCut is returned for a record shorter than its Content-Length.
var errCut = errors.New("record cut short")

// readBlock reads a record's block, keeping up to limit bytes, and checks
// its length, its WARC-Block-Digest and, but in a revisit (whose digest is
// of the record it refers to), its WARC-Payload-Digest. The payload of an
// application/http block is what follows the HTTP header, taken as
// written or, when the message is chunked, de-chunked (tools do either);
// of another block, the block.
func readBlock(rec gowarc.WarcRecord, limit int64) (*block, error) {
	r, err := rec.Block().RawBytes()
	if err != nil {
		return nil, err
	}
	length, err := rec.ContentLength()
	if err != nil {
		length = -1
	}
	return readBlockFrom(rec.WarcHeader(), rec.Type(), r, length, limit)
}

// readBlockFrom is readBlock of a record of type typ and header hdr,
// whose block r reads; length is its Content-Length, -1 if unknown.
func readBlockFrom(hdr *gowarc.WarcFields, typ gowarc.RecordType, r io.Reader, length, limit int64) (*block, error) {
	revisit := typ == gowarc.Revisit
	b := &block{}
	var err error
	var blockD, payloadD warcDigest
	var blockH, payloadH hash.Hash
	if v := hdr.Get(gowarc.WarcBlockDigest); v != "" {
		if blockD, err = parseDigest(v); err != nil {
			b.unchecked = append(b.unchecked, "WARC-Block-Digest: "+err.Error())
		} else {
			blockH = blockD.new()
		}
	}
	if v := hdr.Get(gowarc.WarcPayloadDigest); v != "" && !revisit {
		if payloadD, err = parseDigest(v); err != nil {
			b.unchecked = append(b.unchecked, "WARC-Payload-Digest: "+err.Error())
		}
	}
	switch {
	case payloadD.alg != "":
		payloadH = payloadD.new()
	case typ == gowarc.Response || typ == gowarc.Resource:
		payloadH = sha1.New() // a key for revisits that refer to it
	}
	raw, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, err
	}
	b.raw = raw
	start := 0
	if strings.HasPrefix(strings.ToLower(hdr.Get(gowarc.ContentType)), "application/http") {
		start = httpHeaderEnd(raw)
	}
	if start < 0 {
		payloadH = nil // no HTTP header in what was read: no payload to check
	}
	var rest []io.Writer
	for _, h := range []hash.Hash{blockH, payloadH} {
		if h != nil {
			rest = append(rest, h)
		}
	}
	if blockH != nil {
		blockH.Write(raw)
	}
	if payloadH != nil {
		payloadH.Write(raw[start:])
	}
	n, err := io.Copy(io.MultiWriter(append(rest, io.Discard)...), r)
	if err != nil {
		return nil, err
	}
	b.cut = n > 0
	if length >= 0 && int64(len(raw))+n != length {
		return nil, fmt.Errorf("%w: %d of %d bytes", errCut, int64(len(raw))+n, length)
	}
	if blockH != nil && !bytes.Equal(blockH.Sum(nil), blockD.sum) {
		b.badDigest = "WARC-Block-Digest: " + hdr.Get(gowarc.WarcBlockDigest)
	}
	switch {
	case payloadH == nil:
	case payloadD.alg == "":
		b.payload = warcDigest{alg: "sha1", sum: payloadH.Sum(nil)}.key()
	case bytes.Equal(payloadH.Sum(nil), payloadD.sum) || (!b.cut && dechunkedSum(raw[:start], raw[start:], payloadD)):
		b.payload = payloadD.key()
	case b.cut && chunked(raw[:start]):
		b.unchecked = append(b.unchecked, "WARC-Payload-Digest: "+errDigestUnchecked.Error()+": a chunked body past the read limit")
	default:
		if b.badDigest == "" {
			b.badDigest = "WARC-Payload-Digest: " + hdr.Get(gowarc.WarcPayloadDigest)
		}
	}
	return b, nil
}

// httpHeaderEnd returns where the body of the HTTP message in b starts,
// or -1 if b holds no whole header.
func httpHeaderEnd(b []byte) int {
	if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
		return i + 4
	}
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	return -1
}

// dechunkedSum reports whether a chunked HTTP body, de-chunked, has the
// digest d.
func dechunkedSum(header, body []byte, d warcDigest) bool {
	if !chunked(header) {
		return false
	}
	h := d.new()
	if _, err := io.Copy(h, httputil.NewChunkedReader(bytes.NewReader(body))); err != nil {
		return false
	}
	return bytes.Equal(h.Sum(nil), d.sum)
}

// chunked reports whether an HTTP header says Transfer-Encoding: chunked.
func chunked(header []byte) bool {
	for line := range bytes.SplitSeq(header, []byte("\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Transfer-Encoding")) && bytes.Contains(bytes.ToLower(value), []byte("chunked")) {
			return true
		}
	}
	return false
}
