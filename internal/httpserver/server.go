// Package httpserver builds the HTTP servers of the commands (the search
// UI and API, metrics, the sites that benchmarks crawl): a deadline on
// every phase of a connection and a cap on the connections open at once,
// so that idle or slow clients cannot take the file descriptors that the
// table, the index and the crawler need.
//
// # Connections
//
// A connection is served for at most Options.MaxConns at a time. Past the
// cap, a new connection waits in the listener until one closes, and if
// some are idle (kept alive between requests) the one idle the longest is
// closed to make room, as nginx reuses its keep-alive connections when it
// runs out. So a client always gets served while the connections it waits
// behind are idle, and a flood of idle ones holds MaxConns descriptors,
// not one each. Connections that send nothing are closed after
// ReadHeaderTimeout, idle ones after IdleTimeout.
//
// # Caveats
//
// Closing an idle connection races with a request that arrives on it at
// that moment, as http.Server.Shutdown's does: such a client sees the
// connection close before its response, and HTTP clients retry idempotent
// requests (every route of the UI is a GET) on a new one.
package httpserver

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 2 * time.Minute
	DefaultIdleTimeout       = time.Minute
	// DefaultMaxConns is well under the smallest usual limit of open
	// files (1024; Go raises the soft limit to the hard one at start),
	// which the table's and the index's files and the crawler's
	// connections share with the server.
	DefaultMaxConns = 256
)

// Options configures a Server. Zero values mean the defaults above; a
// negative duration means no deadline, a negative MaxConns no cap.
type Options struct {
	// ReadHeaderTimeout bounds reading a request's header, from the
	// connection's first byte or the end of its last response.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its header to the end
	// of its response.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection waits for its
	// next request.
	IdleTimeout time.Duration
	// MaxConns caps the connections open at once.
	MaxConns int
}

// EnsureDefaults sets the zero fields to their defaults.
func (o *Options) EnsureDefaults() {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&o.ReadHeaderTimeout, DefaultReadHeaderTimeout},
		{&o.ReadTimeout, DefaultReadTimeout},
		{&o.WriteTimeout, DefaultWriteTimeout},
		{&o.IdleTimeout, DefaultIdleTimeout},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
}

// Server is an http.Server with the deadlines and the connection cap of
// its Options. Its methods are safe for concurrent use.
type Server struct {
	srv *http.Server
	opt Options

	mu  sync.Mutex
	lns []*listener // guarded by mu: the capped listeners served
}

// New returns a server of h.
func New(h http.Handler, opt Options) *Server {
	opt.EnsureDefaults()
	s := &Server{opt: opt}
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: positive(opt.ReadHeaderTimeout),
		ReadTimeout:       positive(opt.ReadTimeout),
		WriteTimeout:      positive(opt.WriteTimeout),
		IdleTimeout:       positive(opt.IdleTimeout),
		ConnState:         connState,
	}
	if opt.IdleTimeout < 0 {
		// http.Server falls back to ReadTimeout for a zero IdleTimeout:
		// no deadline at all means both.
		s.srv.ReadTimeout = 0
	}
	return s
}

// positive maps "none" (negative) to http.Server's zero.
func positive(d time.Duration) time.Duration {
	return max(d, 0)
}

// Serve accepts connections on ln, at most Options.MaxConns open at once,
// until Shutdown or Close, and then returns http.ErrServerClosed. It
// closes ln.
func (s *Server) Serve(ln net.Listener) error {
	if s.opt.MaxConns > 0 {
		l := newListener(ln, s.opt.MaxConns)
		s.mu.Lock()
		s.lns = append(s.lns, l)
		s.mu.Unlock()
		ln = l
	}
	return s.srv.Serve(ln)
}

// ListenAndServe listens on the TCP address addr and serves it.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Shutdown stops accepting connections, closes the idle ones and waits
// for the active ones to finish or ctx to be done (http.Server.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error {
	return s.srv.Shutdown(ctx)
}

// Close closes the listeners and every connection at once.
func (s *Server) Close() error {
	return s.srv.Close()
}

// connState tells the listener which of its connections are idle.
func connState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*conn)
	if !ok {
		return
	}
	switch st {
	case http.StateActive:
		lc.l.active(lc)
	case http.StateIdle:
		lc.l.idle(lc)
	case http.StateClosed, http.StateHijacked:
		lc.l.gone(lc)
	}
}
