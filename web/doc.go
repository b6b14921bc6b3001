// Package web serves the search UI and the JSON API over a [Backend]: the
// server-rendered pages (search, document, top pages, status) and the
// endpoints under /api/ that the acceptance checks use.
//
// # Routes
//
//	GET /, /search?q=Q&start=S&n=N    search page (empty q: just the box)
//	GET /doc?url=U                    everything the table knows about U
//	GET /top, /top?host=H&n=N         top pages by PageRank, hosts by pages
//	GET /status                       progress, per-observer counts, charts
//	GET /api/search?q=Q&n=N&start=S   search results as JSON
//	GET /api/doc?url=U                feed.DocInfo as JSON
//	GET /api/top?host=H&n=N           serving.Top as JSON
//	GET /api/stats                    Stats as JSON
//	GET /metrics                      Options.Metrics, when set
//	GET /static/style.css             the one stylesheet
//
// HEAD works wherever GET does; other methods get 405, unknown paths 404.
// Under /api/ every error is JSON, {"error": "..."}; elsewhere it is a page.
//
// # Parameters and statuses
//
// q is trimmed and must be at most serving.MaxQueryLen bytes; the API
// rejects an empty q. n is 1..serving.MaxResults (default 10 for search, 25
// for top); start is 0..serving.MaxStart. Out-of-range or non-numeric
// values are rejected with 400 and a message saying what is allowed, never
// clamped, so a client learns about its mistake. Backend errors map as:
// serving.ErrBadQuery → 400 (with the reason), serving.ErrNotFound → 404,
// the Options.QueryTimeout deadline → 504, anything else → 500 with a
// generic message (the detail goes to Options.Logger).
//
// # Safety
//
// Everything that comes from crawled pages (titles, text, anchors, URLs) is
// escaped by html/template. Snippets are built from serving.Span values by
// escaping each span's text first and only then wrapping matches in <mark>.
// Only absolute http and https URLs of crawled pages become links; anything
// else (javascript:, data:, relative) is shown as text. The UI has no
// scripts at all, and the Content-Security-Policy header forbids them as a
// second line of defence. Charts on the status page are inline SVG drawn on
// the server.
//
// # Caveats
//
// The Backend must honour the context it is given: the query timeout is a
// context deadline, and a backend that ignores it holds the request.
package web
