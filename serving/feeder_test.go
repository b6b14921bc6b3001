package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

var bg = context.Background()

func openDB(t *testing.T) *percolator.DB { return openDBGrace(t, 0) }

// openDBGrace opens a DB whose GC keeps old versions for grace (0: the
// default); at cleanup percolatortest checks the table and closes it.
func openDBGrace(t *testing.T, grace time.Duration) *percolator.DB {
	t.Helper()
	db, _ := percolatortest.Open(t, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, GCGrace: grace})
	return db
}

// enqueue writes an export queue entry as the export observer does, with
// the version the test wants (the observer uses its start timestamp), and
// the page row's export bookkeeping that Rebuild reads.
func enqueue(t *testing.T, db *percolator.DB, e webtable.Export) {
	t.Helper()
	err := db.Update(bg, func(tx *percolator.Tx) error {
		b, _ := json.Marshal(e)
		tx.Set(webtable.ExportRow(e.Version, e.Row), webtable.ExportDoc, b)
		tx.Set(e.Row, webtable.ExportVer, []byte(strconv.FormatUint(e.Version, 10)))
		if e.Op == webtable.OpDelete {
			tx.Delete(e.Row, webtable.ExportDigest)
			return tx.Delete(e.Row, webtable.ExportLast)
		}
		d, _ := json.Marshal(e.Doc)
		tx.Set(e.Row, webtable.ExportDigest, []byte("digest"))
		return tx.Set(e.Row, webtable.ExportLast, d)
	})
	if err != nil {
		t.Fatal(err)
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
	ix, err := OpenIndex(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeeder(db, ix, FeederOptions{})
	a, u := "com.example/a", "http://example.com/a"

	enqueue(t, db, upsert(10, a, u, "Old", "zebra", 1))
	enqueue(t, db, upsert(20, a, u, "New", "giraffe", 1))
	if n := drain(t, f); n != 2 {
		t.Fatalf("drained %d", n)
	}
	if got := find(t, ix, "giraffe"); len(got) != 1 {
		t.Fatalf("newest: %v", got)
	}
	if got := find(t, ix, "zebra"); len(got) != 0 {
		t.Fatalf("older applied: %v", got)
	}
	enqueue(t, db, upsert(15, a, u, "Late", "zebra", 1))
	drain(t, f)
	if got := find(t, ix, "zebra"); len(got) != 0 {
		t.Fatalf("straggler applied: %v", got)
	}
	enqueue(t, db, webtable.Export{Op: webtable.OpDelete, Version: 30, Row: a, URL: u})
	drain(t, f)
	enqueue(t, db, upsert(25, a, u, "Zombie", "giraffe", 1))
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
	if ix, err = OpenIndex(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	f = NewFeeder(db, ix, FeederOptions{})
	enqueue(t, db, upsert(28, a, u, "Zombie", "giraffe", 1))
	drain(t, f)
	if n, _ := ix.Count(); n != 0 {
		t.Fatalf("straggler after reopen: count %d", n)
	}
	enqueue(t, db, upsert(40, a, u, "Back", "okapi", 1))
	drain(t, f)
	if got := find(t, ix, "okapi"); len(got) != 1 {
		t.Fatalf("newer after delete: %v", got)
	}
	if v, in, err := ix.Version(a); v != 40 || !in || err != nil {
		t.Fatalf("Version = %d %v %v", v, in, err)
	}
}

// TestRebuild: an index rebuilt from the table holds what the feeder had
// applied, and entries still queued are applied after it.
func TestRebuild(t *testing.T) {
	db := openDB(t)
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := OpenIndex(dir, Options{})
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

	ix, err = Rebuild(bg, db, dir, Options{})
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

// TestFeederFloorRisesUnderLoad: a full look that reads a full batch
// (the queue does not run empty, as in a PageRank wave) still moves where
// full looks start up to its first entry, so that they do not read the
// applied entries' dead versions again; one that reads the whole queue
// moves it to the safe point.
func TestFeederFloorRisesUnderLoad(t *testing.T) {
	db, ix := openDBGrace(t, time.Millisecond), openIndex(t)
	f := NewFeeder(db, ix, FeederOptions{Batch: 2})
	var versions []uint64
	for i := range 5 {
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
	if _, err := db.GC(bg); err != nil { // the safe point passes every entry
		t.Fatal(err)
	}
	for i, want := range []uint64{versions[0], versions[2], versions[4]} {
		if _, err := f.step(bg, fromStart); err != nil {
			t.Fatal(err)
		}
		if i < 2 && f.floor != want {
			t.Fatalf("after full look %d (a full batch) the floor is %d, want its first entry %d", i+1, f.floor, want)
		}
		if i == 2 && f.floor <= versions[4] {
			t.Fatalf("after the last full look the floor is %d, want the safe point, past %d", f.floor, versions[4])
		}
	}
	if got := len(find(t, ix, "okapi")); got != 5 {
		t.Fatalf("%d pages searchable, want 5", got)
	}
}
