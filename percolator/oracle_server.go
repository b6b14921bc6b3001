package percolator

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// OracleServer is the paper's timestamp oracle (section 2.3) as a server
// for many processes on one table: it hands out timestamps from memory,
// persisting a high-water mark in the table's oracle row before it hands
// out past it (the Oracle of an exclusive store), so a restarted server
// never repeats one or goes back. Clients (OracleClient) batch their
// callers into one request.
//
// Several servers may run on one table: one holds the table's lease (see
// lease.go) and serves, the others refuse requests and take the lease
// over when it lapses (the holder died) or is released (it stopped). A
// holder serves only until its lease may have lapsed, and a new holder
// reads the high-water mark after taking the lease, so timestamps increase
// across a fail-over too.
type OracleServer struct {
	st    Store
	opt   OracleServerOptions
	lease lease

	mu       sync.Mutex
	orc      *Oracle   // nil unless this server holds the lease
	deadline time.Time // when the lease may lapse: serve only before
	stopOrc  context.CancelFunc
	conns    map[net.Conn]bool
	ticks    sync.WaitGroup // the tick goroutines of orc and former ones
	crash    bool           // tests: stop as a killed process does, keeping the lease
}

// OracleServerOptions configure an OracleServer.
type OracleServerOptions struct {
	// ID names the server in the lease row; default host-pid-random.
	ID string
	// LeaseTTL is how long a lease lasts unrenewed: how long a fail-over
	// takes at most (plus ClockSkew). Default 3 s; renewed every TTL/4.
	LeaseTTL time.Duration
	// ClockSkew is the most two servers' clocks may differ. Default 500 ms.
	ClockSkew time.Duration
	// Window is how many timestamps one write of the high-water mark
	// reserves. Default 1<<20.
	Window uint64
	Logger *slog.Logger
}

// oracleMaxBatch is the most timestamps one request may ask for.
const oracleMaxBatch = 1 << 16

// errNotHolder is the server's answer while it does not hold the lease.
var errNotHolder = errors.New("not the oracle lease holder")

