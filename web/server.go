package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/serving/feed"
)

// Backend answers the UI's questions. engine.Engine implements it; tests
// use canned data. Every method must be safe for concurrent use, and the
// ones taking a context must return soon after it is done (the query
// timeout is a deadline on it). Returned values are only read.
type Backend interface {
	// Search runs a query; a query the index cannot parse is an error
	// wrapping serving.ErrBadQuery.
	Search(ctx context.Context, q serving.Query) (*serving.Results, error)
	// Doc describes a URL; serving.ErrNotFound when the table has no row
	// for it.
	Doc(ctx context.Context, url string) (*feed.DocInfo, error)
	// Top lists the n pages with the highest PageRank, of one host when
	// host is not empty, and the hosts by their number of indexed pages.
	Top(ctx context.Context, host string, n int) (*serving.Top, error)
	// Stats is the current status of the deployment.
	Stats(ctx context.Context) (*Stats, error)
	// History is the status time series, oldest first.
	History() []Sample
}

// Options configures the handler. The zero value is usable.
type Options struct {
	// Metrics is served at /metrics when not nil (a Prometheus handler).
	Metrics http.Handler
	// QueryTimeout bounds every backend call of a request. Zero means 5s;
	// negative means no limit.
	QueryTimeout time.Duration
	// Now is the clock for ages ("crawled 3 minutes ago"). Default time.Now.
	Now func() time.Time
	// Logger receives backend failures and panics (the details that the
	// client does not see). Default slog.Default().
	Logger *slog.Logger
}

const defaultQueryTimeout = 5 * time.Second

func (o *Options) ensureDefaults() {
	if o.QueryTimeout == 0 {
		o.QueryTimeout = defaultQueryTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Server is the UI and API handler. It is safe for concurrent use.
type Server struct {
	b      Backend
	opt    Options
	pages  pages
	routes map[string]handler

	homeCache homeCache
}

var _ http.Handler = (*Server)(nil)

// handler serves one route. It returns an error instead of writing one, so
// that error statuses and their rendering (page or JSON) live in one place.
type handler func(w http.ResponseWriter, r *http.Request) error

// New returns the handler serving b.
func New(b Backend, opt Options) *Server {
	opt.ensureDefaults()
	s := &Server{b: b, opt: opt}
	s.pages = parsePages(s.funcs())
	s.routes = map[string]handler{
		"/":                 s.searchPage,
		"/search":           s.searchPage,
		"/doc":              s.docPage,
		"/top":              s.topPage,
		"/status":           s.statusPage,
		"/api/search":       s.apiSearch,
		"/api/doc":          s.apiDoc,
		"/api/top":          s.apiTop,
		"/api/stats":        s.apiStats,
		"/static/style.css": serveStyle,
		openSearchPath:      s.openSearch,
	}
	return s
}

// securityHeaders apply to every response. The UI has no scripts, so the
// policy forbids them: a rendering bug that let markup from a crawled page
// through would still not run it.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; " +
		"form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"X-Frame-Options":        "DENY",
}

// ServeHTTP routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.recoverPanic(w, r)
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.fail(w, r, &httpError{http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed; use GET", r.Method)})
		return
	}
	if r.URL.Path == "/metrics" && s.opt.Metrics != nil {
		s.opt.Metrics.ServeHTTP(w, r)
		return
	}
	h, ok := s.routes[r.URL.Path]
	if !ok {
		s.fail(w, r, &httpError{http.StatusNotFound, "there is no page at " + r.URL.Path})
		return
	}
	if err := h(w, r); err != nil {
		s.fail(w, r, err)
	}
}

// recoverPanic turns a handler panic into a 500. The response is buffered
// until it is complete, so nothing has been written yet in practice.
func (s *Server) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	s.opt.Logger.Error("web: panic", "path", r.URL.Path, "query", r.URL.RawQuery, "panic", v, "stack", string(debug.Stack()))
	s.fail(w, r, &httpError{http.StatusInternalServerError, internalMessage})
}

// httpError is an error with the status and the message the client sees.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// errNilResult is a backend bug: no error and no value.
var errNilResult = errors.New("web: the backend returned neither a value nor an error")

const internalMessage = "internal error; the details are in the server log"

// backendError classifies an error of a backend call made with ctx (derived
// from the request's context by queryContext).
func (s *Server) backendError(ctx context.Context, r *http.Request, err error) error {
	switch {
	case errors.Is(err, serving.ErrBadQuery):
		return &httpError{http.StatusBadRequest, strings.TrimPrefix(err.Error(), "serving: ")}
	case errors.Is(err, serving.ErrNotFound):
		return &httpError{http.StatusNotFound, strings.TrimPrefix(err.Error(), "serving: ")}
	case r.Context().Err() != nil:
		// The client went away; nobody reads the answer.
		return &httpError{http.StatusServiceUnavailable, "request canceled"}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		took := time.Duration(0)
		if began, ok := ctx.Value(beganKey{}).(time.Time); ok {
			took = time.Since(began)
		}
		s.opt.Logger.Warn("web: request timed out", "path", r.URL.Path, "q", r.URL.Query().Get("q"),
			"query", r.URL.RawQuery, "duration", took, "timeout", s.opt.QueryTimeout)
		return &httpError{http.StatusGatewayTimeout, fmt.Sprintf(
			"the request took longer than %v and was stopped; try a more specific query", s.opt.QueryTimeout)}
	}
	s.opt.Logger.Error("web: backend failed", "path", r.URL.Path, "query", r.URL.RawQuery, "err", err)
	return &httpError{http.StatusInternalServerError, internalMessage}
}

// queryContext bounds the backend calls of one request. It records when
// they began, for the log of a timeout.
func (s *Server) queryContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx := context.WithValue(r.Context(), beganKey{}, time.Now())
	if s.opt.QueryTimeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opt.QueryTimeout)
}

// beganKey is the context key of the time a request's backend calls began.
type beganKey struct{}

// fail writes err as JSON under /api/ and as a page elsewhere.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	if !errors.As(err, &he) {
		s.opt.Logger.Error("web: handler failed", "path", r.URL.Path, "query", r.URL.RawQuery, "err", err)
		he = &httpError{http.StatusInternalServerError, internalMessage}
	}
	if isAPI(r) {
		writeJSON(w, he.status, struct {
			Error string `json:"error"`
		}{he.msg})
		return
	}
	s.renderError(w, r, he)
}

func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// writeJSON writes v with status. Marshalling happens before the header is
// written, so a failure is still a clean 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"internal error: cannot encode the response"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
