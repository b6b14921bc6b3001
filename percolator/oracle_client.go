package percolator

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// OracleClient takes timestamps from the oracle servers at addrs (see
// OracleServer), a TimestampSource. Callers are batched as in the paper:
// one request is in flight, and the callers that arrive meanwhile share
// the next one. A request the server it was sent to cannot answer (it
// died, or does not hold the lease) goes to the next address, round the
// list, until one answers or sharedTimeout passes.
//
// An OracleClient is safe for concurrent use.
type OracleClient struct {
	addrs []string

	mu     sync.Mutex
	open   *remoteBatch // callers waiting for the next request
	flying bool
	closed bool
	wg     sync.WaitGroup

	// Owned by the flushing goroutine (one at a time).
	conn net.Conn
	r    *bufio.Reader
	cur  int // index in addrs of conn, or of the next to dial
}

// remoteBatch is the callers that share one request; caller i gets ts[i].
type remoteBatch struct {
	n    int
	ts   []uint64
	err  error
	done chan struct{}
}

var _ TimestampSource = (*OracleClient)(nil)

// errOracleClientClosed is returned by Next after Close.
var errOracleClientClosed = errors.New("percolator: oracle client closed")

// NewOracleClient returns a client of the servers at addrs (host:port).
// It connects when first asked.
func NewOracleClient(addrs []string) (*OracleClient, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no oracle server address", ErrInvalid)
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("%w: oracle server address %q: %v", ErrInvalid, a, err)
		}
	}
	return &OracleClient{addrs: addrs}, nil
}

// Next implements TimestampSource.
func (c *OracleClient) Next(ctx context.Context) (uint64, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, errOracleClientClosed
	}
	b := c.open
	if b == nil {
		b = &remoteBatch{done: make(chan struct{})}
		c.open = b
	}
	i := b.n
	b.n++
	if !c.flying {
		c.flying = true
		c.wg.Go(c.flush)
	}
	c.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.ts[i], nil
}

// flush sends one request per batch until no caller waits.
func (c *OracleClient) flush() {
	for {
		c.mu.Lock()
		b := c.open
		c.open = nil
		if b == nil {
			c.flying = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		for len(b.ts) < b.n && b.err == nil {
			var ts []uint64
			ts, b.err = c.request(min(b.n-len(b.ts), oracleMaxBatch))
			b.ts = append(b.ts, ts...)
		}
		close(b.done)
	}
}

// request asks for n timestamps, trying the servers in turn.
func (c *OracleClient) request(n int) ([]uint64, error) {
	deadline := time.Now().Add(sharedTimeout)
	var errs []error
	for tries := 0; ; tries++ {
		ts, err := c.ask(n, deadline)
		if err == nil {
			return ts, nil
		}
		if c.conn != nil {
			c.conn.Close()
			c.conn = nil
		}
		c.cur = (c.cur + 1) % len(c.addrs)
		if len(errs) < len(c.addrs) {
			errs = append(errs, err)
		}
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed || time.Now().After(deadline) {
			return nil, fmt.Errorf("percolator: oracle: %w", errors.Join(errs...))
		}
		if tries%len(c.addrs) == len(c.addrs)-1 {
			time.Sleep(50 * time.Millisecond) // none answered: wait for a fail-over
		}
	}
}

// ask sends one request to the current server.
func (c *OracleClient) ask(n int, deadline time.Time) ([]uint64, error) {
	addr := c.addrs[c.cur]
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return nil, err
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	if d := time.Now().Add(10 * time.Second); d.Before(deadline) {
		deadline = d
	}
	c.conn.SetDeadline(deadline)
	var req [4]byte
	binary.BigEndian.PutUint32(req[:], uint32(n))
	if _, err := c.conn.Write(req[:]); err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	status, err := c.r.ReadByte()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	if status != 0 {
		var l uint16
		if err := binary.Read(c.r, binary.BigEndian, &l); err != nil {
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
		msg := make([]byte, l)
		if _, err := io.ReadFull(c.r, msg); err != nil {
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
		return nil, fmt.Errorf("%s: %s", addr, msg)
	}
	buf := make([]byte, 8*n)
	if _, err := io.ReadFull(c.r, buf); err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	ts := make([]uint64, n)
	for i := range ts {
		ts[i] = binary.BigEndian.Uint64(buf[8*i:])
	}
	return ts, nil
}

// Close fails the callers of Next from now on, waits for the request in
// flight and closes the connection.
func (c *OracleClient) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	return nil
}
