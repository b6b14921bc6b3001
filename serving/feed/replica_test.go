package feed

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// newReplicaCluster is newCluster with a short GC grace, so that the GC
// safe point passes a registration soon (gc).
func newReplicaCluster(t *testing.T) *cluster {
	t.Helper()
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt := leaseDBOptions
	opt.GCGrace = 10 * time.Millisecond
	return newClusterWith(t, percolatortest.Shared(st), opt)
}

// gc runs a GC pass on the writer's DB.
func (c *cluster) gc() {
	c.t.Helper()
	if _, err := c.writer.GC(bg); err != nil {
		c.t.Fatal(err)
	}
}

// waitLong is waitFor for the backfill, which waits for GC passes (a
// shared machine may slow them down).
func waitLong(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// feederOf waits for one of ps to feed and returns it.
func feederOf(t *testing.T, ps ...*process) *process {
	t.Helper()
	var h *process
	waitFor(t, func() bool {
		for _, p := range ps {
			if p.f.State() == FeederFeeding {
				h = p
			}
		}
		return h != nil
	})
	return h
}

// versions returns the version of each page row numbered first..first+n-1
// in ix, 0 for a missing one.
func versions(t *testing.T, ix *serving.Index, first, n int) []uint64 {
	t.Helper()
	var vs []uint64
	for i := first; i < first+n; i++ {
		v, in, err := ix.Version(fmt.Sprintf("com.example/p%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		if !in {
			v = 0
		}
		vs = append(vs, v)
	}
	return vs
}

func queueLenOf(t *testing.T, db *percolator.DB, q webtable.Queue) int {
	t.Helper()
	n := 0
	err := db.View(bg, func(tx *percolator.Tx) error {
		n = 0
		return tx.Scan(bg, q.Prefix, q.End(), webtable.ExportDoc, func(string, string, []byte) bool {
			n++
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReplicasGetEveryExport: two index names on one table feed at once,
// each from its own queue. The second, registered after exports that
// only the first index's queue got, is backfilling until the GC safe
// point passes its registration, and then backfills them from the table:
// both indexes end with the same documents at the same versions, and
// their queues empty. A standby of the second name stands by. Dropped,
// the second name's queue is deleted and gets no more entries; the last
// name cannot be dropped.
func TestReplicasGetEveryExport(t *testing.T) {
	c := newReplicaCluster(t)
	m := c.start("main", testLease)
	feederOf(t, m)
	c.add(0, 10, "first")
	waitFor(t, func() bool { return count(t, m.ix) == 10 })
	if n := queueLenOf(t, c.writer, webtable.QueueOf("r2")); n != 0 {
		t.Fatalf("r2's queue has %d entries before r2 registered", n)
	}

	r := []*process{c.start("r2", testLease), c.start("r2", testLease)}
	for _, p := range r {
		waitFor(t, func() bool { return p.f.IndexState() == webtable.IndexBackfilling })
	}
	if m.f.State() != FeederFeeding || m.f.IndexState() != webtable.IndexLive {
		t.Fatalf("main is %v, %q once r2 registered", m.f.State(), m.f.IndexState())
	}
	c.add(10, 10, "second")
	h := feederOf(t, r...)
	// The exports after the registration reach r2 through its queue at
	// once, before the backfill.
	waitFor(t, func() bool { return len(find(t, h.ix, "second")) == 10 })
	for _, p := range r {
		if p != h && (p.f.State() != FeederStandby || count(t, p.ix) != 0) {
			t.Fatalf("r2's other feeder is %v with %d documents", p.f.State(), count(t, p.ix))
		}
	}
	waitLong(t, func() bool { c.gc(); return h.f.IndexState() == webtable.IndexLive })
	waitFor(t, func() bool { return count(t, m.ix) == 20 && count(t, h.ix) == 20 })
	if mv, hv := versions(t, m.ix, 0, 20), versions(t, h.ix, 0, 20); fmt.Sprint(mv) != fmt.Sprint(hv) {
		t.Fatalf("main has versions %v, r2 %v", mv, hv)
	}
	for _, q := range []webtable.Queue{webtable.QueueOf("main"), webtable.QueueOf("r2")} {
		waitFor(t, func() bool { return queueLenOf(t, c.writer, q) == 0 })
	}
	// Each index records what it applied in its own column.
	err := c.writer.View(bg, func(tx *percolator.Tx) error {
		for _, col := range []string{webtable.SearchableAt, webtable.QueueOf("r2").Served} {
			v, err := tx.Get(bg, "com.example/p003", col)
			if s, ok := ParseSearchable(v); err != nil || !ok || s.Version == 0 {
				return fmt.Errorf("%s of p003 = %q, %v", col, v, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Retire r2: its queue goes, and gets nothing more.
	for _, p := range r {
		p.stop(t)
	}
	c.add(20, 5, "third")
	if n, err := DropIndex(bg, c.writer, "r2"); err != nil || n != 5 {
		t.Fatalf("DropIndex = %d, %v; want the 5 entries queued for r2", n, err)
	}
	c.add(25, 2, "fourth")
	waitFor(t, func() bool { return count(t, m.ix) == 27 })
	if n := queueLenOf(t, c.writer, webtable.QueueOf("r2")); n != 0 {
		t.Fatalf("r2's queue has %d entries once dropped", n)
	}
	if _, err := DropIndex(bg, c.writer, "main"); !errors.Is(err, ErrDropIndex) {
		t.Fatalf("DropIndex of the last index = %v, want %v", err, ErrDropIndex)
	}
}

// TestReplicaBackfillsStraddlingExport: an export transaction that began
// before a name was registered and commits after writes no entry in the
// new name's queue; the name stays backfilling while that transaction is
// open, however GC runs, and its backfill applies the export once it is
// over.
func TestReplicaBackfillsStraddlingExport(t *testing.T) {
	c := newReplicaCluster(t)
	m := c.start("main", testLease)
	feederOf(t, m)

	long, err := c.writer.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer long.Rollback()
	r := c.start("r2", testLease)
	waitFor(t, func() bool { return r.f.IndexState() == webtable.IndexBackfilling })
	c.add(1, 3, "later")
	waitFor(t, func() bool { return count(t, r.ix) == 3 })
	// The straddler is still open: the safe point stays below it.
	for range 5 {
		c.gc()
		time.Sleep(testLease.Poll * 10)
	}
	if s := r.f.IndexState(); s != webtable.IndexBackfilling {
		t.Fatalf("r2 is %q while an export begun before its registration runs", s)
	}

	e := upsert(long.StartTs(), "com.example/p000", "http://example.com/p000", "Page", "straddler common", 1)
	e.Doc.FetchedAt = time.Now().UTC()
	if err := enqueueIn(long, e); err != nil {
		t.Fatal(err)
	}
	if err := long.Commit(bg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return count(t, m.ix) == 4 })
	if n := queueLenOf(t, c.writer, webtable.QueueOf("r2")); n != 0 {
		t.Fatalf("the straddler queued %d entries for r2", n)
	}
	waitLong(t, func() bool { c.gc(); return r.f.IndexState() == webtable.IndexLive })
	if got := find(t, r.ix, "straddler"); len(got) != 1 {
		t.Fatalf("r2 finds %v of the straddling export after the backfill", got)
	}
	if mv, rv := versions(t, m.ix, 0, 4), versions(t, r.ix, 0, 4); fmt.Sprint(mv) != fmt.Sprint(rv) {
		t.Fatalf("main has versions %v, r2 %v", mv, rv)
	}
}

// TestReplicaBackfillTrustsBuiltCopy: a new name's copy that has the
// table's documents already (a new directory's index is built from the
// table) is not fed them again by the backfill, which records them.
func TestReplicaBackfillTrustsBuiltCopy(t *testing.T) {
	c := newReplicaCluster(t)
	m := c.start("main", testLease)
	feederOf(t, m)
	c.add(0, 5, "first")
	waitFor(t, func() bool { return count(t, m.ix) == 5 })
	r := c.start("r2", testLease)
	waitFor(t, func() bool { return r.f.IndexState() == webtable.IndexBackfilling })
	var built []serving.Update
	for i, v := range versions(t, m.ix, 0, 5) {
		e := upsert(v, fmt.Sprintf("com.example/p%03d", i), fmt.Sprintf("http://example.com/p%03d", i), "Page", "first common", 1)
		built = append(built, serving.Update{Export: e, Prev: e.Doc.FetchedAt})
	}
	if _, err := r.ix.Apply(built); err != nil {
		t.Fatal(err)
	}
	batches := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, i := range c.events {
			if i == c.index(r) {
				n++
			}
		}
		return n
	}
	before := batches()
	waitLong(t, func() bool { c.gc(); return r.f.IndexState() == webtable.IndexLive })
	if n := batches() - before; n != 0 {
		t.Errorf("the backfill applied %d batches to a copy that had every document", n)
	}
	if mv, rv := versions(t, m.ix, 0, 5), versions(t, r.ix, 0, 5); fmt.Sprint(mv) != fmt.Sprint(rv) {
		t.Fatalf("main has versions %v, r2 %v", mv, rv)
	}
	err := c.writer.View(bg, func(tx *percolator.Tx) error {
		v, err := tx.Get(bg, "com.example/p003", webtable.QueueOf("r2").Served)
		if s, ok := ParseSearchable(v); err != nil || !ok || s.Version != versions(t, m.ix, 3, 1)[0] {
			return fmt.Errorf("r2's column of p003 = %q, %v", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
