package crawl

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Importer loads the response records of WARC files into the table as
// the crawler's loader transaction loads a fetch, with the record's
// WARC-Date as the fetch time, so the observers index them as usual.
//
// A page new to the table gets a frontier row as a fetched one does (depth
// 0, due after its revisit interval from the record's date) and its links
// go to the frontier like a fetched page's: to the hosts the table's seeds
// and the imported records cover. The first page imported from a host no
// seed covers is remembered as a seed, so a later crawl recrawls the
// imported pages when due, not before. A record is skipped when the table
// has a fetch of its page as recent or more (so a second import of a file
// changes nothing) and when a crawler holds a live lease on the page.
// Records are not fetched: their URLs are normalized as the crawler's but
// private addresses are imported (the address guard is about what the
// crawler connects to).
//
// An Importer is used by one goroutine at a time, but Stats may be called
// from any goroutine.
type Importer struct {
	c     *Crawler
	hosts map[string]bool // hosts with a seed
	seeds []string

	records, loaded, changed, malformed, unchecked, offset atomic.Int64

	payloads payloadIndex    // records read, by payload digest, for revisits
	warned   map[string]bool // digest warnings logged once

	mu      sync.Mutex       // guards skipped and file
	skipped map[string]int64 // by reason
	file    string
}

// ImportStats counts what an Importer did.
type ImportStats struct {
	Records   int64            // records read
	Loaded    int64            // records loaded by a loader transaction
	Changed   int64            // of those, loads that gave the page new content
	Skipped   map[string]int64 // records not loaded, by reason
	Malformed int64            // records that could not be read (a file that stops reading is an ImportError)
	Unchecked int64            // records imported with a digest not checked: an unknown algorithm or encoding
	File      string           // the file being read
	Offset    int64            // where in File, in bytes of the file
}

// ImportError is returned by ImportFile when a file stops being readable:
// everything before Offset was imported.
type ImportError struct {
	File   string
	Offset int64 // byte offset in File of the record that could not be read
	Record int64 // its number in the file, from 1
	Err    error
}

func (e *ImportError) Error() string {
	return fmt.Sprintf("%s: stopped at byte %d (record %d): %v", e.File, e.Offset, e.Record, e.Err)
}

func (e *ImportError) Unwrap() error { return e.Err }

// NewImporter returns an importer into db (opened with webtable.Observed
// and webtable.Weak). Of opt, the revisit intervals, MaxBodySize,
// MaxRedirects, KnownRows and Logger apply; Seeds and Scope do not (the
// scope is the hosts of the table's seeds and of the records).
func NewImporter(ctx context.Context, db *percolator.DB, opt Options) (*Importer, error) {
	opt.Scope = ScopeHost
	c, err := New(db, opt)
	if err != nil {
		return nil, err
	}
	seeds, err := Seeds(ctx, db)
	if err != nil {
		return nil, err
	}
	im := &Importer{c: c, hosts: map[string]bool{}, skipped: map[string]int64{}, seeds: seeds,
		payloads: payloadIndex{max: maxPayloads}, warned: map[string]bool{}}
	for _, s := range seeds {
		im.hosts[hostPort(s)] = true
	}
	c.scope = newScope(ScopeHost, seeds)
	return im, nil
}

// Stats returns what the importer did so far. It is safe for concurrent use.
func (im *Importer) Stats() ImportStats {
	im.mu.Lock()
	defer im.mu.Unlock()
	return ImportStats{
		Records: im.records.Load(), Loaded: im.loaded.Load(), Changed: im.changed.Load(),
		Skipped: maps.Clone(im.skipped), Malformed: im.malformed.Load(), Unchecked: im.unchecked.Load(),
		File: im.file, Offset: im.offset.Load(),
	}
}

func (im *Importer) skip(reason string) {
	im.mu.Lock()
	im.skipped[reason]++
	im.mu.Unlock()
}

// warcOptions read records as they come from many tools: framing only.
// The importer reads each block whole and checks its length and
// WARC-Block-Digest itself (gowarc's header validation blanks fields it
// finds odd, such as wget's WARC/1.0 "<URI>"). Syntax errors stop the
// file: bytes that are not a record, a header line without CRLF (gowarc
// v1.6.0 also loops on a header cut by a gzip error when it only warns).
var warcOptions = []gowarc.WarcRecordOption{
	gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
	gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore),
	gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore),
	gowarc.WithSkipParseBlock(),
	gowarc.WithAddMissingDigest(false), // else it adds the digest of nothing
	gowarc.WithFixDigest(false),
	gowarc.WithFixContentLength(false),
}

