package crawl

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nlnwa/gowarc"
	"golang.org/x/sync/semaphore"
)

// The WARC writer (Options.WARCDir) archives every page fetch as a request
// and a response record, a 304 as a revisit record (profile
// server-not-modified), gzipped one record per member in files of about
// Options.WARCMaxSize with a warcinfo record first, as wget and Heritrix
// write them. Files are named caffeine-TIMESTAMP-SERIAL-PID-HOST.warc.gz,
// the timestamp in milliseconds, so that their names sort in the order
// they were written (the order to import them in), and carry an .open
// suffix until closed.
//
// The fetching workers hand what they fetched to one goroutine, which
// builds and writes the records, and wait until it has written them
// before the page is loaded, for warcQueueWait at most. The queue holds
// at most warcQueueBytes of bodies: a worker that finds it full waits (in
// the same warcQueueWait) for room, then drops the record
// (Stats.WARCDropped counts it, the log says so) and goes on, so a slow
// disk slows the crawl for a while but never stops it. Each record is
// written whole to the file as soon as it is built, so a crash leaves
// every earlier record readable and loses the ones being written: one a
// worker at most, unless the disk took longer than warcQueueWait and
// workers went on with their records still queued. Run drains the queue
// before it returns.
//
// The records are HTTP/1.1 messages rebuilt from what Go's transport
// gives: the request as sent (with the Accept-Encoding the transport
// adds) and the response's status line and headers as received, with
// the body as delivered: de-chunked, and gunzipped when the transport
// negotiated gzip (it then drops Content-Encoding, as the rebuilt header
// does), with a Content-Length that matches. HTTP/2 responses are written
// as HTTP/1.1. The raw bytes on the wire are not kept.

const (
	// warcQueueBytes bounds the bodies queued for the writer.
	warcQueueBytes = 64 << 20
	// warcQueueWait is how long a worker waits for room in a full queue
	// before it drops the record.
	warcQueueWait = 10 * time.Second
	// warcOverhead is what a queued record costs besides its body.
	warcOverhead = 1 << 10
)

// warcNames names WARC files (see the top of this file).
type warcNames struct {
	dir    string
	serial atomic.Int32
}

func (g *warcNames) NewWarcfileName() (string, string) {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	ts := strings.Replace(time.Now().UTC().Format("20060102150405.000"), ".", "", 1)
	return g.dir, fmt.Sprintf("caffeine-%s-%05d-%d-%s.warc", ts, g.serial.Add(1), os.Getpid(), host)
}

// exchange is one fetch to archive: the request sent and the response read.
type exchange struct {
	url       string
	at        time.Time
	request   []byte // an HTTP/1.1 request message
	head      []byte // the response's status line and headers
	body      []byte // shared with the loader: read only
	truncated bool
	revisit   bool // a 304: a revisit record
	cost      int64
	done      chan struct{} // closed once written (or failed)
}

// archive is the WARC writer of one Run.
type archive struct {
	w     *gowarc.WarcFileWriter
	log   *slog.Logger
	queue chan *exchange
	room  *semaphore.Weighted // queued bytes
	wait  time.Duration       // warcQueueWait; shorter in tests
	done  chan struct{}       // closed when the writing goroutine is done

	written, dropped *atomic.Int64 // the crawler's counters

	mu       sync.Mutex // guards firstErr
	firstErr error
}

func openArchive(dir string, maxSize int64, userAgent string, log *slog.Logger, written, dropped *atomic.Int64) (*archive, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("crawl: warc directory: %w", err)
	}
	info := fmt.Sprintf("software: caffeine-crawler\r\nformat: WARC File Format 1.1\r\n"+
		"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"+
		"http-header-user-agent: %s\r\nrobots: obey\r\n", userAgent)
	a := &archive{
		w: gowarc.NewWarcFileWriter(
			gowarc.WithFileNameGenerator(&warcNames{dir: dir}),
			gowarc.WithCompression(true),
			gowarc.WithMaxFileSize(maxSize),
			gowarc.WithAddWarcConcurrentToHeader(true),
			gowarc.WithWarcInfoFunc(func(rb gowarc.WarcRecordBuilder) error {
				_, err := rb.WriteString(info)
				return err
			}),
		),
		log:     log,
		written: written,
		dropped: dropped,
		queue:   make(chan *exchange, warcQueueBytes/warcOverhead),
		room:    semaphore.NewWeighted(warcQueueBytes),
		wait:    warcQueueWait,
		done:    make(chan struct{}),
	}
	go a.run()
	return a, nil
}

