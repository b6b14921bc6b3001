package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pgdocs "github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/internal/testsite"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// tutorial serves the PostgreSQL manual's tutorial chapter (24 real pages)
// with an ETag per page, answering If-None-Match with 304; the manual's
// other pages, which the tutorial links to, are 404s.
func tutorial(t testing.TB) (*httptest.Server, []string) {
	srv, paths, _ := countedTutorial(t)
	return srv, paths
}

// countedTutorial is tutorial with a count of the requests for each path.
func countedTutorial(t testing.TB) (*httptest.Server, []string, func(path string) int) {
	t.Helper()
	var mu sync.Mutex // guards hits
	hits := map[string]int{}
	pages := map[string][]byte{}
	var paths []string
	for _, p := range pgdocs.Pages(t) {
		if strings.HasPrefix(p.Path, "tutorial") {
			pages["/"+p.Path] = p.Body
			paths = append(paths, "/"+p.Path)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, paths, func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}
}

// wget crawls url recursively with Debian's wget into dir/name.warc.gz.
func wget(t *testing.T, dir, name, url string) string {
	t.Helper()
	if _, err := exec.LookPath("wget"); err != nil {
		t.Skip("wget is not installed (apt-get install wget)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "wget", "-nv", "-r", "-l", "inf", "--delete-after", "-P", filepath.Join(dir, "files"),
		"--warc-file="+filepath.Join(dir, name), url)
	out, err := cmd.CombinedOutput()
	// wget exits 8 when a server answered an error (the 404s) and 4 when
	// a name did not resolve (redirects off the site): expected.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && (exit.ExitCode() == 8 || exit.ExitCode() == 4)) {
		t.Fatalf("wget: %v\n%s", err, out)
	}
	return filepath.Join(dir, name+".warc.gz")
}

// chain runs the indexing chain on tb until the test ends.
func chain(t testing.TB, tb *table) *percolator.Worker {
	t.Helper()
	w, err := percolator.NewWorker(tb.db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}, observers.Chain()...)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	t.Cleanup(w.Close) // before the table's checks
	return w
}

// verify waits for the chain to be idle and compares it with the batch.
func verify(t *testing.T, tb *table, w *percolator.Worker) *observers.Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	diffs, b, err := observers.Verify(ctx, tb.db, 0.005, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error("verify:", d)
	}
	return b
}

