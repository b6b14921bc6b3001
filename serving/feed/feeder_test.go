package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

var bg = context.Background()

func openDB(t *testing.T) *percolator.DB { return openDBGrace(t, 0) }

// openDBGrace opens a DB whose GC keeps old versions for grace (0: the
// default); at cleanup percolatortest checks the table and closes it.
func openDBGrace(t *testing.T, grace time.Duration) *percolator.DB {
	t.Helper()
	db, _ := percolatortest.Open(t, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, GCGrace: grace})
	// As a process does at its start: the tests' own transactions then
	// need not record it (and conflict with the feeder's).
	if _, err := webtable.Spread(bg, db); err != nil {
		t.Fatal(err)
	}
	return db
}

// enqueue writes an export queue entry as the export observer does, with
// the version the test wants (the observer uses its start timestamp), and
// the page row's export bookkeeping that Rebuild reads. A full look
// raises the feeder's floor to the table's commit bound, past every
// transaction's start that has committed: a version made up below it is
// never read again (enqueueNow and exportTx give real ones).
func enqueue(t *testing.T, db *percolator.DB, e webtable.Export) {
	t.Helper()
	if err := db.Update(bg, func(tx *percolator.Tx) error { return enqueueIn(tx, e) }); err != nil {
		t.Fatal(err)
	}
}

// enqueueIn is enqueue's writes in tx: one entry in the queue of every
// index registered as tx sees the registry (the default index's while
// none is), as the export observer writes them.
func enqueueIn(tx *percolator.Tx, e webtable.Export) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	regs, err := registered(bg, tx)
	if err != nil {
		return err
	}
	if len(regs) == 0 {
		regs = map[string]registration{webtable.DefaultIndex: {}}
	}
	n, _, err := webtable.SpreadTx(bg, tx)
	if err != nil {
		return err
	}
	for name := range regs {
		tx.Set(webtable.SpreadQueue(name, n).Row(e.Version, e.Row), webtable.ExportDoc, b)
	}
	tx.Set(e.Row, webtable.ExportVer, []byte(strconv.FormatUint(e.Version, 10)))
	if e.Op == webtable.OpDelete {
		tx.Delete(e.Row, webtable.ExportDigest)
		return tx.Delete(e.Row, webtable.ExportLast)
	}
	d, _ := json.Marshal(e.Doc)
	tx.Set(e.Row, webtable.ExportDigest, []byte("digest"))
	return tx.Set(e.Row, webtable.ExportLast, d)
}

// exportTx is an export's transaction begun and not yet committed: as the
// export observer's, its entry's version is its start timestamp, and until
// it commits it holds the table's commit bound (and the feeder's floor) at
// or below that version.
type exportTx struct {
	t  *testing.T
	tx *percolator.Tx
	v  uint64
}

func beginExport(t *testing.T, db *percolator.DB) *exportTx {
	t.Helper()
	tx, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tx.Rollback)
	return &exportTx{t, tx, tx.StartTs()}
}

// commit writes e, given the transaction's version, as enqueue does.
func (x *exportTx) commit(e webtable.Export) {
	x.t.Helper()
	e.Version = x.v
	if err := enqueueIn(x.tx, e); err != nil {
		x.t.Fatal(err)
	}
	if err := x.tx.Commit(bg); err != nil {
		x.t.Fatal(err)
	}
}

// commitEntry writes only e's queue entry: a straggler of a row whose
// newer export committed meanwhile (an export writing the row's
// bookkeeping too would conflict with that one and run again).
func (x *exportTx) commitEntry(e webtable.Export) {
	x.t.Helper()
	e.Version = x.v
	b, _ := json.Marshal(e)
	n, _, err := webtable.SpreadTx(bg, x.tx)
	if err != nil {
		x.t.Fatal(err)
	}
	x.tx.Set(webtable.SpreadQueue(webtable.DefaultIndex, n).Row(e.Version, e.Row), webtable.ExportDoc, b)
	if err := x.tx.Commit(bg); err != nil {
		x.t.Fatal(err)
	}
}