// add queues the fetch r of pageURL and waits until its records are
// written, up to warcQueueWait in all (room in the queue included). It is
// safe for concurrent use until close.
func (a *archive) add(pageURL string, r *result) {
	x := newExchange(pageURL, r)
	ctx, cancel := context.WithTimeout(context.Background(), a.wait)
	defer cancel()
	if err := a.room.Acquire(ctx, x.cost); err != nil {
		if a.dropped.Add(1) == 1 {
			a.log.Warn("warc: the writer is behind (slow disk?): records are dropped", "url", pageURL)
		}
		return
	}
	a.queue <- x
	select {
	case <-x.done:
	case <-ctx.Done(): // written later; a crash before then loses it
	}
}

// close writes what is queued, closes the files and returns the first
// write error. add must not be called after.
func (a *archive) close() error {
	close(a.queue)
	<-a.done
	if err := a.w.Rotate(); err != nil {
		a.fail(err)
	}
	a.w.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := a.dropped.Load(); n > 0 && a.firstErr != nil {
		return fmt.Errorf("crawl: warc: %d records not written: %w", n, a.firstErr)
	}
	return a.firstErr
}

func (a *archive) fail(err error) {
	a.mu.Lock()
	if a.firstErr == nil {
		a.firstErr = err
	}
	a.mu.Unlock()
}

func (a *archive) run() {
	defer close(a.done)
	for x := range a.queue {
		// The counters move before the waiting worker is released, so
		// what add's caller reads after it returns includes its record.
		if err := a.write(x); err != nil {
			if a.dropped.Add(1) == 1 {
				a.log.Error("warc: record not written", "url", x.url, "err", err)
			}
			a.fail(fmt.Errorf("%s: %w", x.url, err))
		} else {
			a.written.Add(2)
		}
		close(x.done)
		a.room.Release(x.cost)
	}
}

func (a *archive) write(x *exchange) error {
	date := x.at.UTC().Format("2006-01-02T15:04:05.000Z")
	build := func(t gowarc.RecordType, parts ...[]byte) (gowarc.WarcRecord, error) {
		rb := gowarc.NewRecordBuilder(t)
		rb.AddWarcHeader(gowarc.WarcTargetURI, x.url)
		rb.AddWarcHeader(gowarc.WarcDate, date)
		switch t {
		case gowarc.Request:
			rb.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=request")
		default:
			rb.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
		}
		if t == gowarc.Revisit {
			rb.AddWarcHeader(gowarc.WarcProfile, gowarc.ProfileServerNotModifiedV1_1)
			rb.AddWarcHeader(gowarc.WarcRefersToTargetURI, x.url)
		}
		if x.truncated && t == gowarc.Response {
			rb.AddWarcHeader(gowarc.WarcTruncated, "length")
		}
		for _, p := range parts {
			if _, err := rb.Write(p); err != nil {
				rb.Close()
				return nil, err
			}
		}
		rec, _, err := rb.Build()
		return rec, err
	}
	req, err := build(gowarc.Request, x.request)
	if err != nil {
		return err
	}
	var resp gowarc.WarcRecord
	if x.revisit {
		resp, err = build(gowarc.Revisit, x.head)
	} else {
		resp, err = build(gowarc.Response, x.head, x.body)
	}
	if err != nil {
		req.Close()
		return err
	}
	defer req.Close()
	defer resp.Close()
	for _, res := range a.w.Write(req, resp) {
		if res.Err != nil {
			return res.Err
		}
	}
	return nil
}

// newExchange rebuilds the HTTP/1.1 messages of fetch r (see the comment
// at the top of this file).
func newExchange(pageURL string, r *result) *exchange {
	resp := r.resp
	x := &exchange{url: pageURL, at: r.at, body: r.body, truncated: r.truncated, revisit: r.status == http.StatusNotModified, done: make(chan struct{})}
	var b bytes.Buffer
	if req := resp.Request; req != nil {
		h := req.Header.Clone()
		if h.Get("Accept-Encoding") == "" && h.Get("Range") == "" {
			h.Set("Accept-Encoding", "gzip") // as Go's transport adds it
		}
		host := req.Host
		if host == "" {
			host = req.URL.Host
		}
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), host)
		h.Write(&b)
		b.WriteString("\r\n")
		x.request = bytes.Clone(b.Bytes())
	}
	b.Reset()
	h := resp.Header.Clone()
	if !x.revisit && (resp.Uncompressed || len(resp.TransferEncoding) > 0 || resp.ContentLength < 0) {
		h.Set("Content-Length", strconv.Itoa(len(r.body)))
	}
	status := resp.Status
	if status == "" {
		status = strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	fmt.Fprintf(&b, "HTTP/1.1 %s\r\n", status)
	h.Write(&b)
	b.WriteString("\r\n")
	x.head = b.Bytes()
	if x.revisit {
		x.body = nil
	}
	x.cost = int64(len(x.body)+len(x.head)+len(x.request)) + warcOverhead
	x.cost = min(x.cost, warcQueueBytes)
	return x
}
