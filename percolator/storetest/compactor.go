package storetest

import (
	"fmt"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// testCompactor checks that compaction changes nothing that reads at or
// above the safe timestamp can see.
func testCompactor(t *testing.T, s percolator.Store) {
	c, ok := s.(percolator.Compactor)
	if !ok {
		t.Skip("the store does not implement percolator.Compactor")
	}
	ctx := t.Context()
	const n = 100
	rowKey := func(i int) string { return fmt.Sprintf("c/%03d", i) }
	var rms []percolator.RowMutation
	for i := range n {
		rms = append(rms, percolator.RowMutation{Row: rowKey(i), Mutations: muts{
			fput("d", "a", 10), fput("d", "a", 20), fput("d", "a", 30), fput("d", "a", 40), fput("d", "a", 50),
			fput("d", "b", 10), fput("d", "b", 20), fput("w", "a", 10), fput("w", "a", 20), fput("n", "c", 5), fput("l", "c", 45),
		}})
	}
	if err := s.MutateRows(ctx, rms); err != nil {
		t.Fatal(err)
	}
	rms = rms[:0]
	for i := range n {
		ms := muts{delOlder("d", "a", 30), del("d", "a", 50), del("w", "a", 20), del("l", "c", 45)}
		if i%2 == 0 {
			ms = append(ms, delOlder("n", "c", percolator.MaxTs))
		}
		rms = append(rms, percolator.RowMutation{Row: rowKey(i), Mutations: ms})
	}
	if err := s.MutateRows(ctx, rms); err != nil {
		t.Fatal(err)
	}
	// d:b@10 is hidden from Latest reads at or above the safe timestamp by
	// d:b@20, but it is not deleted: compaction keeps it.
	checkCells(t, "even row after the deletions", readRow(t, s, rowKey(0), allFamilies()...),
		cells(fx, k("d", "a", 40), k("d", "a", 30), k("d", "b", 20), k("d", "b", 10), k("w", "a", 10)))
	checkCells(t, "odd row after the deletions", readRow(t, s, rowKey(1), allFamilies()...),
		cells(fx, k("d", "a", 40), k("d", "a", 30), k("d", "b", 20), k("d", "b", 10), k("n", "c", 5), k("w", "a", 10)))

	const safeTs = 35
	queries := [][]fl{
		allFamilies(),
		{{Family: "d"}},
		{{Family: "d", Latest: true}},
		{{Family: "d", Column: "a", MaxTs: safeTs, Latest: true}},
		{{Family: "d", Column: "a", MaxTs: safeTs}},
		{{Family: "d", Column: "b", MinTs: 10, MaxTs: 10}},
		{{Family: "d", MinTs: safeTs}},
		{{Family: "w", MaxTs: 50, Latest: true}, {Family: "l", MaxTs: 50}},
		{{Family: "n"}},
	}
	snapshot := func() [][]scanned {
		var out [][]scanned
		for _, q := range queries {
			out = append(out, readRows(t, s, "c/", "c0", q...))
		}
		return out
	}
	before := snapshot()
	if err := c.Compact(ctx, safeTs); err != nil {
		t.Fatalf("Compact(%d): %v", safeTs, err)
	}
	after := snapshot()
	for i := range queries {
		checkRows(t, fmt.Sprintf("ReadRows(%+v) after Compact(%d)", queries[i], safeTs), after[i], before[i], false)
	}

	// The store keeps working, and compacts again.
	rms = rms[:0]
	for i := range n {
		rms = append(rms, percolator.RowMutation{Row: rowKey(i), Mutations: muts{fput("d", "a", 60), delOlder("d", "a", 60)}})
	}
	if err := s.MutateRows(ctx, rms); err != nil {
		t.Fatal(err)
	}
	if err := c.Compact(ctx, 70); err != nil {
		t.Fatalf("Compact(70): %v", err)
	}
	if err := c.Compact(ctx, TopTs); err != nil {
		t.Fatalf("Compact(%d): %v", uint64(TopTs), err)
	}
	for _, i := range []int{0, 1, n - 1} {
		want := []key{k("d", "a", 60), k("d", "b", 20), k("d", "b", 10)}
		if i%2 == 1 {
			want = append(want, k("n", "c", 5))
		}
		want = append(want, k("w", "a", 10))
		checkCells(t, "row "+rowKey(i)+" after Compact(70)", readRow(t, s, rowKey(i), allFamilies()...), cells(fx, want...))
	}
	mutate(t, s, rowKey(0), fput("d", "a", TopTs))
	checkCells(t, "write after Compact", readRow(t, s, rowKey(0), fl{Family: "d", Column: "a", Latest: true}), cells(fx, k("d", "a", TopTs)))
}
