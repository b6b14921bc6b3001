package badger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

// readLatest reads the newest version of (fam, col) of row at or below bound.
func readLatest(t *testing.T, s *badger.Store, row, fam, col string, bound uint64) string {
	t.Helper()
	cells, err := s.ReadRow(context.Background(), row, percolator.Filter{Family: fam, Column: col, MaxTs: bound, Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) == 0 {
		return "<none>"
	}
	return fmt.Sprintf("%s@%d", cells[0].Value, cells[0].Ts)
}

// The newest-version entry answers reads of a Newest family ("w") while it
// is trusted: across a clean close, not after a crash, whose last writes
// may have kept the entry without the cell or the cell without the entry.
func TestNewestTrust(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir, badger.Options{})
	mutate(t, s, "r", set("w", "c", 10, "a"))
	if got := readLatest(t, s, "r", "w", "c", 100); got != "a@10" {
		t.Fatalf("read %s, want a@10", got)
	}
	// A forged entry is believed: reads go through it.
	if err := s.ForgeNewest("r", "w", "c", 10, []byte("forged")); err != nil {
		t.Fatal(err)
	}
	if got := readLatest(t, s, "r", "w", "c", 100); got != "forged@10" {
		t.Fatalf("read %s: the newest-version entry is not used", got)
	}
	// Below the entry's version, the versions are read.
	mutate(t, s, "r", set("w", "c", 20, "b"))
	if got := readLatest(t, s, "r", "w", "c", 15); got != "a@10" {
		t.Errorf("read at 15: %s, want a@10", got)
	}
	if err := s.ForgeNewest("r", "w", "c", 20, []byte("forged")); err != nil {
		t.Fatal(err)
	}

	// A clean close keeps the entries trusted.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, badger.Options{})
	if got := readLatest(t, s, "r", "w", "c", 100); got != "forged@20" {
		t.Errorf("after a clean close: %s, want the entry believed", got)
	}

	// A crash does not.
	if err := s.CloseUnclean(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, badger.Options{})
	if got := readLatest(t, s, "r", "w", "c", 100); got != "b@20" {
		t.Errorf("after a crash: %s, want b@20 from the versions", got)
	}
	// New writes make trusted entries again.
	mutate(t, s, "r", set("w", "c", 30, "c"))
	if err := s.ForgeNewest("r", "w", "c", 30, []byte("forged")); err != nil {
		t.Fatal(err)
	}
	if got := readLatest(t, s, "r", "w", "c", 100); got != "forged@30" {
		t.Errorf("after a write: %s, want the new entry believed", got)
	}

	// Declaring the family without Newest and again with it distrusts the
	// entries: writes meanwhile did not keep them.
	plain := slices.Clone(storetest.Families)
	for i := range plain {
		plain[i].Newest = false
	}
	if err := s.EnsureFamilies(ctx, plain); err != nil {
		t.Fatal(err)
	}
	mutate(t, s, "r", set("w", "c", 40, "d"))
	if err := s.EnsureFamilies(ctx, storetest.Families); err != nil {
		t.Fatal(err)
	}
	if got := readLatest(t, s, "r", "w", "c", 100); got != "d@40" {
		t.Errorf("after the family was not Newest for a while: %s, want d@40", got)
	}
}

// Random writes, deletions and reads of one family declared Newest and
// one not, with reopens and crashes: every read agrees.
func TestNewestAgrees(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, badger.Options{})
	fams := []string{"w", "d"} // "w" is Newest, "d" not
	rng := rand.New(rand.NewPCG(11, 12))
	cols := []string{"a", "b", "c"}
	rows := []string{"r1", "r2"}
	for step := range 2000 {
		row, col := rows[rng.IntN(len(rows))], cols[rng.IntN(len(cols))]
		// Mostly above every version so far (the common case, where the
		// entry knows the newest), sometimes below.
		ts := uint64(max(1, step+rng.IntN(10)-3))
		var m percolator.Mutation
		switch k := rng.IntN(60); {
		case k < 36:
			m = set("", col, ts, fmt.Sprint("v", step))
			if rng.IntN(10) == 0 {
				m.Value = nil
			}
		case k < 48:
			m = del("", col, ts)
		case k < 58:
			m = delOlder("", col, ts)
		case k == 58:
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open(t, dir, badger.Options{})
			continue
		default:
			if err := s.CloseUnclean(); err != nil {
				t.Fatal(err)
			}
			s = open(t, dir, badger.Options{})
			continue
		}
		for _, f := range fams {
			m.Family = f
			mutate(t, s, row, m)
		}
		for range 3 {
			row, col := rows[rng.IntN(len(rows))], cols[rng.IntN(len(cols))]
			bound := uint64(max(0, step+rng.IntN(20)-15))
			if rng.IntN(2) == 0 {
				bound = percolator.MaxTs
			}
			if w, d := readLatest(t, s, row, "w", col, bound), readLatest(t, s, row, "d", col, bound); w != d {
				t.Fatalf("step %d: %s %s at %d: Newest family reads %s, plain %s", step, row, col, bound, w, d)
			}
		}
	}
}
