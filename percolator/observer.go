package percolator

import (
	"context"
	"slices"
	"time"
)

// Observer is code run in its own transaction after Column changes in some
// row (section 2.4). At most one run commits per change of the column, and
// many changes before a run collapse into one run.
type Observer struct {
	// Name identifies the observer; it names the ack column that records its
	// last run on each row. Keep it stable across releases.
	Name string
	// Column is the observed column. It must be in Options.Observed (or
	// Options.Weak for a weakly notified column).
	Column string
	// Run does the work in tx, which the worker commits. An error or panic
	// rolls it back and the worker retries it with backoff; after
	// WorkerOptions.MaxFailures it is parked (DB.Failed).
	Run func(ctx context.Context, tx *Tx, row, col string) error
	// Background marks work that may wait: a row whose notifications are
	// all for background observers is found by a scanner of its own and
	// runs on the worker's background goroutines (WorkerOptions.Background);
	// the other scanners step over it, and its commits do not wake them.
	// So a backlog of background work (documents whose only change is
	// their PageRank, say) never holds up the notifications behind it.
	// The column should be weak.
	Background bool
	// Delay lets a row's notifications for this observer gather before it
	// runs: the row runs once its newest notification is Delay old, or its
	// oldest is MaxDelay old, whichever comes first. A page whose inbound
	// links or PageRank move many times during a bulk crawl then runs once
	// or twice, not once a move, and what it derives is at most MaxDelay
	// (plus the backlog) behind the table. Pending delayed notifications
	// still count as pending (WaitIdle and -until-idle wait for them). Zero
	// runs a notification as soon as a scanner finds it.
	//
	// A background observer with a Delay also yields to the foreground:
	// while the worker's foreground has a backlog (more tasks waiting
	// than goroutines to run them, now or less than a second ago), its
	// rows wait until their oldest notification is MaxDelay old. In a
	// bulk load the foreground's backlog lasts minutes and PageRank and
	// anchor waves reach a page many times while it drains; held, the
	// page runs once when the backlog is done (or every MaxDelay while it
	// lasts), not once a wave.
	Delay time.Duration
	// MaxDelay bounds Delay's wait for a row notified again and again, and
	// a background observer's wait for the foreground; default 10 × Delay.
	MaxDelay time.Duration
	// Covers lists weak columns whose observers do nothing a run of this
	// one on the same row does not (the same recomputation from the
	// table, say): once a run of this observer has committed, or wrote
	// nothing, the notifications of those columns that its task saw on
	// the row, older than its start timestamp, are deleted: the run saw
	// what their writers wrote. A document's export answers the
	// notifications waiting for its anchors that way.
	Covers []string
	// Pace spaces a row's runs of this foreground observer: after a run
	// that took d, the row's next run of it waits until Pace × d (at
	// most maxPaceWait) after that run ended, and what was notified
	// meanwhile gathers into that run. A row that costs much to run and
	// is notified again and again (a rank block while its section is
	// crawled: a notification a page) then takes at most 1/(Pace + 1)
	// of a goroutine, not one run a notification back to back. A row
	// that has not run lately runs at once. Zero does not space runs.
	Pace int
}

// maxPaceWait bounds Observer.Pace's wait, against a run slowed by a
// loaded machine spacing its row for long.
const maxPaceWait = time.Second

// readyAt returns when a notification with these notify versions may run:
// Delay after the newest, or MaxDelay after the oldest if that is sooner
// or if held (a background observer yielding to the foreground).
func (o *Observer) readyAt(versions []uint64, held bool) time.Time {
	if o.Delay <= 0 || len(versions) == 0 {
		return time.Time{}
	}
	newest, oldest := slices.Max(versions), slices.Min(versions)
	quiet := TimeFromTs(newest).Add(o.Delay)
	bound := TimeFromTs(oldest).Add(o.MaxDelay)
	if held || bound.Before(quiet) {
		return bound
	}
	return quiet
}
