package httpserver

import (
	"net"
	"sync"
	"time"
)

// listener caps the connections of the listener it wraps: Accept waits
// for one to close when max are open, and closes the connection idle the
// longest meanwhile. Idle connections are ordered by when their last
// request began, which follows the order clients sent them in, where the
// moment the server sees a connection go idle may not.
type listener struct {
	net.Listener
	slots chan struct{} // a token per open connection
	idled chan struct{} // a connection went idle (buffered, one)
	done  chan struct{} // closed by Close
	once  sync.Once

	mu    sync.Mutex
	idles map[*conn]time.Time // guarded by mu: idle connections, by when their last request began
}

func newListener(ln net.Listener, max int) *listener {
	return &listener{
		Listener: ln,
		slots:    make(chan struct{}, max),
		idled:    make(chan struct{}, 1),
		done:     make(chan struct{}),
		idles:    make(map[*conn]time.Time),
	}
}

// Accept waits for a connection, then for a free slot: the connection
// waiting holds one descriptor more than the cap.
func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.slots <- struct{}{}:
			return &conn{Conn: c, l: l}, nil
		default:
		}
		l.closeIdlest()
		select {
		case l.slots <- struct{}{}:
			return &conn{Conn: c, l: l}, nil
		case <-l.idled:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// Close closes the listener and ends a wait in Accept.
func (l *listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Conns is the number of connections open.
func (l *listener) Conns() int {
	return len(l.slots)
}

// closeIdlest closes the idle connection whose last request is the
// oldest, if any.
func (l *listener) closeIdlest() {
	l.mu.Lock()
	var (
		oldest *conn
		since  time.Time
	)
	for c, t := range l.idles {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idles, oldest)
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// active notes that a request begins on c.
func (l *listener) active(c *conn) {
	l.mu.Lock()
	delete(l.idles, c)
	c.began = time.Now()
	l.mu.Unlock()
}

// idle notes that c waits for its next request.
func (l *listener) idle(c *conn) {
	l.mu.Lock()
	l.idles[c] = c.began
	l.mu.Unlock()
	select {
	case l.idled <- struct{}{}:
	default:
	}
}

// gone notes that c is closed or hijacked.
func (l *listener) gone(c *conn) {
	l.mu.Lock()
	delete(l.idles, c)
	l.mu.Unlock()
}

// conn gives its slot back when closed.
type conn struct {
	net.Conn
	l     *listener
	once  sync.Once
	began time.Time // guarded by l.mu: when the last request began
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.gone(c)
		<-c.l.slots
	})
	return err
}
