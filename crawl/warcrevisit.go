package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// A revisit record stands for a response whose payload the archive holds
// in another record. With the profile server-not-modified (a 304), it is
// loaded as a 304 of its page. Otherwise (identical-payload-digest, the
// deduplication Heritrix, browsertrix and warcio write) the importer looks
// for the payload it refers to, which may be another URL's
// (WARC-Refers-To-Target-URI), and loads the revisit's page with it, as a
// response with the revisit's own HTTP header:
//
//  1. a response or resource record read earlier by this Importer whose
//     payload has the revisit's WARC-Payload-Digest (maxPayloads of them
//     are remembered, by digest; the record is read again from its file);
//  2. else the page WARC-Refers-To-Target-URI names, in the table, when
//     its stored body was fetched at WARC-Refers-To-Date or has the
//     revisit's payload digest (a body stored whole).
//
// A revisit of its own URL whose payload is found nowhere is a 304 of its
// page, as before; one of another URL is skipped.

// maxPayloads bounds the payload digests an Importer remembers: about 50
// MB of memory.
const maxPayloads = 1 << 19

// recordLoc is where a record starts: a file and a byte offset.
type recordLoc struct {
	file string
	off  int64
}

// payloadIndex maps payload digests (warcDigest.key) to the record last
// read with that payload. Past max entries, the oldest is forgotten.
type payloadIndex struct {
	max   int
	locs  map[string]recordLoc
	order []string // keys in the order added: a ring of max
	next  int
}

func (p *payloadIndex) add(key string, loc recordLoc) {
	if p.locs == nil {
		p.locs = map[string]recordLoc{}
	}
	if _, ok := p.locs[key]; ok {
		p.locs[key] = loc
		return
	}
	if len(p.order) < p.max {
		p.order = append(p.order, key)
	} else {
		delete(p.locs, p.order[p.next])
		p.order[p.next] = key
		p.next = (p.next + 1) % p.max
	}
	p.locs[key] = loc
}

func (p *payloadIndex) get(key string) (recordLoc, bool) {
	loc, ok := p.locs[key]
	return loc, ok
}

// revisit makes the result to load for a revisit record of pageURL, whose
// block is b. ok is false when the record was skipped or counted
// malformed.
func (im *Importer) revisit(ctx context.Context, rec gowarc.WarcRecord, b *block, pageURL string) (res result, ok bool, err error) {
	h := rec.WarcHeader()
	var own *result // the revisit's HTTP header
	isHTTP := strings.HasPrefix(strings.ToLower(h.Get(gowarc.ContentType)), gowarc.ApplicationHttp)
	var ownErr error
	if isHTTP {
		var r result
		if r, ownErr = im.httpResult(b, true); ownErr == nil {
			own = &r
		}
	}
	if !strings.Contains(h.Get(gowarc.WarcProfile), "server-not-modified") {
		ref, found, err := im.referred(ctx, h)
		if err != nil || found {
			return withHeader(ref, own), found, err
		}
		if target := h.Get(gowarc.WarcRefersToTargetURI); target != "" {
			if u, err := webtable.Normalize(unbracket(target)); err == nil && u != pageURL {
				im.skip("revisit of another URL's payload not found")
				return result{}, false, nil
			}
		}
	}
	switch {
	case !isHTTP:
		im.skip("revisit record not of HTTP")
		return result{}, false, nil
	case own == nil:
		im.malformed.Add(1)
		im.c.log.Info("import: unreadable HTTP response", "url", pageURL, "err", ownErr)
		return result{}, false, nil
	}
	return result{status: http.StatusNotModified, header: own.header}, true, nil
}