// NewOracleServer returns a server of the oracle of st.
func NewOracleServer(st Store, opt OracleServerOptions) (*OracleServer, error) {
	if opt.ID == "" {
		host, _ := os.Hostname()
		var r [4]byte
		rand.Read(r[:])
		opt.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
	}
	if !validID(opt.ID) {
		return nil, fmt.Errorf("%w: oracle server id %q", ErrInvalid, opt.ID)
	}
	if opt.LeaseTTL <= 0 {
		opt.LeaseTTL = 3 * time.Second
	}
	if opt.ClockSkew <= 0 {
		opt.ClockSkew = 500 * time.Millisecond
	}
	if opt.Window == 0 {
		opt.Window = 1 << 20
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &OracleServer{st: st, opt: opt, conns: make(map[net.Conn]bool),
		lease: lease{st: st, row: oracleLeaseRow, id: opt.ID, ttl: opt.LeaseTTL, skew: opt.ClockSkew}}, nil
}

// Serve answers clients on ln until ctx is done, then closes ln and every
// connection and releases the lease. It returns nil after ctx is done, or
// the error that stopped it.
func (s *OracleServer) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.st.EnsureFamilies(ctx, schema); err != nil {
		ln.Close()
		return fmt.Errorf("percolator: oracle server: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { s.lead(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	})
	var err error
	for {
		c, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("percolator: oracle server: %w", aerr)
			}
			break
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		wg.Go(func() {
			s.serveConn(ctx, c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		})
	}
	cancel()
	wg.Wait()
	s.ticks.Wait()
	return err
}

// Holding reports whether the server holds the lease (and serves).
func (s *OracleServer) Holding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orc != nil && time.Now().Before(s.deadline)
}

// lead takes the lease when it can and renews it every TTL/4 until ctx
// is done; then it releases it.
func (s *OracleServer) lead(ctx context.Context) {
	t := time.NewTicker(s.opt.LeaseTTL / 4)
	defer t.Stop()
	for {
		s.step(ctx)
		select {
		case <-ctx.Done():
			s.mu.Lock()
			held := s.orc != nil
			s.drop()
			s.mu.Unlock()
			if held && !s.crash {
				rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := s.lease.release(rctx); err != nil {
					s.opt.Logger.Warn("oracle server: release lease", "err", err)
				}
				cancel()
			}
			return
		case <-t.C:
		}
	}
}

// step takes or renews the lease once.
func (s *OracleServer) step(ctx context.Context) {
	s.mu.Lock()
	held := s.orc != nil
	s.mu.Unlock()
	if !held {
		deadline, ok, err := s.lease.acquire(ctx)
		if err != nil || !ok {
			if err != nil && ctx.Err() == nil {
				s.opt.Logger.Warn("oracle server: take lease", "err", err)
			}
			return
		}
		// The high-water mark is read after the lease is ours: every
		// timestamp a former holder handed out is below it.
		octx, stop := context.WithCancel(ctx)
		orc, err := newOracle(ctx, s.st, s.opt.Window, false)
		if err != nil {
			stop()
			s.opt.Logger.Warn("oracle server: open oracle", "err", err)
			return
		}
		s.ticks.Go(func() { orc.tick(octx) })
		s.mu.Lock()
		s.orc, s.deadline, s.stopOrc = orc, deadline, stop
		s.mu.Unlock()
		s.opt.Logger.Info("oracle server: holding the lease", "id", s.opt.ID)
		return
	}
	deadline, ok, err := s.lease.renew(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ok:
		s.deadline = deadline
	case err == nil || time.Now().After(s.deadline):
		s.drop()
		s.opt.Logger.Warn("oracle server: lost the lease", "id", s.opt.ID, "err", err)
	}
}

// drop stops serving. s.mu is held.
func (s *OracleServer) drop() {
	if s.stopOrc != nil {
		s.stopOrc()
	}
	s.orc, s.stopOrc, s.deadline = nil, nil, time.Time{}
}

// take returns n timestamps, or errNotHolder.
func (s *OracleServer) take(ctx context.Context, n int) ([]uint64, error) {
	s.mu.Lock()
	orc, deadline := s.orc, s.deadline
	s.mu.Unlock()
	if orc == nil || !time.Now().Before(deadline) {
		return nil, errNotHolder
	}
	out := make([]uint64, n)
	for i := range out {
		ts, err := orc.Next(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = ts
	}
	// Hand them out only while the lease is surely ours.
	s.mu.Lock()
	ok := s.orc == orc && time.Now().Before(s.deadline)
	s.mu.Unlock()
	if !ok {
		return nil, errNotHolder
	}
	return out, nil
}

// The protocol, one request at a time per connection: the client sends n
// (4 bytes, big-endian, 1 ≤ n ≤ oracleMaxBatch); the server answers 0 and
// n timestamps (8 bytes each, increasing), or 1, a length (2 bytes) and
// an error message.
func (s *OracleServer) serveConn(ctx context.Context, c net.Conn) {
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	var req [4]byte
	for {
		if _, err := io.ReadFull(r, req[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(req[:])
		var tss []uint64
		err := fmt.Errorf("batch of %d timestamps: want 1 to %d", n, oracleMaxBatch)
		if n >= 1 && n <= oracleMaxBatch {
			tss, err = s.take(ctx, int(n))
		}
		if err != nil {
			msg := err.Error()
			if len(msg) > 1000 {
				msg = msg[:1000]
			}
			w.WriteByte(1)
			binary.Write(w, binary.BigEndian, uint16(len(msg)))
			w.WriteString(msg)
		} else {
			w.WriteByte(0)
			var b [8]byte
			for _, ts := range tss {
				binary.BigEndian.PutUint64(b[:], ts)
				w.Write(b[:])
			}
		}
		if w.Flush() != nil {
			return
		}
	}
}
