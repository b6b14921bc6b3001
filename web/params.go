package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/caffeine-go/caffeine/serving"
	"golang.org/x/text/language"
)

// Defaults and limits of query parameters.
const (
	defaultN    = 10   // search results per page
	defaultTopN = 25   // pages in the top lists
	maxURLLen   = 8192 // bytes of the url parameter of /doc
	maxHostLen  = 253  // bytes of a DNS name
)

// intParam reads an optional integer parameter in [lo, hi]; def when absent
// or empty. Bad values are errors, not clamped: the client should know.
func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest("%s must be an integer from %d to %d, not %q", name, lo, hi, clip(v, 20))
	}
	if n < lo || n > hi {
		return 0, badRequest("%s must be from %d to %d, not %d", name, lo, hi, n)
	}
	return n, nil
}

// queryParams reads q, n, start and verbatim (1: no automatic spelling
// correction). An empty q is not an error here: the
// page shows the box, the API rejects it.
func queryParams(r *http.Request) (serving.Query, error) {
	q := serving.Query{Q: strings.TrimSpace(r.URL.Query().Get("q"))}
	if len(q.Q) > serving.MaxQueryLen {
		return q, badRequest("the query is too long: %d bytes, at most %d are allowed", len(q.Q), serving.MaxQueryLen)
	}
	var err error
	if q.N, err = intParam(r, "n", defaultN, 1, serving.MaxResults); err != nil {
		return q, err
	}
	if q.Start, err = intParam(r, "start", 0, 0, serving.MaxStart); err != nil {
		return q, err
	}
	v, err := intParam(r, "verbatim", 0, 0, 1)
	if err != nil {
		return q, err
	}
	q.Verbatim = v == 1
	q.Langs = acceptLanguages(r.Header.Get("Accept-Language"))
	return q, nil
}

// acceptLanguages returns the languages of an Accept-Language header,
// best first; none for a header that does not parse (it only orders
// results, so a bad one is no error).
func acceptLanguages(h string) []string {
	if h == "" || len(h) > 512 {
		return nil
	}
	tags, _, err := language.ParseAcceptLanguage(h)
	if err != nil {
		return nil
	}
	langs := make([]string, 0, len(tags))
	for _, t := range tags {
		langs = append(langs, t.String())
	}
	return langs
}

// urlParam reads the url parameter of /doc.
func urlParam(r *http.Request) (string, error) {
	u := strings.TrimSpace(r.URL.Query().Get("url"))
	switch {
	case u == "":
		return "", badRequest("the url parameter is missing: ask for /doc?url=https://example.com/")
	case len(u) > maxURLLen:
		return "", badRequest("the url is too long: %d bytes, at most %d are allowed", len(u), maxURLLen)
	}
	return u, nil
}

// topParams reads host and n of /top.
func topParams(r *http.Request) (host string, n int, err error) {
	host = strings.TrimSpace(r.URL.Query().Get("host"))
	if len(host) > maxHostLen {
		return "", 0, badRequest("the host is too long: %d bytes, at most %d are allowed", len(host), maxHostLen)
	}
	n, err = intParam(r, "n", defaultTopN, 1, serving.MaxResults)
	return host, n, err
}