// exported replays the export queue as serving does: the documents a
// search finds, by URL.
func exported(t testing.TB, tb *table) map[string]*webtable.Doc {
	t.Helper()
	docs := map[string]*webtable.Doc{}
	ver := map[string]uint64{}
	err := tb.db.View(context.Background(), func(tx *percolator.Tx) error {
		return tx.Scan(context.Background(), webtable.ExportPrefix, webtable.ExportPrefix+"\xff", webtable.ExportDoc, func(_, _ string, v []byte) bool {
			var x webtable.Export
			if err := json.Unmarshal(v, &x); err != nil {
				t.Fatal(err)
			}
			if x.Version < ver[x.URL] {
				return true
			}
			ver[x.URL] = x.Version
			if x.Op == webtable.OpDelete {
				delete(docs, x.URL)
			} else {
				docs[x.URL] = x.Doc
			}
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// importFiles imports files into tb and returns the stats.
func importFiles(t *testing.T, tb *table, files ...string) (ImportStats, error) {
	t.Helper()
	im, err := NewImporter(context.Background(), tb.db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := im.ImportFile(context.Background(), f); err != nil {
			return im.Stats(), err
		}
	}
	return im.Stats(), nil
}

// dump is every cell of tb.
func dump(t testing.TB, tb *table) string {
	t.Helper()
	var b bytes.Buffer
	if err := tb.db.Dump(context.Background(), &b, "", ""); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A WARC written by wget (a real-site fixture with redirects, 404s and
// robots.txt, and 24 pages of the PostgreSQL manual) imports: the chain
// goes idle, Verify passes, every page is searchable, and a second import
// changes nothing.
func TestImportWget(t *testing.T) {
	dir := t.TempDir()
	pg, paths, hits := countedTutorial(t)
	site := testsite.New(t)
	files := []string{
		wget(t, dir, "pg", pg.URL+"/tutorial.html"),
		wget(t, dir, "site", site.URL+"/"),
	}
	tb := openTable(t, "")
	w := chain(t, tb)
	st, err := importFiles(t, tb, files...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("import: %s", st.Summary())
	if st.Malformed != 0 || st.Skipped["request record"] == 0 || st.Skipped["warcinfo record"] != 2 {
		t.Errorf("import: %s; want no malformed, the requests and two warcinfo records skipped", st.Summary())
	}
	verify(t, tb, w)

	docs := exported(t, tb)
	for _, p := range paths {
		if docs[pg.URL+p] == nil {
			t.Errorf("%s: no exported document", p)
		}
	}
	for p, want := range map[string]string{
		"/":                    webtable.StateOK,
		"/moved":               webtable.StateRedirect,
		"/missing":             webtable.StateGone,
		"/docs/dir/":           webtable.StateOK,
		"/target.html":         webtable.StateOK,
		"/docs/a.html":         webtable.StateOK,
		"/t302.html":           webtable.StateOK,
		"/docs/dir/index.html": webtable.StateRedirect,
	} {
		if got := string(tb.get(site.URL+p, webtable.State)); got != want {
			t.Errorf("%s: state %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"/", "/target.html", "/docs/dir/"} {
		if docs[site.URL+p] == nil {
			t.Errorf("%s: no exported document", p)
		}
	}
	if got := string(tb.get(site.URL+"/robots.txt", webtable.Status)); got != "" {
		t.Errorf("robots.txt was loaded as a page (status %s)", got)
	}

	// Imported pages are due after their interval, not now: a crawler
	// started now has nothing to fetch but the links wget did not follow.
	for _, p := range paths {
		due := atoi(tb.get(pg.URL+p, webtable.Due))
		if time.Until(time.UnixMilli(due)) < 24*time.Hour {
			t.Errorf("%s due %v, want after its revisit interval", p, time.UnixMilli(due))
		}
	}
	if seeds, err := Seeds(context.Background(), tb.db); err != nil || len(seeds) != 2 {
		t.Errorf("seeds %q (%v), want one per host", seeds, err)
	}

	// Again: nothing changes.
	if err := w.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := dump(t, tb)
	st2, err := importFiles(t, tb, files...)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Loaded != 0 || st2.Records != st.Records {
		t.Errorf("second import: %s; want nothing loaded", st2.Summary())
	}
	if after := dump(t, tb); after != before {
		t.Error("second import changed the table")
	}

	// A crawler started now on the table (its remembered seeds: one per
	// imported host) fetches none of the imported pages: they are not due.
	served := map[string]int{}
	for _, p := range paths {
		served[p] = hits(p)
	}
	opt := testOptions()
	opt.NoSitemaps = true
	tb.crawl(opt)
	for _, p := range paths {
		if hits(p) != served[p] {
			t.Errorf("%s fetched again by a crawler started after the import", p)
		}
	}
	verify(t, tb, w)
}

// The same content fetched again later (another crawl's WARC of the same
// pages) is loaded, but the loader's body sums leave fetch:body alone: the
// chain has nothing to do.
func TestImportSameContentLater(t *testing.T) {
	dir := t.TempDir()
	pg, _ := tutorial(t)
	first := wget(t, dir, "a", pg.URL+"/tutorial-start.html")
	// wget's WARC-Date has seconds: the second crawl must be a second later.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	second := wget(t, dir, "b", pg.URL+"/tutorial-start.html")
	tb := openTable(t, "")
	w := chain(t, tb)
	if _, err := importFiles(t, tb, first); err != nil {
		t.Fatal(err)
	}
	verify(t, tb, w)
	w.Close()
	st, err := importFiles(t, tb, second)
	if err != nil {
		t.Fatal(err)
	}
	if st.Loaded == 0 || st.Changed != 0 {
		t.Errorf("second crawl: %s; want loads without new content", st.Summary())
	}
	pending, err := tb.db.Pending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := pending[webtable.Body]; n != 0 {
		t.Errorf("%d fetch:body notifications after loading the same content, want 0", n)
	}
}

// A crawl with WARCDir (two rounds: 200s, 404s, then 304s) re-imports into
// a fresh table with the same pages and the same exported documents.
func TestWARCRoundTrip(t *testing.T) {
	pg, paths := tutorial(t)
	warcs := t.TempDir()
	a := openTable(t, "")
	opt := testOptions(pg.URL + "/tutorial.html")
	opt.WARCDir = warcs
	opt.WARCMaxSize = 16 << 10 // several files
	c := a.crawl(opt)
	// Two records a fetch: the pages' and the host's robots.txt.
	if s := c.Stats(); s.WARCRecords != 2*(s.Fetched+1) || s.WARCDropped != 0 {
		t.Errorf("stats %+v: want two records per fetch, robots.txt's included", s)
	}
	var urls []string
	for _, p := range paths {
		urls = append(urls, pg.URL+p)
	}
	if _, err := Recrawl(context.Background(), a.db, urls, time.Time{}); err != nil {
		t.Fatal(err)
	}
	opt.Seeds = nil
	if c := a.crawl(opt); c.Stats().NotModified != int64(len(paths)) {
		t.Errorf("round 2: %d not modified, want %d", c.Stats().NotModified, len(paths))
	}
	// The chain runs after the loads on both tables, so that documents
	// carry the last fetch time (a 304 does not export a page again).
	ba := verify(t, a, chain(t, a))

	files, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz"))
	if len(files) < 2 {
		t.Fatalf("WARC files %q, want rotation past 16 KiB", files)
	}
	if open, _ := filepath.Glob(filepath.Join(warcs, "*.open")); len(open) > 0 {
		t.Errorf("files left open: %q", open)
	}
	slices.Sort(files) // in the order written
	b := openTable(t, "")
	st, err := importFiles(t, b, files...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("import: %s", st.Summary())
	if st.Malformed != 0 || st.Skipped["warcinfo record"] != int64(len(files)) || st.Skipped["revisit of a page not in the table"] != 0 ||
		st.Skipped["robots.txt"] != 2 { // one a crawl
		t.Errorf("import: %s", st.Summary())
	}
	bb := verify(t, b, chain(t, b))

	// The same pages, fetched at the same times with the same outcomes.
	for _, u := range a.pages() {
		for _, col := range []string{webtable.Status, webtable.FetchedAt, webtable.BodySum, webtable.Redirect} {
			if x, y := a.get(u, col), b.get(u, col); !bytes.Equal(x, y) {
				t.Errorf("%s %s: crawled %q, imported %q", u, col, x, y)
			}
		}
	}
	if x, y := a.pages(), b.pages(); !slices.Equal(x, y) {
		t.Errorf("pages: crawled %d, imported %d", len(x), len(y))
	}
	// The same link graph: the batch's PageRank (each table's incremental
	// one is within Verify's tolerance of it).
	for row, r := range ba.Rank {
		if math.Abs(bb.Rank[row]-r) > 1e-9 {
			t.Errorf("%s: batch PageRank %v crawled, %v imported", row, r, bb.Rank[row])
		}
	}
	da, db := exported(t, a), exported(t, b)
	if len(da) != len(paths) || len(db) != len(da) {
		t.Errorf("%d documents crawled, %d imported, want %d", len(da), len(db), len(paths))
	}
	for u, x := range da {
		y := db[u]
		if y == nil {
			t.Errorf("%s: not exported after the import", u)
			continue
		}
		x2, y2 := *x, *y
		x2.PageRank, y2.PageRank = 0, 0
		jx, _ := json.Marshal(x2)
		jy, _ := json.Marshal(y2)
		if !bytes.Equal(jx, jy) {
			t.Errorf("%s: documents differ:\ncrawled  %s\nimported %s", u, jx, jy)
		}
	}
}

// A cut file keeps what came before the cut and says where it stopped;
// importing the whole file then loads the rest. Garbage is not a WARC.
func TestImportDamaged(t *testing.T) {
	dir := t.TempDir()
	pg, paths := tutorial(t)
	file := wget(t, dir, "pg", pg.URL+"/tutorial.html")
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.warc.gz")
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	tb := openTable(t, "")
	w := chain(t, tb)
	st, err := importFiles(t, tb, cut)
	var ie *ImportError
	if !errors.As(err, &ie) || ie.File != cut || ie.Offset <= 0 || ie.Offset >= int64(len(whole)/2) || ie.Record < 2 {
		t.Fatalf("cut file: %v; want an ImportError inside the file", err)
	}
	t.Logf("cut file: %v; %s", err, st.Summary())
	if st.Loaded == 0 {
		t.Errorf("cut file: %s; want the pages before the cut loaded", st.Summary())
	}
	n := 0
	for _, p := range paths {
		if tb.get(pg.URL+p, webtable.Status) != nil {
			n++
		}
	}
	if n == 0 || n == len(paths) {
		t.Errorf("%d of %d pages loaded from half a file", n, len(paths))
	}
	st2, err := importFiles(t, tb, file)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Loaded == 0 || st2.Skipped["the table has this fetch or a later one"] != st.Loaded {
		t.Errorf("whole file after the cut one: %s; want the %d loaded records skipped", st2.Summary(), st.Loaded)
	}
	verify(t, tb, w)
	if docs := exported(t, tb); len(docs) != len(paths) {
		t.Errorf("%d documents, want %d", len(docs), len(paths))
	}

	for name, content := range map[string][]byte{
		"garbage.warc":    bytes.Repeat([]byte("not a warc \x00\xff"), 1000),
		"empty.warc.gz":   nil,
		"gzipped.warc.gz": gzipped(t, []byte("<html>hello</html>")),
	} {
		f := filepath.Join(dir, name)
		os.WriteFile(f, content, 0o644)
		_, err := importFiles(t, tb, f)
		if !errors.As(err, &ie) || !errors.Is(err, ErrNotWARC) || ie.Offset != 0 {
			t.Errorf("%s: %v, want ErrNotWARC at byte 0", name, err)
		}
	}
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// warcRecord is one uncompressed WARC/1.1 record.
func warcRecord(typ, uri, date, contentType, block string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Target-URI: %s\r\nWARC-Date: %s\r\nWARC-Record-ID: <urn:uuid:%x>\r\n", typ, uri, date, sha256.Sum256([]byte(typ+uri+date+block)))
	for i := 0; i+1 < len(extra); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", extra[i], extra[i+1])
	}
	fmt.Fprintf(&b, "Content-Type: %s\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", contentType, len(block), block)
	return b.String()
}

// Each kind of record is loaded, skipped or counted malformed as the
// docs/crawler.md (WARC) says; an uncompressed file cut inside a block stops there.
func TestImportRecordKinds(t *testing.T) {
	const (
		h    = "http://kinds.test"
		d1   = "2026-01-02T03:04:05Z"
		d2   = "2026-02-02T03:04:05.5Z"
		http = "application/http;msgtype=response"
		page = "<title>gz</title><p>compressed words here</p><a href=\"/linked\">l</a>"
	)
	resp := func(hdr, body string) string { return "HTTP/1.1 200 OK\r\n" + hdr + "\r\n" + body }
	gz := string(gzipped(t, []byte(page)))
	records := []string{
		warcRecord("warcinfo", "", d1, "application/warc-fields", "software: test\r\n"),
		warcRecord("response", h+"/gz", d1, http, resp("Content-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: "+fmt.Sprint(len(gz))+"\r\n", gz)),
		warcRecord("revisit", h+"/gz", d2, http, "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", "WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/server-not-modified"),
		warcRecord("resource", h+"/res.html", d1, "text/html", "<title>res</title><p>a resource page</p>"),
		warcRecord("resource", h+"/img.png", d1, "image/png", "\x89PNG\r\n\x1a\n"),
		warcRecord("revisit", h+"/unknown", d1, http, "HTTP/1.1 304 Not Modified\r\n\r\n"),
		warcRecord("response", h+"/digest", d1, http, resp("Content-Type: text/html\r\n", "<p>x</p>"), "WARC-Block-Digest", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
		warcRecord("response", h+"/garbled", d1, http, "this is not HTTP\r\n\r\n"),
		warcRecord("response", h+"/br", d1, http, resp("Content-Type: text/html\r\nContent-Encoding: br\r\n", "\x0b\x02\x80")),
		warcRecord("response", "dns:kinds.test", d1, "text/dns", "kinds.test. 300 IN A 10.0.0.1\r\n"),
		warcRecord("metadata", h+"/gz", d1, "application/warc-fields", "outlink: /x\r\n"),
	}
	file := filepath.Join(t.TempDir(), "kinds.warc")
	os.WriteFile(file, []byte(strings.Join(records, "")), 0o644)
	tb := openTable(t, "")
	st, err := importFiles(t, tb, file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"warcinfo record":                    1,
		"metadata record":                    1,
		"resource record not HTML":           1,
		"revisit of a page not in the table": 1,
		`unsupported Content-Encoding "br"`:  1,
		"not an http(s) URL":                 1,
	}
	for why, n := range want {
		if st.Skipped[why] != n {
			t.Errorf("skipped %q: %d, want %d", why, st.Skipped[why], n)
		}
	}
	if st.Records != int64(len(records)) || st.Loaded != 3 || st.Malformed != 2 {
		t.Errorf("%s; want %d read, 3 loaded (gz, its revisit, res.html), 2 malformed", st.Summary(), len(records))
	}
	if got := string(tb.get(h+"/gz", webtable.Body)); got != page {
		t.Errorf("gzip-encoded body stored as %q, want it decoded", got)
	}
	if got, want := string(tb.get(h+"/gz", webtable.FetchedAt)), "1770001445500"; got != want { // d2
		t.Errorf("fetch time %s, want the revisit's WARC-Date", got)
	}
	if got := string(tb.get(h+"/gz", webtable.Status)); got != "200" {
		t.Errorf("status %s after a revisit, want 200 kept", got)
	}
	if tb.get(h+"/linked", webtable.Depth) == nil {
		t.Error("the imported page's link did not join the frontier")
	}
	if got := string(tb.get(h+"/res.html", webtable.Status)); got != "200" {
		t.Errorf("resource record: status %q, want 200", got)
	}

	// Cut inside the gz response's block: the warcinfo record is read,
	// the cut record is reported.
	whole := strings.Join(records, "")
	cut := filepath.Join(t.TempDir(), "cut.warc")
	os.WriteFile(cut, []byte(whole[:len(records[0])+len(records[1])-20]), 0o644)
	_, err = importFiles(t, openTable(t, ""), cut)
	var ie *ImportError
	if !errors.As(err, &ie) || !errors.Is(err, errCut) || ie.Record != 2 || ie.Offset != int64(len(records[0])) {
		t.Errorf("cut file: %v; want record 2 at byte %d cut short", err, len(records[0]))
	}
}

// A fetch's records are in the file when add returns, before the page is
// loaded: a crash after that loses none of them. The file, still open, is
// imported while the archive is.
func TestWARCWrittenBeforeLoad(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>kept</title><p>written before it is loaded")
	}))
	defer srv.Close()
	dir := t.TempDir()
	var written, dropped atomic.Int64
	a, err := openArchive(dir, 1<<30, "test", slog.New(slog.DiscardHandler), &written, &dropped)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	a.add(srv.URL+"/p", fetchResult(t, srv.URL+"/p"))
	if written.Load() != 2 {
		t.Fatalf("%d records written when add returned, want 2", written.Load())
	}
	open, _ := filepath.Glob(filepath.Join(dir, "*.open"))
	if len(open) != 1 {
		t.Fatalf("open files %q, want 1", open)
	}
	b := openTable(t, "")
	st, err := importFiles(t, b, open[0])
	if err != nil || st.Loaded != 1 {
		t.Fatalf("import of the open file: %s, %v; want the page loaded", st.Summary(), err)
	}
}

// TestWARCQueueFull stands for a disk slower than the crawl: with the
// queue's room taken, add waits its bound, drops the record, counts it and
// returns; once room frees, records are written again.
func TestWARCQueueFull(t *testing.T) {
	dir := t.TempDir()
	var written, dropped atomic.Int64
	a, err := openArchive(dir, 1<<30, "test", slog.New(slog.DiscardHandler), &written, &dropped)
	if err != nil {
		t.Fatal(err)
	}
	a.wait = 50 * time.Millisecond
	if err := a.room.Acquire(context.Background(), warcQueueBytes); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>"+r.URL.Path+"</title>")
	}))
	defer srv.Close()
	add := func(path string) { a.add(srv.URL+path, fetchResult(t, srv.URL+path)) }
	start := time.Now()
	add("/dropped")
	if waited := time.Since(start); waited < a.wait {
		t.Errorf("add returned after %v, before its bound %v", waited, a.wait)
	}
	if dropped.Load() != 1 || written.Load() != 0 {
		t.Fatalf("full queue: dropped %d, written %d; want 1, 0", dropped.Load(), written.Load())
	}
	a.room.Release(warcQueueBytes)
	add("/kept")
	if dropped.Load() != 1 || written.Load() != 2 {
		t.Fatalf("after room freed: dropped %d, written %d; want 1, 2", dropped.Load(), written.Load())
	}
	if err := a.close(); err != nil {
		t.Fatalf("close: %v (a dropped record is counted, not a write error)", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	b := openTable(t, "")
	if st, err := importFiles(t, b, files...); err != nil || st.Loaded != 1 {
		t.Fatalf("import: %s, %v; want one page loaded", st.Summary(), err)
	}
	if got := b.pages(); len(got) != 1 || !strings.Contains(got[0], "kept") {
		t.Errorf("archived pages %q, want the kept one only", got)
	}
}

// fetchResult fetches u as a fetching worker would hand it to the archive.
func fetchResult(t *testing.T, u string) *result {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return &result{status: resp.StatusCode, header: resp.Header, body: body, at: time.Now(), resp: resp}
}
