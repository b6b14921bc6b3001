package bigtable

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// TestMutateRowsTogether checks that concurrent MutateRows calls go with
// fewer calls than callers, that each caller returns once its rows are
// written, with the errors of its own rows only (a row of an unknown
// family fails; the caller's other row and the other callers' rows are
// written), and that their notify cells are indexed.
func TestMutateRowsTogether(t *testing.T) {
	s := openGroupTest(t)
	const n = 48
	before := s.Calls()["MutateRows"]
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			second := set("d", "c", 5)
			if i%8 == 3 {
				second = set("nosuchfamily", "c", 5)
			}
			errs[i] = s.MutateRows(t.Context(), []percolator.RowMutation{
				{Row: fmt.Sprintf("a%02d", i), Mutations: []percolator.Mutation{set("d", "c", 5), set("n", "c", 5)}},
				{Row: fmt.Sprintf("b%02d", i), Mutations: []percolator.Mutation{second}},
			})
			if errs[i] != nil {
				return
			}
			for _, row := range []string{fmt.Sprintf("a%02d", i), fmt.Sprintf("b%02d", i)} {
				if cs, err := s.ReadRow(t.Context(), row, percolator.Filter{Family: "d"}); err != nil || len(cs) != 1 {
					t.Errorf("%s after its MutateRows returned: %v, %v", row, cs, err)
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		bad := fmt.Sprintf("b%02d", i)
		switch {
		case i%8 == 3 && (err == nil || !strings.Contains(err.Error(), bad)):
			t.Errorf("caller %d, whose row %s names an unknown family: %v, want that row's error", i, bad, err)
		case i%8 != 3 && err != nil:
			t.Errorf("caller %d: %v", i, err)
		}
		if i%8 == 3 {
			cs, err := s.ReadRow(t.Context(), fmt.Sprintf("a%02d", i), percolator.Filter{Family: "d"})
			if err != nil || len(cs) != 1 {
				t.Errorf("caller %d's good row beside the failed one: %v, %v", i, cs, err)
			}
		}
	}
	if got := indexed(t, s); len(got) != n {
		t.Errorf("%d notify cells indexed, want %d", len(got), n)
	}
	calls := s.Calls()["MutateRows"] - before
	t.Logf("%d concurrent callers, %d MutateRows calls", n, calls)
	if calls >= n {
		t.Errorf("%d concurrent callers made %d calls, want fewer", n, calls)
	}
}
