package bigtable

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

var groupTables atomic.Int64

func openGroupTest(t *testing.T) *Store {
	t.Helper()
	name := fmt.Sprintf("g%d", groupTables.Add(1))
	s, err := Open(t.Context(), Config{Project: "caffeine", Instance: "test", Table: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, tbl := range []string{name, indexTable(name)} {
			if err := s.admin.DeleteTable(ctx, tbl); err != nil {
				t.Errorf("delete table %q: %v", tbl, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := s.EnsureFamilies(t.Context(), storetest.Families); err != nil {
		t.Fatal(err)
	}
	return s
}

// indexed returns the rows of the group index.
func indexed(t *testing.T, s *Store) []string {
	t.Helper()
	var rows []string
	err := s.index.tbl.ReadRows(t.Context(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		row, ok := percolator.RowOfBucketKey(r.Key())
		if !ok || percolator.BucketKey(row) != r.Key() {
			t.Errorf("index row %q is not a bucket key", r.Key())
		}
		for _, c := range cells(r) {
			rows = append(rows, fmt.Sprintf("%s %s:%s@%d", row, c.Family, c.Column, c.Ts))
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	return rows
}

func scanNotify(t *testing.T, s *Store) []string {
	t.Helper()
	var rows []string
	err := s.ReadRows(t.Context(), "", "", func(row string, cs []percolator.Cell) bool {
		rows = append(rows, row)
		return true
	}, percolator.Filter{Family: "n", KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func set(fam, col string, ts uint64) percolator.Mutation {
	return percolator.Mutation{Op: percolator.SetCell, Family: fam, Column: col, Ts: ts, Value: []byte("v")}
}

// TestGroupIndex checks the notify index: grouped cells written by
// MutateRows and CheckAndMutateRow are indexed, other families are not, a
// scan of the notify family lists exactly the rows with notify cells and
// drops the index cells of deleted ones.
func TestGroupIndex(t *testing.T) {
	s := openGroupTest(t)
	ctx := t.Context()
	err := s.MutateRows(ctx, []percolator.RowMutation{
		{Row: "a", Mutations: []percolator.Mutation{set("d", "c", 5), set("n", "c", 5)}},
		{Row: "b", Mutations: []percolator.Mutation{set("d", "c", 5)}},
		{Row: "c", Mutations: []percolator.Mutation{set("n", "x", 7), set("n", "y", 8)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CheckAndMutateRow(ctx, "d", []percolator.Filter{{Family: "l"}}, nil, []percolator.Mutation{set("l", "c", 9), set("n", "c", 9)}); err != nil {
		t.Fatal(err)
	}
	want := []string{"a n:c@5", "c n:x@7", "c n:y@8", "d n:c@9"}
	if got := indexed(t, s); !slices.Equal(got, want) {
		t.Fatalf("index = %q, want %q", got, want)
	}
	if got := scanNotify(t, s); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("notify scan = %q, want a, c, d", got)
	}
	// The run on c deletes one of its notifications, the run on a its only one.
	err = s.MutateRows(ctx, []percolator.RowMutation{
		{Row: "a", Mutations: []percolator.Mutation{{Op: percolator.DeleteCell, Family: "n", Column: "c", Ts: 5}}},
		{Row: "c", Mutations: []percolator.Mutation{{Op: percolator.DeleteOlder, Family: "n", Column: "x", Ts: percolator.MaxTs}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := scanNotify(t, s); !slices.Equal(got, []string{"c", "d"}) {
		t.Fatalf("notify scan after deletions = %q, want c, d", got)
	}
	if got, want := indexed(t, s), []string{"c n:y@8", "d n:c@9"}; !slices.Equal(got, want) {
		t.Fatalf("index after a scan = %q, want %q (the deleted cells' index cells dropped)", got, want)
	}
}

// TestRepairIndex checks that a notify cell whose index cell was never
// written (a process died between the two writes) is not found by scans
// until RepairIndex indexes it.
func TestRepairIndex(t *testing.T) {
	s := openGroupTest(t)
	ctx := t.Context()
	m := bigtable.NewMutation()
	m.Set("n", "c", micros(3), []byte("v"))
	if err := s.tbl.Apply(ctx, "lost", m); err != nil {
		t.Fatal(err)
	}
	if got := scanNotify(t, s); len(got) != 0 {
		t.Fatalf("scan before the repair = %q, want nothing (the index lacks it)", got)
	}
	if err := s.RepairIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := indexed(t, s), []string{"lost n:c@3"}; !slices.Equal(got, want) {
		t.Errorf("index after the repair = %q, want %q", got, want)
	}
	if got := scanNotify(t, s); !slices.Equal(got, []string{"lost"}) {
		t.Errorf("scan after the repair = %q, want lost", got)
	}
}

// TestWorkerRepairsIndex: a worker holding the lock sweep's duty repairs
// the notify index, so a notification whose index cell was lost is
// observed all the same.
func TestWorkerRepairsIndex(t *testing.T) {
	s := openGroupTest(t)
	ctx := t.Context()
	db, err := percolator.Open(ctx, s, percolator.Options{Weak: []string{"c"}, LockTTL: 200 * time.Millisecond, ClockSkew: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ran := make(chan string, 1)
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 50 * time.Millisecond},
		percolator.Observer{Name: "o", Column: "c", Run: func(_ context.Context, _ *percolator.Tx, row, _ string) error {
			select {
			case ran <- row:
			default:
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	defer w.Close()
	// A weak notification as a writer that died before indexing it left it.
	m := bigtable.NewMutation()
	m.Set("n", "c", micros(3), nil)
	if err := s.tbl.Apply(ctx, "lost", m); err != nil {
		t.Fatal(err)
	}
	select {
	case row := <-ran:
		if row != "lost" {
			t.Errorf("ran on %q", row)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the notification whose index cell was lost did not run in 30 s")
	}
}

// TestReadBuckets checks that a bucket scan reads exactly the rows of the
// buckets asked for, in bucket order, and that a row scan through the
// bucketed index still lists rows in row order.
func TestReadBuckets(t *testing.T) {
	s := openGroupTest(t)
	ctx := t.Context()
	var muts []percolator.RowMutation
	var rows []string
	for i := range 300 {
		row := fmt.Sprintf("r%03d", i)
		rows = append(rows, row)
		muts = append(muts, percolator.RowMutation{Row: row, Mutations: []percolator.Mutation{set("n", "c", 5), set("d", "c", 5)}})
	}
	if err := s.MutateRows(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if got := scanNotify(t, s); !slices.Equal(got, rows) {
		t.Fatalf("row scan = %q, want every row in row order", got)
	}
	// The first and last quarter of the buckets.
	ranges := []percolator.KeyRange{
		{Start: "", End: percolator.BucketStart(percolator.Buckets / 4)},
		{Start: percolator.BucketStart(percolator.Buckets * 3 / 4), End: ""},
	}
	var want []string
	for _, row := range rows {
		if b := percolator.Bucket(row); b < percolator.Buckets/4 || b >= percolator.Buckets*3/4 {
			want = append(want, percolator.BucketKey(row))
		}
	}
	slices.Sort(want)
	before := s.IndexRows()
	var got []string
	err := s.ReadBuckets(ctx, ranges, func(row string, cs []percolator.Cell) bool {
		if len(cs) != 1 || cs[0].Family != "n" {
			t.Errorf("%s: cells %v, want its notify cell", row, cs)
		}
		got = append(got, percolator.BucketKey(row))
		return true
	}, percolator.Filter{Family: "n", KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bucket scan got %d rows, want the %d of those buckets in bucket order", len(got), len(want))
	}
	if n := s.IndexRows() - before; n != int64(len(want)) {
		t.Errorf("the bucket scan read %d index rows, want %d (its buckets only)", n, len(want))
	}
	if err := s.ReadBuckets(ctx, ranges, func(string, []percolator.Cell) bool { return true }, percolator.Filter{Family: "d"}); err == nil {
		t.Error("a bucket scan of a family that is not indexed succeeded")
	}
}

// TestMigrateRowIndex checks that a table whose notify index is keyed by
// row (the index of older versions) has it moved to the bucketed index
// when a store opens it, and that its notifications are then found.
func TestMigrateRowIndex(t *testing.T) {
	ctx := t.Context()
	name := fmt.Sprintf("m%d", groupTables.Add(1))
	s := openGroupTest(t) // for its admin client
	old := oldIndexTable(name)
	for _, tbl := range []string{name, old} {
		if err := s.admin.CreateTable(ctx, tbl); err != nil {
			t.Fatal(err)
		}
		if err := s.admin.CreateColumnFamily(ctx, tbl, "n"); err != nil {
			t.Fatal(err)
		}
	}
	// A notification as an older version wrote it: in its row, and in
	// the old index under the row's own key.
	for _, tbl := range []string{name, old} {
		m := bigtable.NewMutation()
		m.Set("n", "c", micros(4), nil)
		if err := s.client.Open(tbl).Apply(ctx, "page", m); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Open(ctx, Config{Project: "caffeine", Instance: "test", Table: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tbl := range []string{name, indexTable(name)} {
			if err := s.admin.DeleteTable(context.Background(), tbl); err != nil {
				t.Errorf("delete table %q: %v", tbl, err)
			}
		}
		m.Close()
	})
	if err := m.EnsureFamilies(ctx, storetest.Families); err != nil {
		t.Fatal(err)
	}
	if got, want := indexed(t, m), []string{"page n:c@4"}; !slices.Equal(got, want) {
		t.Errorf("bucketed index after the move = %q, want %q", got, want)
	}
	if _, err := s.admin.TableInfo(ctx, old); err == nil {
		t.Errorf("the old index %q is still there", old)
	}
	var found []string
	all := []percolator.KeyRange{{}}
	if err := m.ReadBuckets(ctx, all, func(row string, _ []percolator.Cell) bool {
		found = append(found, row)
		return true
	}, percolator.Filter{Family: "n", KeysOnly: true}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(found, []string{"page"}) {
		t.Errorf("bucket scan after the move = %q, want page", found)
	}
	// A second open finds nothing to move.
	if err := m.EnsureFamilies(ctx, storetest.Families); err != nil {
		t.Fatal(err)
	}
}

// TestGroupIndexWritesTogether checks that the index writes of concurrent
// calls go with fewer index calls than calls (group commit), that every
// call returns only once its cells are indexed.
func TestGroupIndexWritesTogether(t *testing.T) {
	s := openGroupTest(t)
	const n = 64
	before := s.Calls()["index writes"]
	var wg sync.WaitGroup
	var missing atomic.Int64
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := fmt.Sprintf("r%02d", i)
			if _, err := s.CheckAndMutateRow(t.Context(), row, []percolator.Filter{{Family: "l"}}, nil, []percolator.Mutation{set("l", "c", 9), set("n", "c", 9)}); err != nil {
				t.Error(err)
				return
			}
			// Indexed by the time the call returns.
			var found bool
			err := s.ReadBuckets(t.Context(), []percolator.KeyRange{{Start: percolator.BucketKey(row), End: percolator.BucketKey(row) + "\x00"}}, func(string, []percolator.Cell) bool {
				found = true
				return true
			}, percolator.Filter{Family: "n"})
			if err != nil {
				t.Error(err)
			}
			if !found {
				missing.Add(1)
			}
		}()
	}
	wg.Wait()
	if m := missing.Load(); m > 0 {
		t.Errorf("%d of %d calls returned before their notify cell was indexed", m, n)
	}
	if got := indexed(t, s); len(got) != n {
		t.Errorf("%d index cells, want %d", len(got), n)
	}
	writes := s.Calls()["index writes"] - before
	t.Logf("%d concurrent calls, %d index writes", n, writes)
	if writes >= n {
		t.Errorf("%d concurrent calls made %d index writes, want fewer", n, writes)
	}
}
