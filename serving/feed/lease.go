package feed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// lease is a feeder's hold on the lease row of its index
// (webtable.FeederLeaseRow): plain store cells changed with
// CheckAndMutateRow. A holding is one column, new for every acquisition,
// whose cell timestamp is the wall-clock expiry; a live holding is one
// whose expiry is not past by the reader's clock.
//
// Acquiring deletes every holding it saw expired, in the same mutation that
// writes its own and only if no live holding exists then; renewing rewrites
// the holder's own column only if it is still there and live. So a holder
// whose lease expired and was taken over can never renew it.
//
// The clock assumption: the wall clocks of the processes sharing a table
// differ by less than skew. A holder treats its lease as ending skew before
// the expiry it wrote, counted on its monotonic clock from before the write
// was sent, so it stops applying before any other process can see the lease
// expired. The fencing cell (webtable.FedBy) keeps the table right should
// the assumption fail: a late batch of a holder that lost its lease aborts.
//
// A lease is used by one goroutine at a time, except held, which is safe
// for concurrent use.
type lease struct {
	st   percolator.Store
	row  string
	ttl  time.Duration
	skew time.Duration
	who  string // the value of our holding: "host pid"

	ready bool   // the lease family exists
	col   string // our holding's column while we hold or try to; new per acquisition
	last  uint64 // the expiry of our newest write, to keep our cells in order

	mu     sync.Mutex // guards the fields below
	until  time.Time  // when we stop applying (monotonic); zero when not held
	holder string     // who holds the lease when we do not ("" if nobody)
}

func newLease(st percolator.Store, name string, ttl, skew time.Duration) *lease {
	host, _ := os.Hostname()
	return &lease{st: st, row: webtable.FeederLeaseRow(name), ttl: ttl, skew: skew, who: fmt.Sprintf("%s %d", host, os.Getpid())}
}

// held reports whether we hold the lease and may apply, and until when.
func (l *lease) held() (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until, !l.until.IsZero() && time.Now().Before(l.until)
}

// other returns who holds the lease when we do not.
func (l *lease) other() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holder
}

// id returns the holder id of our holding (valid once acquire succeeded).
func (l *lease) id() string { return strings.TrimPrefix(l.col, webtable.LeaseHolderPrefix) }

// acquire takes the lease if nobody holds it, and reports whether it did.
func (l *lease) acquire(ctx context.Context) (bool, error) {
	if !l.ready {
		if err := l.st.EnsureFamilies(ctx, []percolator.Family{{Name: webtable.LeaseFamily}}); err != nil {
			return false, fmt.Errorf("serving: create the lease family: %w", err)
		}
		l.ready = true
	}
	cells, err := l.st.ReadRow(ctx, l.row, percolator.Filter{Family: webtable.LeaseFamily, ColumnPrefix: webtable.LeaseHolderPrefix, Latest: true})
	if err != nil {
		return false, fmt.Errorf("serving: read feeder lease: %w", err)
	}
	start := time.Now()
	now := percolator.TsFromTime(start)
	var stale []percolator.Mutation
	for _, c := range cells {
		if c.Ts >= now {
			l.setHolder(string(c.Value))
			return false, nil
		}
		stale = append(stale, percolator.Mutation{Op: percolator.DeleteOlder, Family: webtable.LeaseFamily, Column: c.Column, Ts: percolator.MaxTs})
	}
	var id [8]byte
	rand.Read(id[:])
	l.col, l.last = webtable.LeaseHolderPrefix+hex.EncodeToString(id[:]), 0
	exp := l.expiry(start)
	live := percolator.Filter{Family: webtable.LeaseFamily, ColumnPrefix: webtable.LeaseHolderPrefix, MinTs: now, KeysOnly: true}
	take := append(stale, percolator.Mutation{Op: percolator.SetCell, Family: webtable.LeaseFamily, Column: l.col, Ts: exp, Value: []byte(l.who)})
	matched, err := l.st.CheckAndMutateRow(ctx, l.row, []percolator.Filter{live}, nil, take)
	if err != nil {
		// Perhaps written: our holding then blocks everyone, us too (the
		// next acquisition has a new column), until it expires.
		return false, fmt.Errorf("serving: take feeder lease: %w", err)
	}
	if matched {
		return false, nil
	}
	l.set(start)
	return true, nil
}

// renew extends the lease we hold, and reports whether we still hold it.
// An error leaves our deadline as it was: we stop applying when it passes.
func (l *lease) renew(ctx context.Context) (bool, error) {
	start := time.Now()
	exp := l.expiry(start)
	mine := percolator.Filter{Family: webtable.LeaseFamily, Column: l.col, MinTs: percolator.TsFromTime(start), KeysOnly: true}
	matched, err := l.st.CheckAndMutateRow(ctx, l.row, []percolator.Filter{mine}, []percolator.Mutation{
		{Op: percolator.SetCell, Family: webtable.LeaseFamily, Column: l.col, Ts: exp, Value: []byte(l.who)},
		{Op: percolator.DeleteOlder, Family: webtable.LeaseFamily, Column: l.col, Ts: exp},
	}, nil)
	if err != nil {
		return false, fmt.Errorf("serving: renew feeder lease: %w", err)
	}
	if !matched {
		l.drop()
		return false, nil
	}
	l.set(start)
	return true, nil
}

// release gives the lease up, so that a standby takes over at once. We
// must have stopped applying.
func (l *lease) release(ctx context.Context) error {
	l.drop()
	_, err := l.st.CheckAndMutateRow(ctx, l.row, []percolator.Filter{{Family: webtable.LeaseFamily, Column: l.col, KeysOnly: true}},
		[]percolator.Mutation{{Op: percolator.DeleteOlder, Family: webtable.LeaseFamily, Column: l.col, Ts: percolator.MaxTs}}, nil)
	if err != nil {
		return fmt.Errorf("serving: release feeder lease: %w", err)
	}
	return nil
}

// expiry returns the expiry of a write sent after start, after our
// previous one (a wall clock stepping back does not reorder our cells).
func (l *lease) expiry(start time.Time) uint64 {
	l.last = max(percolator.TsFromTime(start.Add(l.ttl)), l.last+1)
	return l.last
}

// set records that a write sent after start succeeded: we may apply until
// skew before it expires.
func (l *lease) set(start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until, l.holder = start.Add(l.ttl-l.skew), ""
}

func (l *lease) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until = time.Time{}
}

func (l *lease) setHolder(who string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until, l.holder = time.Time{}, who
}
