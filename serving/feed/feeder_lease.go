package feed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// FeederState is what a Feeder does.
type FeederState int32

const (
	FeederStopped FeederState = iota // not running
	FeederFeeding                    // applies the export queue to its index
	FeederStandby                    // waits for the lease another process holds
)

func (s FeederState) String() string {
	switch s {
	case FeederFeeding:
		return "feeding"
	case FeederStandby:
		return "standby"
	}
	return "stopped"
}

// State returns what the feeder does now. It is safe for concurrent use.
func (f *Feeder) State() FeederState { return FeederState(f.state.Load()) }

// Name returns the name of the index the feeder feeds.
func (f *Feeder) Name() string { return f.opt.Name }

// Holder returns who feeds the index while the feeder stands by: "host
// pid" of the lease's holder, "" when nobody does or the feeder feeds. It
// is safe for concurrent use.
func (f *Feeder) Holder() string {
	if f.lease == nil || f.State() != FeederStandby {
		return ""
	}
	return f.lease.other()
}

var (
	errLeaseLost = errors.New("serving: feeder lease lost")
	errFenced    = errors.New("serving: another feeder took over the index")
)

// standby waits until the feeder holds its lease, and returns nil then,
// or ctx's error.
func (f *Feeder) standby(ctx context.Context) error {
	for {
		ok, err := f.lease.acquire(ctx)
		if ok {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			f.opt.Logger.Warn("serving: feeder lease", "index", f.opt.Name, "err", err)
		}
		look := f.opt.Lease / 4
		if err := ctxsleep.Sleep(ctx, look/2+rand.N(look/2+1)); err != nil {
			return err
		}
	}
}

// hold takes the feed over and applies the queue while the feeder holds
// its lease, renewing it; it releases the lease when it returns. It
// returns why it stopped: ctx's end, or the lease lost.
func (f *Feeder) hold(ctx context.Context) error {
	ctx, lost := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() {
		lost(nil)
		wg.Wait()
		f.holder = ""
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := f.lease.release(rctx); err != nil {
			f.opt.Logger.Warn("serving: feeder lease", "index", f.opt.Name, "err", err)
		}
	}()
	wg.Go(func() { f.renew(ctx, lost) })
	if err := f.takeOver(ctx); err != nil {
		return err
	}
	if err := f.feed(ctx); err != nil {
		return err
	}
	return context.Cause(ctx)
}

// renew renews the lease every Lease/5 until ctx is done, and calls lost
// when it is lost or lapses unrenewed.
func (f *Feeder) renew(ctx context.Context, lost context.CancelCauseFunc) {
	every := f.opt.Lease / 5
	for {
		until, ok := f.lease.held()
		if !ok {
			lost(errLeaseLost)
			return
		}
		t := time.NewTimer(min(every, time.Until(until)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if _, ok := f.lease.held(); !ok {
			continue
		}
		rctx, cancel := context.WithDeadline(ctx, until)
		ok, err := f.lease.renew(rctx)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			f.opt.Logger.Warn("serving: feeder lease", "index", f.opt.Name, "err", err)
		case err == nil && !ok:
			lost(errLeaseLost)
			return
		}
	}
}

// takeOver makes the feeder the index's: it writes its fencing id, after
// which no batch of an earlier holder commits (fence), and then catches
// the index up with what the table says it has.
func (f *Feeder) takeOver(ctx context.Context) error {
	id := f.lease.id()
	var (
		prev string
		reg  registration
	)
	err := f.db.Update(ctx, func(tx *percolator.Tx) error {
		v, err := tx.Get(ctx, webtable.FeederRow(f.opt.Name), webtable.FedBy)
		prev = string(v)
		if err != nil {
			return err
		}
		// The registry as of the takeover: a predecessor may have
		// finished the backfill.
		if reg, err = readRegistration(ctx, tx, f.q.Name); err != nil {
			return err
		}
		return tx.Set(webtable.FeederRow(f.opt.Name), webtable.FedBy, []byte(id))
	})
	if err != nil {
		return fmt.Errorf("serving: take the feed over: %w", err)
	}
	f.holder = id
	f.setRegistration(reg)
	// What the predecessor read and applied is gone from the queue: look
	// at all of it again.
	f.cursor = 0
	f.floor.Store(0)
	// Nobody fed the index since this copy did (a restart): it is whole.
	if fed, err := f.ix.Internal(fedByKey); err != nil || prev == "" || string(fed) != prev {
		n, err := catchUp(ctx, f.db, f.ix, f.q.Served, f.opt.Batch)
		if err != nil {
			return err
		}
		f.opt.Logger.Info("serving: caught the index up with the table", "index", f.opt.Name, "documents", n)
	}
	if err := f.ix.SetInternal(fedByKey, []byte(id)); err != nil {
		return fmt.Errorf("serving: take the feed over: %w", err)
	}
	return nil
}

// fedByKey is the key of the Bleve index's internal value that holds the
// fencing id under which the feeder last fed it: if the fencing cell still
// holds it at the next takeover, nobody else fed the index meanwhile.
const fedByKey = "caffeine/fed-by"

// fence makes tx, which records a batch the feeder applied, fail with
// errFenced unless the feeder is still the index's: it reads the fencing
// cell and writes it again, so that tx conflicts with a takeover.
func (f *Feeder) fence(ctx context.Context, tx *percolator.Tx) error {
	if f.holder == "" {
		return nil
	}
	row := webtable.FeederRow(f.opt.Name)
	v, err := tx.Get(ctx, row, webtable.FedBy)
	if err != nil {
		return err
	}
	if string(v) != f.holder {
		return errFenced
	}
	return tx.Set(row, webtable.FedBy, v)
}