// ImportFile imports the records of the WARC file at path, gzipped (per
// record, or whole) or not. It stops at the first record it cannot read
// (cut short, or not a record) and returns an *ImportError saying where;
// what came before stays loaded. A file that does not start with a WARC
// record is an *ImportError wrapping ErrNotWARC. A record whose block
// does not match its digest is counted malformed and skipped. ctx ends it
// between records.
func (im *Importer) ImportFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	im.mu.Lock()
	im.file = path
	im.mu.Unlock()
	im.offset.Store(0)
	if err := sniff(f); err != nil {
		return &ImportError{File: path, Record: 1, Err: err}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	r, err := gowarc.NewWarcFileReaderFromStream(f, 0, warcOptions...)
	if err != nil {
		return err
	}
	defer func() { r.Close() }()
	limit := im.c.opt.MaxBodySize + 1<<20
	for n := int64(1); ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, off, _, err := r.Next()
		if rec == nil && errors.Is(err, io.EOF) && off >= st.Size() {
			return nil
		}
		var b *block
		switch {
		case err == nil:
			b, err = readBlock(rec, limit)
		case rec != nil && rec.Block() == nil && strings.Contains(err.Error(), "unsupported digest algorithm"):
			// gowarc reads no record whose digest it cannot compute:
			// read this one here, and go on with a reader after it.
			var next int64
			if b, next, err = readUnparsed(path, off, rec, limit); err == nil {
				r.Close()
				r, err = gowarc.NewWarcFileReader(path, next, warcOptions...)
			}
		}
		if err != nil {
			closeRecord(rec)
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return &ImportError{File: path, Offset: off, Record: n, Err: err}
		}
		im.offset.Store(off)
		im.records.Add(1)
		if b.badDigest != "" {
			closeRecord(rec)
			im.malformed.Add(1)
			im.c.log.Info("import: record does not match its digest", "file", path, "offset", off, "digest", b.badDigest)
			continue
		}
		if len(b.unchecked) > 0 {
			im.unchecked.Add(1)
			for _, why := range b.unchecked {
				if !im.warned[why] && len(im.warned) < 100 {
					im.warned[why] = true
					im.c.log.Warn("import: "+why+" (the record is imported; later ones are logged at debug level)", "file", path, "offset", off)
				} else {
					im.c.log.Debug("import: "+why, "file", path, "offset", off)
				}
			}
		}
		if t := rec.Type(); b.payload != "" && (t == gowarc.Response || t == gowarc.Resource) {
			im.payloads.add(b.payload, recordLoc{file: path, off: off})
		}
		err = im.record(ctx, rec, b)
		closeRecord(rec)
		if err != nil {
			return &ImportError{File: path, Offset: off, Record: n, Err: err}
		}
	}
}

// closeRecord closes rec if gowarc gave it a block (it panics otherwise).
func closeRecord(rec gowarc.WarcRecord) {
	if rec != nil && rec.Block() != nil {
		rec.Close()
	}
}

// readUnparsed reads the record at off in the WARC file at path, whose
// header gowarc parsed as rec, as readBlock does, and returns where the
// next record starts. A record gzipped with the records after it (a file
// gzipped whole) cannot be read so.
func readUnparsed(path string, off int64, rec gowarc.WarcRecord, limit int64) (*block, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, 0, err
	}
	cr := &countingReader{r: f}
	br := bufio.NewReader(cr)
	r := br
	magic, _ := br.Peek(2)
	gzipped := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	if gzipped {
		zr, err := gzip.NewReader(br) // br is a ByteReader: gzip reads no further than its member
		if err != nil {
			return nil, 0, err
		}
		zr.Multistream(false)
		r = bufio.NewReader(zr)
	}
	for { // the header, which gowarc read
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, 0, fmt.Errorf("record header: %w", err)
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			break
		}
	}
	length, err := rec.ContentLength()
	if err != nil {
		return nil, 0, err
	}
	b, err := readBlockFrom(rec.WarcHeader(), rec.Type(), io.LimitReader(r, length), length, limit)
	if err != nil {
		return nil, 0, err
	}
	end := make([]byte, 4)
	if _, err := io.ReadFull(r, end); err != nil || string(end) != "\r\n\r\n" {
		return nil, 0, fmt.Errorf("end of record: %q, %v", end, err)
	}
	if gzipped {
		if more, _ := io.Copy(io.Discard, r); more > 0 {
			return nil, 0, errors.New("a record whose digest gowarc cannot read, in a file gzipped whole")
		}
	}
	return b, off + cr.n - int64(br.Buffered()), nil
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// sniff checks that r starts with a WARC record, gzipped or not.
func sniff(r io.Reader) error {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(5)
	if len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotWARC, err)
		}
		magic = make([]byte, 5)
		n, _ := io.ReadFull(zr, magic)
		magic = magic[:n]
	}
	if string(magic) != "WARC/" {
		return fmt.Errorf("%w: starts with %q", ErrNotWARC, magic)
	}
	return nil
}

