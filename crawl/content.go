package crawl

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/caffeine-go/caffeine/extract"
)

// emptyTextSum is the text sum of an HTML page without visible text: the
// SHA-256 of "", as extract.Page.Hash would be if it were not left empty.
var emptyTextSum = func() string { s := sha256.Sum256(nil); return hex.EncodeToString(s[:]) }()

// extract reads a 2xx response's body with package extract, exactly as the
// parse observer reads it back from the table: the raw bytes (r.body is
// what fetch:body stores), the Content-Type (fetch:type) and the first
// X-Robots-Tag (the one fetch:headers keeps). So the links the crawler
// follows are the links the chain records, and both honour the same
// robots rules. A body that is not HTML leaves r as it is.
//
// The text sum is extract's content hash: the SHA-256 of the visible text,
// lower-cased, whitespace collapsed, words separated at block elements.
// Markup, attribute, comment, script, whitespace and letter-case changes
// are thus not "changes" for the revisit schedule.
func (r *result) extract(pageURL string) {
	ct := r.header.Get("Content-Type")
	if !extract.IsHTML(ct, r.body) {
		return
	}
	// A share of the memory budget is held until extracted (a large
	// body holds one since its fetch). A goroutine holds one share at
	// most and none waits for one while holding another, so waiting with
	// no deadline cannot deadlock.
	if r.release == nil {
		r.hold(int64(len(r.body)))
		defer r.done()
	}
	p, err := extract.HTML(pageURL, r.body, ct, extract.Options{
		XRobotsTag:   r.header.Get("X-Robots-Tag"),
		MaxTextBytes: crawlerTextBytes,
	})
	if err != nil {
		return // an unusable page URL: the frontier holds none
	}
	r.html = true
	r.links = p.Links // none when NoFollow; NoIndex pages are followed
	r.textSum = p.Hash
	if r.textSum == "" {
		r.textSum = emptyTextSum
	}
}

// crawlerTextBytes caps the text extract keeps for the crawler, which
// reads only the hash (computed over all the text whatever the cap) and
// the links: a small cap spares building the text.
const crawlerTextBytes = 64
