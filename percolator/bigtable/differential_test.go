package bigtable_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

// TestDifferential applies random writes, deletions, conditional writes,
// reads and scans to the Bigtable store and to storetest.Model and compares
// every result, with reads of several filters sent as the emulator gets
// them (one superset filter, see readFilter) and as Bigtable does (an
// interleave). BIGTABLE_DIFF_SEED repeats a run.
func TestDifferential(t *testing.T) {
	t.Run("superset", func(t *testing.T) { differential(t, false) })
	t.Run("interleave", func(t *testing.T) { differential(t, true) })
}

func differential(t *testing.T, interleave bool) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("BIGTABLE_DIFF_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("BIGTABLE_DIFF_SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	ctx := t.Context()
	bt := open(t)
	bigtable.SetInterleave(bt, interleave)
	t.Cleanup(func() { bt.Close() })
	model := storetest.NewModel()
	for _, s := range []percolator.Store{bt, model} {
		if err := s.EnsureFamilies(ctx, storetest.Families); err != nil {
			t.Fatal(err)
		}
	}
	rows := []string{"a", "a\x00", "b", "b.*", "c", "\xff"}
	fams := []string{"d", "l", "w", "n", "m"}
	cols := []string{"c", "c.", "c.*", "ca", "c\x00", "c\n", "c|x", "x", "[x]", "\xfe\xff"}
	tss := []uint64{1, 2, 5, 9, 10, 11, storetest.TopTs - 1, storetest.TopTs}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	ts := func() uint64 { return tss[r.IntN(len(tss))] }
	mutation := func() percolator.Mutation {
		m := percolator.Mutation{Family: pick(fams), Column: pick(cols), Ts: ts()}
		switch n := r.IntN(10); {
		case n < 6:
			m.Op, m.Value = percolator.SetCell, []byte(fmt.Sprintf("v%d", r.IntN(1000)))
		case n < 8:
			m.Op = percolator.DeleteCell
		default:
			m.Op = percolator.DeleteOlder
			if r.IntN(3) == 0 {
				m.Ts = percolator.MaxTs
			}
		}
		return m
	}
	muts := func() []percolator.Mutation {
		var ms []percolator.Mutation
		for range r.IntN(4) {
			ms = append(ms, mutation())
		}
		return ms
	}
	filter := func() percolator.Filter {
		f := percolator.Filter{Family: pick(fams)}
		switch r.IntN(3) {
		case 0:
			f.Column = pick(cols)
		case 1:
			f.ColumnPrefix = pick([]string{"c", "c.", "x", "[", "\xfe"})
		}
		if r.IntN(2) == 0 {
			f.MinTs = ts()
		}
		if r.IntN(2) == 0 {
			f.MaxTs = ts()
		}
		f.Latest = r.IntN(3) == 0
		f.KeysOnly = r.IntN(3) == 0
		return f
	}
	filters := func() []percolator.Filter {
		fs := []percolator.Filter{filter()}
		for range r.IntN(3) {
			fs = append(fs, filter())
		}
		return fs
	}
	same := func(a, b []percolator.Cell) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			// b is the model's: a store may keep the value of a cell the
			// model strips (KeysOnly), never strip one it keeps.
			x, y := a[i], b[i]
			if x.Family != y.Family || x.Column != y.Column || x.Ts != y.Ts || (len(y.Value) > 0 && string(x.Value) != string(y.Value)) {
				return false
			}
		}
		return true
	}
	scan := func(s percolator.Store, start, end string, fs []percolator.Filter) (string, error) {
		out := ""
		err := s.ReadRows(ctx, start, end, func(row string, cs []percolator.Cell) bool {
			out += fmt.Sprintf("%q:", row)
			for _, c := range cs {
				out += fmt.Sprintf(" %s:%q@%d", c.Family, c.Column, c.Ts)
			}
			out += "\n"
			return true
		}, fs...)
		return out, err
	}
	const ops = 2000
	for i := range ops {
		switch n := r.IntN(10); {
		case n < 3:
			var rms []percolator.RowMutation
			for range 1 + r.IntN(3) {
				rms = append(rms, percolator.RowMutation{Row: pick(rows), Mutations: muts()})
			}
			e1, e2 := bt.MutateRows(ctx, rms), model.MutateRows(ctx, rms)
			if e1 != nil || e2 != nil {
				t.Fatalf("op %d: MutateRows(%v) = %v, model %v", i, rms, e1, e2)
			}
		case n < 5:
			row, pred, ifm, ifn := pick(rows), filters(), muts(), muts()
			m1, e1 := bt.CheckAndMutateRow(ctx, row, pred, ifm, ifn)
			m2, e2 := model.CheckAndMutateRow(ctx, row, pred, ifm, ifn)
			if e1 != nil || e2 != nil || m1 != m2 {
				t.Fatalf("op %d: CheckAndMutateRow(%q, %+v, %v, %v) = %v, %v; model %v, %v", i, row, pred, ifm, ifn, m1, e1, m2, e2)
			}
		case n < 8:
			row, fs := pick(rows), filters()
			c1, e1 := bt.ReadRow(ctx, row, fs...)
			c2, e2 := model.ReadRow(ctx, row, fs...)
			if e1 != nil || e2 != nil || !same(c1, c2) {
				t.Fatalf("op %d: ReadRow(%q, %+v) = %v, %v; model %v, %v", i, row, fs, c1, e1, c2, e2)
			}
		default:
			start, end, fs := pick(append(rows, "")), pick(append(rows, "")), filters()
			s1, e1 := scan(bt, start, end, fs)
			s2, e2 := scan(model, start, end, fs)
			if e1 != nil || e2 != nil || s1 != s2 {
				t.Fatalf("op %d: ReadRows(%q, %q, %+v) =\n%s%v\nmodel\n%s%v", i, start, end, fs, s1, e1, s2, e2)
			}
		}
	}
}
