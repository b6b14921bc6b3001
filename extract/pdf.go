package extract

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/caffeine-go/caffeine/webtable"
)

// Bounds of PDF extraction. A PDF is a program of sorts: object streams,
// filters and fonts can make a small file cost a lot, so extraction runs
// within these and a PDF past any of them is an error for that page.
const (
	// MaxPDFBytes is the largest PDF read; a larger body is ErrBadPDF
	// without being parsed.
	MaxPDFBytes = 64 << 20
	// MaxPDFPages is the largest page count read.
	MaxPDFPages = 5000
	// PDFTimeout is the time budget of one PDF.
	PDFTimeout = 60 * time.Second
)

// pdfRunning counts the extractions under way, those abandoned at their
// deadline and still winding down included; PDF refuses to start more
// than maxPDFRunning at once, so hostile files cannot pile up goroutines
// and memory.
var pdfRunning atomic.Int32

const maxPDFRunning = 8

// PDF extracts a PDF body: Title is the document information's Title, else
// the first line of text; Text the text of its pages in order (whitespace
// collapsed, pages separated by a space), Hash as for HTML; Links the
// http(s) URI link annotations of its pages, at most MaxLinks. It uses
// github.com/ledongthuc/pdf, a pure-Go reader.
//
// Extraction runs in its own goroutine, with a recover, within PDFTimeout
// and MaxPDFPages, on a body of at most MaxPDFBytes; past any of these, and
// for a malformed or encrypted file, it returns an error wrapping
// ErrBadPDF, and no partial Page. A run past its deadline stops at its next
// page; ErrBadPDF also answers while maxPDFRunning runs are under way.
func PDF(pageURL string, body []byte, opt Options) (Page, error) {
	self, err := webtable.Normalize(pageURL)
	if err != nil {
		return Page{}, fmt.Errorf("%w %q: %v", ErrBadURL, pageURL, err)
	}
	if len(body) > MaxPDFBytes {
		return Page{}, fmt.Errorf("%w: %d bytes, more than %d", ErrBadPDF, len(body), MaxPDFBytes)
	}
	if pdfRunning.Add(1) > maxPDFRunning {
		pdfRunning.Add(-1)
		return Page{}, fmt.Errorf("%w: %d extractions under way", ErrBadPDF, maxPDFRunning)
	}
	type result struct {
		p   Page
		err error
	}
	var stop atomic.Bool
	done := make(chan result, 1)
	body = bytes.Clone(body) // the caller may reuse body while an abandoned run reads it
	go func() {
		defer pdfRunning.Add(-1)
		var r result
		defer func() {
			if v := recover(); v != nil {
				r = result{err: fmt.Errorf("%w: panic: %v", ErrBadPDF, v)}
			}
			done <- r
		}()
		r.p, r.err = readPDF(self, body, opt, &stop)
	}()
	t := time.NewTimer(PDFTimeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.p, r.err
	case <-t.C:
		stop.Store(true)
		return Page{}, fmt.Errorf("%w: not read within %v", ErrBadPDF, PDFTimeout)
	}
}

var errPDFStopped = errors.New("stopped")

func readPDF(self string, body []byte, opt Options, stop *atomic.Bool) (Page, error) {
	rd, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return Page{}, fmt.Errorf("%w: %v", ErrBadPDF, err)
	}
	n := rd.NumPage()
	if n < 0 || n > MaxPDFPages {
		return Page{}, fmt.Errorf("%w: %d pages, more than %d", ErrBadPDF, n, MaxPDFPages)
	}
	limit := textLimit(opt)
	var text bytes.Buffer
	var raw []rawLink
	for i := 1; i <= n; i++ {
		if stop.Load() {
			return Page{}, errPDFStopped
		}
		pg := rd.Page(i)
		if pg.V.IsNull() {
			continue
		}
		raw = append(raw, pdfLinks(pg, len(raw))...)
		if limit > 0 && text.Len() > 2*limit {
			continue // the text is long enough; the hash misses the rest
		}
		// Fonts are per page: the library's whole-document reader caches
		// them by resource name, which pages may reuse for other fonts.
		pageText(&text, pg.Content().Text)
		text.WriteByte('\n')
	}
	title := rd.Trailer().Key("Info").Key("Title").Text()
	out, _ := decode(text.Bytes(), "text/plain; charset=utf-8")
	p := textPage(out, title, "utf-8", opt)
	if !p.NoFollow {
		r := resolver{memo: map[string]string{}}
		if base, err := url.Parse(self); err == nil {
			r.base = base
			p.Links = r.links(raw, self)
		}
	}
	return p, nil
}

// pdfLinks returns the http(s) URI actions of a page's link annotations,
// as many as fit in MaxLinks beside have already found.
func pdfLinks(pg pdf.Page, have int) []rawLink {
	annots := pg.V.Key("Annots")
	var out []rawLink
	for j := 0; j < annots.Len() && have+len(out) < MaxLinks; j++ {
		a := annots.Index(j)
		if a.Key("Subtype").Name() != "Link" {
			continue
		}
		act := a.Key("A")
		if act.Key("S").Name() != "URI" {
			continue
		}
		u := act.Key("URI").RawString()
		if l := strings.ToLower(u); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
			out = append(out, rawLink{href: u})
		}
	}
	return out
}

// pageText writes the text of a page's glyphs, in content order, to b: a
// newline where a glyph starts a new line, a space where it stands apart
// from the one before by more than a fifth of its font size (PDFs place
// words rather than write spaces between them).
func pageText(b *bytes.Buffer, glyphs []pdf.Text) {
	var prev pdf.Text
	for i, g := range glyphs {
		if i > 0 {
			size := max(g.FontSize, 1)
			switch gap := g.X - (prev.X + prev.W); {
			case abs(g.Y-prev.Y) > size/2:
				b.WriteByte('\n')
			case gap > size/5 || gap < -size:
				b.WriteByte(' ')
			}
		}
		// Glyphs without a Unicode mapping decode to U+FFFD; they are
		// mostly spaces and rules, and would make every word two.
		b.WriteString(strings.ReplaceAll(g.S, "\uFFFD", " "))
		prev = g
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