// withHeader is the referred response ref as the revisit, whose own HTTP
// header is own (nil if none), answered: with the revisit's status and
// header when it is a 2xx, the Content-Type falling back to ref's.
func withHeader(ref result, own *result) result {
	if own == nil || own.status/100 != 2 {
		return ref
	}
	res := ref
	res.status = own.status
	res.header = own.header.Clone()
	// The body is ref's, decoded as Go's transport decodes it.
	res.header.Del("Content-Encoding")
	res.header.Del("Content-Length")
	if res.header.Get("Content-Type") == "" {
		res.header.Set("Content-Type", ref.header.Get("Content-Type"))
	}
	return res
}

// referred finds the payload the revisit with header h refers to: first a
// record read earlier, then the table. Only a store failure is an error.
func (im *Importer) referred(ctx context.Context, h *gowarc.WarcFields) (result, bool, error) {
	d, digestErr := parseDigest(h.Get(gowarc.WarcPayloadDigest))
	if digestErr == nil {
		if loc, ok := im.payloads.get(d.key()); ok {
			res, err := im.reread(loc, d.key())
			if err == nil {
				return res, true, nil
			}
			im.c.log.Debug("import: referred record not read again", "file", loc.file, "offset", loc.off, "err", err)
		}
	}
	target := h.Get(gowarc.WarcRefersToTargetURI)
	if target == "" {
		return result{}, false, nil
	}
	u, err := webtable.Normalize(unbracket(target))
	if err != nil {
		return result{}, false, nil
	}
	row, err := webtable.Row(u)
	if err != nil {
		return result{}, false, nil
	}
	var at int64 = -1
	if t, err := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcRefersToDate)); err == nil {
		at = t.UnixMilli()
	}
	var res result
	found := false
	err = im.c.db.View(ctx, func(tx *percolator.Tx) error {
		found = false
		cells := map[string][]byte{}
		for _, col := range []string{webtable.Status, webtable.FetchedAt, webtable.Body, webtable.Truncated, webtable.Type, webtable.Headers} {
			v, err := tx.Get(ctx, row, col)
			if err != nil {
				return err
			}
			cells[col] = v
		}
		status := int(atoi(cells[webtable.Status]))
		body := cells[webtable.Body]
		if status/100 != 2 || body == nil || cells[webtable.Truncated] != nil {
			return nil
		}
		if atoi(cells[webtable.FetchedAt]) != at {
			if digestErr != nil {
				return nil
			}
			sum := d.new()
			sum.Write(body)
			if string(sum.Sum(nil)) != string(d.sum) {
				return nil
			}
		}
		header := http.Header{}
		var kept map[string]string
		_ = json.Unmarshal(cells[webtable.Headers], &kept) // a damaged cell leaves the type alone
		for k, v := range kept {
			header.Set(k, v)
		}
		if ct := cells[webtable.Type]; ct != nil {
			header.Set("Content-Type", string(ct))
		}
		res = result{status: status, header: header, body: body}
		found = true
		return nil
	})
	return res, found, err
}

// reread reads the record at loc again and returns it as a result if its
// payload is still key.
func (im *Importer) reread(loc recordLoc, key string) (result, error) {
	f, err := os.Open(loc.file)
	if err != nil {
		return result{}, err
	}
	defer f.Close()
	r, err := gowarc.NewWarcFileReaderFromStream(f, loc.off, warcOptions...)
	if err != nil {
		return result{}, err
	}
	defer r.Close()
	rec, off, _, err := r.Next()
	if err != nil {
		return result{}, err
	}
	defer rec.Close()
	if off != loc.off {
		return result{}, errors.New("not a record start")
	}
	b, err := readBlock(rec, im.c.opt.MaxBodySize+1<<20)
	if err != nil {
		return result{}, err
	}
	if b.badDigest != "" || b.payload != key {
		return result{}, errors.New("another payload")
	}
	if rec.Type() == gowarc.Response {
		return im.httpResult(b, false)
	}
	res, _ := im.resourceResult(rec.WarcHeader().Get(gowarc.ContentType), b)
	return res, nil
}

// unbracket removes the angle brackets of a WARC/1.0 URI as wget writes
// it: <URI>.
func unbracket(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
}