// record imports one record, whose block is b. Only a store failure is an
// error; a record it cannot use is counted as skipped or malformed.
func (im *Importer) record(ctx context.Context, rec gowarc.WarcRecord, b *block) error {
	h := rec.WarcHeader()
	switch rec.Type() {
	case gowarc.Response, gowarc.Revisit, gowarc.Resource, gowarc.Conversion:
	default:
		im.skip(rec.Type().String() + " record")
		return nil
	}
	raw := h.Get(gowarc.WarcTargetURI)
	u, err := url.Parse(unbracket(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		im.skip("not an http(s) URL")
		return nil
	}
	if u.Path == "/robots.txt" {
		im.skip("robots.txt") // read by crawlers, not a page
		return nil
	}
	pageURL, err := webtable.Normalize(u.String())
	if err != nil {
		im.malformed.Add(1)
		im.c.log.Info("import: bad URL", "url", raw, "err", err)
		return nil
	}
	at, err := rec.Date()
	if err != nil {
		im.malformed.Add(1)
		im.c.log.Info("import: bad WARC-Date", "url", pageURL, "err", err)
		return nil
	}
	var res result
	switch rec.Type() {
	case gowarc.Revisit:
		var ok bool
		if res, ok, err = im.revisit(ctx, rec, b, pageURL); err != nil || !ok {
			return err
		}
	case gowarc.Response:
		if ct := strings.ToLower(h.Get(gowarc.ContentType)); !strings.HasPrefix(ct, gowarc.ApplicationHttp) {
			im.skip("response record not of HTTP")
			return nil
		}
		if res, err = im.httpResult(b, false); err != nil {
			if errors.Is(err, errUnsupported) {
				im.skip(err.Error())
				return nil
			}
			im.malformed.Add(1)
			im.c.log.Info("import: unreadable HTTP response", "url", pageURL, "err", err)
			return nil
		}
	default: // resource, conversion: loaded as a 200 when HTML
		var html bool
		if res, html = im.resourceResult(h.Get(gowarc.ContentType), b); !html {
			im.skip(rec.Type().String() + " record not HTML")
			return nil
		}
	}
	if h.Has(gowarc.WarcTruncated) && res.status/100 == 2 {
		res.truncated = true
	}
	res.read(pageURL)
	return im.load(ctx, pageURL, res, at)
}

// resourceResult is a resource or conversion record's block b, of
// Content-Type ct, as a 200 response, and whether it is HTML.
func (im *Importer) resourceResult(ct string, b *block) (result, bool) {
	body := b.raw
	if int64(len(body)) > im.c.opt.MaxBodySize {
		body = body[:im.c.opt.MaxBodySize]
	}
	return result{status: http.StatusOK, header: http.Header{"Content-Type": {ct}}, body: body,
		truncated: b.cut || len(body) < len(b.raw)}, extract.IsHTML(ct, body)
}

// errUnsupported marks a response the importer skips rather than a
// malformed one.
var errUnsupported = errors.New("unsupported")

// httpResult parses an HTTP response block: a revisit's has headers only.
func (im *Importer) httpResult(b *block, revisit bool) (result, error) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b.raw)), nil)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	if revisit {
		return result{status: resp.StatusCode, header: resp.Header}, nil
	}
	var body io.Reader = resp.Body
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return result{}, err
		}
		body = zr
	case "deflate":
		body = flate.NewReader(resp.Body)
	default:
		return result{}, fmt.Errorf("%w Content-Encoding %q", errUnsupported, enc)
	}
	if resp.Header.Get("Content-Encoding") != "" {
		// As Go's transport gives the crawler a response it decoded.
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
	}
	max := im.c.opt.MaxBodySize
	data, err := io.ReadAll(io.LimitReader(body, max+1))
	res := result{status: resp.StatusCode, header: resp.Header, body: data, truncated: b.cut}
	if int64(len(data)) > max {
		res.body, res.truncated = data[:max], true
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// A body shorter than its Content-Length: the capture was cut
		// (WARC-Truncated), as a crawler's fetch at MaxBodySize.
		res.truncated, err = true, nil
	}
	return res, err
}

