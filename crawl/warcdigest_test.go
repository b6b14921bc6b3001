package crawl

import (
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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// labelled writes the digest of data as a WARC labelled digest: label,
// then the sum in enc (hex, HEX, base32, base32-nopad, base64).
func labelled(label string, h hash.Hash, enc, data string) string {
	h.Write([]byte(data))
	sum := h.Sum(nil)
	var v string
	switch enc {
	case "hex":
		v = hex.EncodeToString(sum)
	case "HEX":
		v = strings.ToUpper(hex.EncodeToString(sum))
	case "base32":
		v = base32.StdEncoding.EncodeToString(sum)
	case "base32-nopad":
		v = strings.ToLower(strings.TrimRight(base32.StdEncoding.EncodeToString(sum), "="))
	case "base64":
		v = base64.StdEncoding.EncodeToString(sum)
	default:
		panic(enc)
	}
	return label + ":" + v
}

func TestParseDigest(t *testing.T) {
	for _, tc := range []struct {
		in, alg, hexSum string
		unchecked       bool
	}{
		// SHA-1 of the empty string in base32: the value of WARC 1.1's
		// examples of an empty block.
		{"sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "sha1", "da39a3ee5e6b4b0d3255bfef95601890afd80709", false},
		{"SHA-1:da39a3ee5e6b4b0d3255bfef95601890afd80709", "sha1", "da39a3ee5e6b4b0d3255bfef95601890afd80709", false},
		{"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", false},
		{"sha-256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", "sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", false},
		{"sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", false},
		{"md5:d41d8cd98f00b204e9800998ecf8427e", "md5", "d41d8cd98f00b204e9800998ecf8427e", false},
		{"MD5:2QOYZWMPACZAJ2MABGMOZ6CCPY======", "md5", "d41d8cd98f00b204e9800998ecf8427e", false},
		{"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262", "", "", true},
		{"sha256:not-a-digest", "", "", true},
		{"no label", "", "", true},
	} {
		d, err := parseDigest(tc.in)
		if tc.unchecked {
			if !errors.Is(err, errDigestUnchecked) {
				t.Errorf("%s: %v, want errDigestUnchecked", tc.in, err)
			}
			continue
		}
		if err != nil || d.alg != tc.alg || hex.EncodeToString(d.sum) != tc.hexSum {
			t.Errorf("%s: %s %x, %v; want %s %s", tc.in, d.alg, d.sum, err, tc.alg, tc.hexSum)
		}
	}
}

// Every digest a record names is checked, whatever its algorithm (MD5,
// SHA-1, SHA-256, SHA-512), label (sha256, SHA-256, sha-256) and encoding
// (hex either case, base32 padded or not, base64), in WARC-Block-Digest
// and WARC-Payload-Digest: a record that matches loads, one whose body
// was changed after its digest was written is malformed, as a bad SHA-1
// always was. An unknown algorithm is imported and counted Unchecked.
func TestImportDigests(t *testing.T) {
	const (
		host = "http://digests.test"
		date = "2026-01-02T03:04:05Z"
		mt   = "application/http;msgtype=response"
	)
	type algo struct {
		label string
		new   func() hash.Hash
	}
	algos := []algo{
		{"md5", md5.New}, {"sha1", sha1.New}, {"sha256", sha256.New}, {"SHA-256", sha256.New},
		{"sha-256", sha256.New}, {"sha512", sha512.New}, {"SHA-512", sha512.New},
	}
	var records []string
	var good, bad []string
	n := 0
	for _, a := range algos {
		for _, enc := range []string{"hex", "HEX", "base32", "base32-nopad", "base64"} {
			for _, field := range []string{"WARC-Block-Digest", "WARC-Payload-Digest"} {
				for _, corrupt := range []bool{false, true} {
					n++
					path := fmt.Sprintf("/%d-%s-%s-%s-%v", n, a.label, enc, field, corrupt)
					body := fmt.Sprintf("<title>%s</title><p>checked by %s</p>", path, a.label)
					block := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
					digested := block
					if field == "WARC-Payload-Digest" {
						digested = body
					}
					d := labelled(a.label, a.new(), enc, digested)
					if corrupt {
						block = strings.Replace(block, "checked", "chequed", 1)
						bad = append(bad, path)
					} else {
						good = append(good, path)
					}
					records = append(records, warcRecord("response", host+path, date, mt, block, field, d))
				}
			}
		}
	}
	// A chunked message: its payload digest as written (chunks and all)
	// or de-chunked, as tools differ.
	chunkedBody := "<title>chunked</title>"
	chunked := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(chunkedBody), chunkedBody)
	rawPayload := chunked[strings.Index(chunked, "\r\n\r\n")+4:]
	records = append(records,
		warcRecord("response", host+"/chunked-raw", date, mt, chunked, "WARC-Payload-Digest", labelled("sha1", sha1.New(), "base32", rawPayload)),
		warcRecord("response", host+"/chunked-decoded", date, mt, chunked, "WARC-Payload-Digest", labelled("sha256", sha256.New(), "hex", chunkedBody)),
		warcRecord("response", host+"/chunked-bad", date, mt, chunked, "WARC-Payload-Digest", labelled("sha256", sha256.New(), "hex", "other")),
	)
	good = append(good, "/chunked-raw", "/chunked-decoded")
	bad = append(bad, "/chunked-bad")
	// Unknown algorithms and undecodable values: imported, counted.
	unknownBlock := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>unknown</title>"
	records = append(records,
		warcRecord("response", host+"/blake3", date, mt, unknownBlock, "WARC-Block-Digest", "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
		warcRecord("response", host+"/garbled", date, mt, unknownBlock, "WARC-Payload-Digest", "sha256:zzzz"),
	)
	good = append(good, "/blake3", "/garbled")

	// A gzip member a record, as tools write, and uncompressed.
	var gz []byte
	for _, r := range records {
		gz = append(gz, gzipped(t, []byte(r))...)
	}
	for name, content := range map[string][]byte{"digests.warc.gz": gz, "digests.warc": []byte(strings.Join(records, ""))} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(file, content, 0o644); err != nil {
				t.Fatal(err)
			}
			tb := openTable(t, "")
			st, err := importFiles(t, tb, file)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("import: %s", st.Summary())
			if st.Records != int64(len(records)) || st.Loaded != int64(len(good)) || st.Malformed != int64(len(bad)) || st.Unchecked != 2 {
				t.Errorf("%s; want %d read, %d loaded, %d malformed, 2 unchecked", st.Summary(), len(records), len(good), len(bad))
			}
			for _, p := range good {
				if tb.get(host+p, webtable.Body) == nil {
					t.Errorf("%s: not loaded", p)
				}
			}
			for _, p := range bad {
				if tb.get(host+p, webtable.Status) != nil {
					t.Errorf("%s: loaded though its digest does not match", p)
				}
			}
		})
	}
}