func drain(t *testing.T, f *Feeder) int {
	t.Helper()
	n, err := f.Drain(bg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFeederOrder: the newest export of a row wins, in one batch and
// across batches; a late, older export (a straggler whose transaction
// committed after a newer one was applied) never overwrites it, not even
// after a delete; replays change nothing.
func TestFeederOrder(t *testing.T) {
	db := openDB(t)
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := serving.OpenIndex(dir, serving.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeeder(db, ix, FeederOptions{})
	a, u := "com.example/a", "http://example.com/a"
	up := func(title, text string) webtable.Export { return upsert(0, a, u, title, text, 1) }

	// The exports' transactions, each begun where its version is to be.
	beginExport(t, db).commit(up("Old", "zebra"))
	v15 := beginExport(t, db) // a straggler: it commits after a newer export
	beginExport(t, db).commit(up("New", "giraffe"))
	if n := drain(t, f); n != 2 {
		t.Fatalf("drained %d", n)
	}
	if got := find(t, ix, "giraffe"); len(got) != 1 {
		t.Fatalf("newest: %v", got)
	}
	if got := find(t, ix, "zebra"); len(got) != 0 {
		t.Fatalf("older applied: %v", got)
	}
	v15.commitEntry(up("Late", "zebra"))
	drain(t, f)
	if got := find(t, ix, "zebra"); len(got) != 0 {
		t.Fatalf("straggler applied: %v", got)
	}
	v25, v28 := beginExport(t, db), beginExport(t, db) // older than the delete
	beginExport(t, db).commit(webtable.Export{Op: webtable.OpDelete, Row: a, URL: u})
	drain(t, f)
	v25.commitEntry(up("Zombie", "giraffe"))
	drain(t, f)
	if n, _ := ix.Count(); n != 0 {
		t.Fatalf("deleted document came back: count %d", n)
	}
	// The queue is empty, and what the table says matches the index.
	if n := drain(t, f); n != 0 {
		t.Fatalf("queue not empty: %d", n)
	}

	// Reopen the index: the table still knows what it has.
	ix.Close()
	if ix, err = serving.OpenIndex(dir, serving.Options{}); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	f = NewFeeder(db, ix, FeederOptions{})
	v28.commitEntry(up("Zombie", "giraffe"))
	drain(t, f)
	if n, _ := ix.Count(); n != 0 {
		t.Fatalf("straggler after reopen: count %d", n)
	}
	v40 := beginExport(t, db)
	v40.commit(up("Back", "okapi"))
	drain(t, f)
	if got := find(t, ix, "okapi"); len(got) != 1 {
		t.Fatalf("newer after delete: %v", got)
	}
	if v, in, err := ix.Version(a); v != v40.v || !in || err != nil {
		t.Fatalf("Version = %d %v %v, want %d", v, in, err, v40.v)
	}
}

// TestRebuild: an index rebuilt from the table holds what the feeder had
// applied, and entries still queued are applied after it.
func TestRebuild(t *testing.T) {
	db := openDB(t)
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := serving.OpenIndex(dir, serving.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeeder(db, ix, FeederOptions{})
	for i := range 30 {
		enqueue(t, db, upsert(uint64(10+i), fmt.Sprintf("com.example/%02d", i), fmt.Sprintf("http://example.com/%02d", i), "T", fmt.Sprintf("word%d common", i), 1))
	}
	enqueue(t, db, webtable.Export{Op: webtable.OpDelete, Version: 100, Row: "com.example/03", URL: "http://example.com/03"})
	drain(t, f)
	enqueue(t, db, upsert(200, "com.example/04", "http://example.com/04", "T", "changed common", 1))
	ix.Close()

	ix, err = Rebuild(bg, db, dir, serving.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	f = NewFeeder(db, ix, FeederOptions{})
	drain(t, f)
	if n, _ := ix.Count(); n != 29 {
		t.Fatalf("count %d, want 29", n)
	}
	if got := find(t, ix, "word3"); len(got) != 0 {
		t.Fatalf("deleted page rebuilt: %v", got)
	}
	if got := find(t, ix, "changed"); len(got) != 1 {
		t.Fatalf("queued change lost: %v", got)
	}
	if got := find(t, ix, "word4"); len(got) != 0 {
		t.Fatalf("old version after queued change: %v", got)
	}
}

// TestFeederFindsLateCommits: an entry whose transaction commits after
// newer entries were applied, older than Lag behind them, is applied by a
// full look, also after GC moved the safe point (and with it where full
// looks start) while that transaction was running.
func TestFeederFindsLateCommits(t *testing.T) {
	db, ix := openDBGrace(t, time.Millisecond), openIndex(t)
	f := NewFeeder(db, ix, FeederOptions{Poll: 5 * time.Millisecond, Lag: 50 * time.Millisecond, LagScan: 20 * time.Millisecond, FullScan: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()

	late, err := db.Begin(bg) // the straggler: its version is its start
	if err != nil {
		t.Fatal(err)
	}
	v := late.StartTs()
	e := upsert(v, "com.example/late", "http://example.com/late", "Late", "walrus", 1)
	e.Doc.FetchedAt = time.Now().UTC() // upsert's is the version as ms: out of JSON's range here
	b, _ := json.Marshal(e)
	late.Set(fmt.Sprintf("%s%020d/%s", webtable.ExportPrefix, v, e.Row), webtable.ExportDoc, b)

	newer := percolator.TsFromTime(percolator.TimeFromTs(v).Add(time.Second))
	for i := range 3 {
		e := upsert(newer+uint64(i), fmt.Sprintf("com.example/n%d", i), fmt.Sprintf("http://example.com/n%d", i), "New", "narwhal", 1)
		e.Doc.FetchedAt = time.Now().UTC()
		enqueue(t, db, e)
	}
	waitFor(t, func() bool { return len(find(t, ix, "narwhal")) == 3 })
	for range 3 { // full looks pass, GC moves the safe point up to the straggler
		time.Sleep(350 * time.Millisecond)
		if _, err := db.GC(bg); err != nil {
			t.Fatal(err)
		}
	}
	if err := late.Commit(bg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(find(t, ix, "walrus")) == 1 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// enqueueCollected enqueues n upserts of pages with the word okapi, one
// a version, and has GC's safe point pass them all; it returns their
// versions in order.
func enqueueCollected(t *testing.T, db *percolator.DB, n int) []uint64 {
	t.Helper()
	var versions []uint64
	for i := range n {
		tx, err := db.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		v := tx.StartTs()
		tx.Rollback()
		e := upsert(v, fmt.Sprintf("com.example/p%d", i), fmt.Sprintf("http://example.com/p%d", i), "Page", "okapi", 1)
		e.Doc.FetchedAt = time.Now().UTC()
		enqueue(t, db, e)
		versions = append(versions, v)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := db.GC(bg); err != nil {
		t.Fatal(err)
	}
	return versions
}

// TestFeederFloorRisesUnderLoad: a full look that reads a full batch
// (the queue does not run empty, as in a PageRank wave) still moves where
// full looks start up to its first entry, so that they do not read the
// applied entries' dead versions again; one that reads the whole queue
// moves it to the safe point.
func TestFeederFloorRisesUnderLoad(t *testing.T) {
	db, ix := openDBGrace(t, time.Millisecond), openIndex(t)
	f := NewFeeder(db, ix, FeederOptions{Batch: 2})
	versions := enqueueCollected(t, db, 5)
	for i, want := range []uint64{versions[0], versions[2], versions[4]} {
		if _, err := f.step(bg, fromStart); err != nil {
			t.Fatal(err)
		}
		if i < 2 && f.Floor() != want {
			t.Fatalf("after full look %d (a full batch) the floor is %d, want its first entry %d", i+1, f.Floor(), want)
		}
		if i == 2 && f.Floor() <= versions[4] {
			t.Fatalf("after the last full look the floor is %d, want the safe point, past %d", f.Floor(), versions[4])
		}
	}
	if got := len(find(t, ix, "okapi")); got != 5 {
		t.Fatalf("%d pages searchable, want 5", got)
	}
}

// TestFeederBatchBytes: a look stops once its entries hold BatchBytes,
// one entry at least, and a look stopped so is a full batch: the floor
// rises to its first entry only, never past the entries it left.
func TestFeederBatchBytes(t *testing.T) {
	db, ix := openDBGrace(t, time.Millisecond), openIndex(t)
	f := NewFeeder(db, ix, FeederOptions{BatchBytes: 1})
	versions := enqueueCollected(t, db, 3)
	for i, v := range versions {
		n, err := f.step(bg, fromStart)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 || !f.filledBytes || f.Floor() != v {
			t.Fatalf("look %d applied %d entries (filled by bytes: %v), floor %d; want 1 entry, true and its version %d", i+1, n, f.filledBytes, f.Floor(), v)
		}
	}
	if n, err := f.step(bg, fromStart); err != nil || n != 0 || f.filledBytes || f.Floor() <= versions[2] {
		t.Fatalf("the last look applied %d (err %v), filled by bytes %v, floor %d; want 0, false, past %d", n, err, f.filledBytes, f.Floor(), versions[2])
	}
	if got := len(find(t, ix, "okapi")); got != 3 {
		t.Fatalf("%d pages searchable, want 3", got)
	}
}

// TestFeederBatchWithinBudget: under a memory budget a batch takes in
// no more than the budget's working share can index (indexCost bytes a
// byte): entries that fit FeederOptions.BatchBytes are applied one look
// each when two would be past the share, and all are applied.
func TestFeederBatchWithinBudget(t *testing.T) {
	db, ix := openDBGrace(t, time.Millisecond), openIndex(t)
	t.Setenv("GOMEMLIMIT", "1GiB") // the share alone, not the runtime's limit
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	(&budget.Budget{MB: 1}).Apply(ctx) // a share of 256 KiB: 3,495 bytes of entries
	f := NewFeeder(db, ix, FeederOptions{})
	if got, want := f.batchBytes(), (1<<20/budget.WorkShare)/indexCost; got != want {
		t.Fatalf("batch of %d bytes within a 1 MiB budget, want %d", got, want)
	}
	text := strings.Repeat("okapi ", 400) // 2,400 bytes: one entry fits, two do not
	for i := range 3 {
		tx, err := db.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		v := tx.StartTs()
		tx.Rollback()
		e := upsert(v, fmt.Sprintf("com.example/p%d", i), fmt.Sprintf("http://example.com/p%d", i), "Page", text, 1)
		e.Doc.FetchedAt = time.Now().UTC()
		enqueue(t, db, e)
	}
	for i := range 3 {
		if n, err := f.step(bg, fromStart); err != nil || n != 1 || !f.filledBytes && i < 2 {
			t.Fatalf("look %d applied %d entries (err %v, filled by bytes %v); want 1", i+1, n, err, f.filledBytes)
		}
	}
	if got := len(find(t, ix, "okapi")); got != 3 {
		t.Fatalf("%d pages searchable, want 3", got)
	}
	cancel() // unsets the share, soon after
	for i := 0; budget.WorkSize() != 0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if f.batchBytes() != f.opt.BatchBytes {
		t.Fatalf("batch of %d bytes without a budget, want BatchBytes %d", f.batchBytes(), f.opt.BatchBytes)
	}
}

// TestFeederFloorFollowsCommitBound: on a table this process alone
// writes, a full look that read the whole queue moves the floor past its
// entries to the commit bound, with no GC pass (the safe point lags by the
// grace period, here an hour); a running transaction holds it at its
// start, where its entry will be.
func TestFeederFloorFollowsCommitBound(t *testing.T) {
	db, ix := openDBGrace(t, time.Hour), openIndex(t)
	f := NewFeeder(db, ix, FeederOptions{})
	var last uint64
	for i := range 3 {
		tx, err := db.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		last = tx.StartTs()
		tx.Rollback()
		e := upsert(last, fmt.Sprintf("com.example/p%d", i), fmt.Sprintf("http://example.com/p%d", i), "Page", "okapi", 1)
		e.Doc.FetchedAt = time.Now().UTC()
		enqueue(t, db, e)
	}
	straggler, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := f.step(bg, fromStart); err != nil {
			t.Fatal(err)
		}
	}
	if fl := f.Floor(); fl <= last || fl > straggler.StartTs() {
		t.Fatalf("floor %d, want past the last entry %d and at most the running transaction's start %d", fl, last, straggler.StartTs())
	}
	if sp := db.SafePoint(); sp > last {
		t.Fatalf("safe point %d moved past %d: the test proves nothing", sp, last)
	}
	straggler.Rollback()
	if got := len(find(t, ix, "okapi")); got != 3 {
		t.Fatalf("%d pages searchable, want 3", got)
	}
}

// TestFeederHoldsUpdatesWithoutNewContent: an export that only changes a
// document's anchors (or rank, or duplicates) waits in the queue up to
// Hold, and the exports of its row within Hold reach the index in one
// write; new pages and new content never wait, and Run applies what waited
// once Hold is over.
func TestFeederHoldsUpdatesWithoutNewContent(t *testing.T) {
	db := openDB(t)
	var (
		mu     sync.Mutex
		writes []serving.Applied
	)
	ix, err := serving.OpenIndex(filepath.Join(t.TempDir(), "index"), serving.Options{OnApply: func(a []serving.Applied) {
		mu.Lock()
		writes = append(writes, a...)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	written := func() []serving.Applied {
		mu.Lock()
		defer mu.Unlock()
		w := writes
		writes = nil
		return w
	}
	fetched := time.Now().UTC().Truncate(time.Millisecond)
	page := func(row, text string, at time.Time, anchors ...string) webtable.Export {
		e := upsert(0, row, "http://example.com/"+row, "Page", text, 1, anchors...)
		e.Doc.FetchedAt = at
		return e
	}

	f := NewFeeder(db, ix, FeederOptions{Hold: time.Hour, Lag: 4 * time.Hour})
	enqueueNow(t, db, page("com.example/a", "aardvark", fetched))
	if n, err := f.step(bg, sinceNewest); err != nil || n != 1 {
		t.Fatalf("a new page: step = %d, %v; want it applied at once", n, err)
	}
	written()
	enqueueNow(t, db, page("com.example/a", "aardvark", fetched, "first"))
	enqueueNow(t, db, page("com.example/a", "aardvark", fetched, "second"))
	enqueueNow(t, db, page("com.example/b", "badger", fetched))
	if n, err := f.step(bg, fromStart); err != nil || n != 1 || f.Held() != 2 {
		t.Fatalf("step = %d, %v, held %d; want the new page applied, a's two anchor updates held", n, err, f.Held())
	}
	if got := find(t, ix, "badger"); len(got) != 1 {
		t.Fatalf("the new page waited: %v", got)
	}
	if got := find(t, ix, "second"); len(got) != 0 {
		t.Fatalf("an anchor update was applied within Hold: %v", got)
	}
	// New content of a held row does not wait, and supersedes what waited.
	enqueueNow(t, db, page("com.example/a", "armadillo", fetched.Add(time.Second), "third"))
	if n, err := f.step(bg, sinceNewest); err != nil || n != 1 {
		t.Fatalf("new content: step = %d, %v; want it applied at once", n, err)
	}
	if got := find(t, ix, "armadillo"); len(got) != 1 {
		t.Fatalf("new content waited behind anchor updates: %v", got)
	}
	written()
	if n := drain(t, f); n != 2 {
		t.Fatalf("drain = %d, want the 2 superseded entries dropped", n)
	}
	if w := written(); len(w) != 0 {
		t.Fatalf("superseded anchor updates written: %v", w)
	}

	enqueueNow(t, db, page("com.example/b", "badger", fetched, "fourth"))
	enqueueNow(t, db, page("com.example/b", "badger", fetched, "fifth"))
	if n := drain(t, f); n != 2 {
		t.Fatalf("drain = %d, want 2", n)
	}
	if w := written(); len(w) != 1 || w[0].Row != "com.example/b" || w[0].NewContent {
		t.Fatalf("two anchor updates of one row wrote %v, want one write", w)
	}

	// Run applies a held entry once Hold is over (the next look from Lag
	// back).
	f = NewFeeder(db, ix, FeederOptions{Poll: 5 * time.Millisecond, Hold: 100 * time.Millisecond, Lag: time.Second, LagScan: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	x := beginExport(t, db)
	e := upsert(0, "com.example/b", "http://example.com/com.example/b", "Page", "badger", 1, "sixth")
	e.Doc.FetchedAt = fetched
	x.commit(e)
	waitFor(t, func() bool { return len(find(t, ix, "sixth")) == 1 })
	if waited := time.Since(percolator.TimeFromTs(x.v)); waited < 100*time.Millisecond {
		t.Fatalf("applied %v after its export, within Hold", waited)
	}
}

// TestFeederGathersBursts: the exports that arrive at an empty queue
// within Gather reach the index as one batch.
func TestFeederGathersBursts(t *testing.T) {
	db := openDB(t)
	var (
		mu      sync.Mutex
		batches [][]serving.Applied
	)
	ix, err := serving.OpenIndex(filepath.Join(t.TempDir(), "index"), serving.Options{OnApply: func(a []serving.Applied) {
		mu.Lock()
		batches = append(batches, a)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	f := NewFeeder(db, ix, FeederOptions{Poll: time.Minute, Gather: 2 * time.Second})
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()

	add := func(i int) {
		e := upsert(0, fmt.Sprintf("com.example/p%d", i), fmt.Sprintf("http://example.com/p%d", i), "Page", "quokka", 1)
		e.Doc.FetchedAt = time.Now().UTC()
		enqueueNow(t, db, e)
	}
	applied := func() int { // OnApply follows the batch: count there
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, b := range batches {
			n += len(b)
		}
		return n
	}
	add(0)
	// Wait for the look after that batch's, which finds the queue empty:
	// the burst then arrives at an empty queue.
	waitFor(t, func() bool { return applied() == 1 && f.Queued() == 0 })
	for i := 1; i <= 3; i++ {
		add(i)
	}
	waitFor(t, func() bool { return applied() == 4 })
	mu.Lock()
	defer mu.Unlock()
	if got := batches[1:]; len(got) != 1 || len(got[0]) != 3 {
		t.Fatalf("a burst of 3 exports became batches %v, want one of 3", got)
	}
}

// TestFeederAppliesAfterQuietAtOnce: an export that arrives more than
// Gather after the last batch is applied without waiting for a burst.
func TestFeederAppliesAfterQuietAtOnce(t *testing.T) {
	db, ix := openDB(t), openIndex(t)
	const gather = 3 * time.Second
	f := NewFeeder(db, ix, FeederOptions{Poll: time.Minute, Gather: gather})
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	add := func(i int) time.Time {
		e := upsert(0, fmt.Sprintf("com.example/p%d", i), fmt.Sprintf("http://example.com/p%d", i), "Page", "quokka", 1)
		e.Doc.FetchedAt = time.Now().UTC()
		enqueueNow(t, db, e)
		return time.Now()
	}
	add(0)
	waitFor(t, func() bool { return f.Applied() == 1 && f.Queued() == 0 })
	time.Sleep(gather + 100*time.Millisecond)
	at := add(1)
	waitFor(t, func() bool { return f.Applied() == 2 })
	if d := time.Since(at); d >= gather-time.Second {
		t.Fatalf("an export after a quiet spell took %v to apply, want well under Gather (%v)", d, gather)
	}
}

// enqueueNow writes e as the export observer does, with its transaction's
// start as the version, and returns the version.
func enqueueNow(t *testing.T, db *percolator.DB, e webtable.Export) uint64 {
	t.Helper()
	x := beginExport(t, db)
	x.commit(e)
	return x.v
}

// TestFeederHeldComeDue: Run looks back for held entries once their Hold
// is over, not at the next LagScan, and a look back that fills its batch
// goes on at once: a burst of anchor updates for more rows than a batch
// holds is applied within Hold and a little, though LagScan is a minute.
func TestFeederHeldComeDue(t *testing.T) {
	const hold = 300 * time.Millisecond
	db, ix := openDB(t), openIndex(t)
	fetched := time.Now().UTC().Truncate(time.Millisecond)
	page := func(i int, anchors ...string) webtable.Export {
		row := fmt.Sprintf("com.example/p%02d", i)
		e := upsert(0, row, "http://example.com/"+row, "Page", "pangolin", 1, anchors...)
		e.Doc.FetchedAt = fetched
		return e
	}
	const rows, batch = 25, 10
	f := NewFeeder(db, ix, FeederOptions{Poll: 5 * time.Millisecond, Batch: batch, Hold: hold,
		Lag: 2 * time.Minute, LagScan: time.Minute, FullScan: time.Hour})
	for i := range rows {
		enqueueNow(t, db, page(i))
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	found := func(q string) int {
		res, err := ix.Search(bg, serving.Query{Q: q, N: 1})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return int(res.Total)
	}
	waitFor(t, func() bool { return found("pangolin") == rows })

	var last uint64
	for i := range rows {
		last = enqueueNow(t, db, page(i, "quokka"))
	}
	waitFor(t, func() bool { return found("quokka") == rows })
	waited := time.Since(percolator.TimeFromTs(last))
	if waited < hold {
		t.Fatalf("the anchor updates were applied %v after the last, within Hold %v", waited, hold)
	}
	if waited > hold+2*time.Second {
		t.Fatalf("the anchor updates were applied %v after the last, want about Hold %v (LagScan is a minute)", waited, hold)
	}
}