// load writes res, fetched at at, into pageURL's row: the outlinks to
// the frontier first, then the loader transaction, as the crawler does.
func (im *Importer) load(ctx context.Context, pageURL string, res result, at time.Time) error {
	row, err := webtable.Row(pageURL)
	if err != nil {
		im.malformed.Add(1)
		return nil
	}
	c := im.c
	host := hostPort(pageURL)
	if !im.hosts[host] {
		if err := im.addSeed(ctx, pageURL, row); err != nil {
			return err
		}
	}
	j := &job{url: pageURL, row: row, res: res}

	// A first look, to skip what is loaded already without adding links.
	skip, err := im.prepare(ctx, j, at, nil)
	if err != nil || skip != "" {
		if skip != "" {
			im.skip(skip)
			c.log.Debug("import: skipped", "url", pageURL, "why", skip)
		}
		return err
	}
	if _, err := c.enqueue(ctx, c.parseLinks(j)); err != nil {
		return err
	}
	var out outcome
	err = c.db.Update(ctx, func(tx *percolator.Tx) error {
		out = outcome{}
		var err error
		if skip, err = im.prepare(ctx, j, at, tx); err != nil || skip != "" {
			return err
		}
		out, err = c.write(ctx, tx, j, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("load %s: %w", pageURL, err)
	}
	if skip != "" {
		im.skip(skip)
		return nil
	}
	c.known.add(row)
	im.loaded.Add(1)
	if out.wroteBody || out.changed {
		im.changed.Add(1)
	}
	return nil
}

// prepare fills j from its row, in tx (or in a read-only transaction of
// its own if tx is nil), and says why the record must be skipped, if it
// must. In tx, it gives a page new to the table its crawl:depth.
func (im *Importer) prepare(ctx context.Context, j *job, at time.Time, tx *percolator.Tx) (string, error) {
	var skip string
	look := func(tx *percolator.Tx) error {
		skip = ""
		cols, err := crawlColumns(ctx, tx, j.row)
		if err != nil {
			return err
		}
		if l, ok := cols[webtable.Lease]; ok && im.c.leaseLive(l, time.Now()) {
			skip = "page being fetched by a crawler"
			return nil
		}
		var status, fetched []byte
		if _, ok := cols[webtable.Interval]; ok {
			if status, err = tx.Get(ctx, j.row, webtable.Status); err != nil {
				return err
			}
			if fetched, err = tx.Get(ctx, j.row, webtable.FetchedAt); err != nil {
				return err
			}
		}
		if fetched != nil && atoi(fetched) >= at.UnixMilli() {
			skip = "the table has this fetch or a later one"
			return nil
		}
		j.fromRow(cols, status)
		if j.res.status == http.StatusNotModified && !j.fetched {
			skip = "revisit of a page not in the table"
			return nil
		}
		j.dueKey = ""
		if due, ok := cols[webtable.Due]; ok {
			j.dueKey = webtable.SpreadDueRow(im.c.spread, atoi(due), j.row)
		}
		if _, ok := cols[webtable.Depth]; !ok && tx != nil {
			tx.Set(j.row, webtable.Depth, itoa(0))
		}
		return nil
	}
	if tx != nil {
		return skip, look(tx)
	}
	err := im.c.db.View(ctx, look)
	return skip, err
}

// addSeed remembers pageURL as a seed when the table has no seed on its
// host, and widens the link scope to the host.
func (im *Importer) addSeed(ctx context.Context, pageURL, row string) error {
	host := hostPort(pageURL)
	err := im.c.db.Update(ctx, func(tx *percolator.Tx) error {
		return tx.Set(webtable.SeedPrefix+row, webtable.SeedURL, []byte(pageURL))
	})
	if err != nil {
		return fmt.Errorf("add seed: %w", err)
	}
	im.hosts[host] = true
	im.seeds = append(slices.Clip(im.seeds), pageURL)
	im.c.scope = newScope(ScopeHost, im.seeds)
	return nil
}

// Summary is a one-line account of s: records read, loaded, skipped with
// why, malformed.
func (s ImportStats) Summary() string {
	var skipped int64
	reasons := slices.Sorted(maps.Keys(s.Skipped))
	var why []string
	for _, r := range reasons {
		skipped += s.Skipped[r]
		why = append(why, fmt.Sprintf("%d %s", s.Skipped[r], r))
	}
	out := fmt.Sprintf("%d records read, %d loaded (%d new or changed), %d skipped", s.Records, s.Loaded, s.Changed, skipped)
	if len(why) > 0 {
		out += " (" + strings.Join(why, ", ") + ")"
	}
	out += fmt.Sprintf(", %d malformed", s.Malformed)
	if s.Unchecked > 0 {
		out += fmt.Sprintf(", %d with a digest not checked", s.Unchecked)
	}
	return out
}
