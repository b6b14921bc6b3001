package crawl

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/caffeine-go/caffeine/webtable"
)

// URL-agnostic revisits, written by hand as WARC/1.1 records the way
// warcio.js and browsertrix write them (profile identical-payload-digest,
// WARC-Refers-To-Target-URI and -Date, "sha256:" hex digests): each
// revisit's page is loaded with the payload it refers to, found in a
// record read before (in a gzip member of the same file, also by
// WARC-Refers-To alone) or, from a later import, in the table; the chain
// then parses it and clusters it with the page it copies. A revisit of a payload found nowhere is skipped.
func TestImportURLAgnosticRevisit(t *testing.T) {
	const (
		h  = "http://revisit.test"
		mt = "application/http;msgtype=response"
		d1 = "2026-01-02T03:04:05Z"
		d2 = "2026-01-03T03:04:05Z"
		d3 = "2026-01-04T03:04:05Z"
		d4 = "2026-01-05T03:04:05Z"
	)
	identical := gowarc.ProfileIdenticalPayloadDigestV1_1
	page := `<title>shared</title><p>one payload under many URLs</p><a href="/linked">l</a>`
	header := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(page))
	payloadDigest := labelled("sha256", sha256.New(), "hex", page)
	respA := header + page
	idA := fmt.Sprintf("<urn:uuid:%x>", sha256.Sum256([]byte("response"+h+"/a"+d1+respA)))

	gzPage := `<title>gzipped</title><p>encoded once, revisited</p>`
	gz := string(gzipped(t, []byte(gzPage)))
	gzHeader := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", len(gz))
	gzDigest := labelled("sha256", sha256.New(), "hex", gz)

	revisit := func(uri, date, refTarget, refDate, refID, digest, block string) string {
		extra := []string{"WARC-Profile", identical, "WARC-Payload-Digest", digest}
		if refTarget != "" {
			extra = append(extra, "WARC-Refers-To-Target-URI", refTarget, "WARC-Refers-To-Date", refDate)
		}
		if refID != "" {
			extra = append(extra, "WARC-Refers-To", refID)
		}
		return warcRecord("revisit", uri, date, mt, block, extra...)
	}
	dir := t.TempDir()
	write := func(name string, gzipEach bool, records ...string) string {
		var b []byte
		for _, r := range records {
			if gzipEach {
				b = append(b, gzipped(t, []byte(r))...)
			} else {
				b = append(b, r...)
			}
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	first := write("first.warc.gz", true,
		warcRecord("response", h+"/a", d1, mt, respA, "WARC-Payload-Digest", payloadDigest, "WARC-Block-Digest", labelled("sha256", sha256.New(), "hex", respA)),
		warcRecord("response", h+"/g", d1, mt, gzHeader+gz, "WARC-Payload-Digest", gzDigest),
		// A later fetch of /a with another body: /a's row no longer
		// holds the payload the revisits refer to.
		warcRecord("response", h+"/a", d2, mt, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>changed</title>"),
		revisit(h+"/b", d2, h+"/a", d1, idA, payloadDigest, header),
		revisit(h+"/b2", d2, "", "", idA, payloadDigest, ""),                                         // WARC-Refers-To alone, no block
		revisit(h+"/h", d2, h+"/g", d1, "", gzDigest, gzHeader),                                      // its body gunzipped as /g's
		revisit(h+"/c", d2, h+"/x", d1, "", labelled("sha256", sha256.New(), "hex", "gone"), header), // nowhere
	)
	// A later crawl: /a fetched again with the first payload, at d3.
	again := write("again.warc", false,
		warcRecord("response", h+"/a", d3, mt, respA, "WARC-Payload-Digest", payloadDigest))
	// Imported apart (an importer that read none of the above): found in
	// the table, by /g's fetch time and by /a's body digest.
	later := write("later.warc", false,
		revisit(h+"/d", d4, h+"/g", d1, "", gzDigest, gzHeader),
		revisit(h+"/e", d4, h+"/a", d1, "", payloadDigest, header),
	)

	tb := openTable(t, "")
	w := chain(t, tb)
	st, err := importFiles(t, tb, first)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first: %s", st.Summary())
	if st.Loaded != 6 || st.Skipped["revisit of another URL's payload not found"] != 1 || st.Malformed != 0 {
		t.Errorf("first file: %s; want 6 loaded (a twice, g, b, b2, h), c skipped", st.Summary())
	}
	for _, f := range []string{again, later} {
		st, err := importFiles(t, tb, f)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", filepath.Base(f), st.Summary())
		if st.Loaded != st.Records {
			t.Errorf("%s: %s; want every record loaded", filepath.Base(f), st.Summary())
		}
	}

	for p, want := range map[string]string{"/b": page, "/b2": page, "/e": page, "/h": gzPage, "/d": gzPage} {
		if got := string(tb.get(h+p, webtable.Body)); got != want {
			t.Errorf("%s: body %q, want %q", p, got, want)
		}
		if got := string(tb.get(h+p, webtable.Status)); got != "200" {
			t.Errorf("%s: status %s, want 200", p, got)
		}
	}
	if got := string(tb.get(h+"/h", webtable.Headers)); strings.Contains(got, "gzip") {
		t.Errorf("/h headers %s: the body is stored decoded", got)
	}
	if got, want := atoi(tb.get(h+"/b", webtable.FetchedAt)), mustTime(t, d2).UnixMilli(); got != want {
		t.Errorf("/b fetched at %d, want the revisit's date %d", got, want)
	}
	if tb.get(h+"/c", webtable.Status) != nil {
		t.Error("/c loaded without a payload")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	// Parsed and clustered with the page whose payload they have: each
	// cluster has one exported document (the duplicates observer elects
	// it).
	docs := exported(t, tb)
	for orig, copies := range map[string][]string{"/a": {"/b", "/b2", "/e"}, "/g": {"/h", "/d"}} {
		hash := tb.get(h+orig, webtable.Hash)
		n := 0
		for _, p := range append(copies, orig) {
			if got := string(tb.get(h+p, webtable.State)); got != webtable.StateOK {
				t.Errorf("%s: state %q, want ok", p, got)
			}
			if got := tb.get(h+p, webtable.Hash); hash == nil || string(got) != string(hash) {
				t.Errorf("%s: content hash %q, want %s's %q", p, got, orig, hash)
			}
			if docs[h+p] != nil {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d documents exported for %s and its copies %q, want 1", n, orig, copies)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
