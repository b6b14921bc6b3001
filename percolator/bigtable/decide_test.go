package bigtable

import (
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// TestDecide checks how a conditional mutation of unknown outcome is
// decided from the row: by any one cell a branch set, so a commit whose
// notification was already run and deleted is still seen as applied.
func TestDecide(t *testing.T) {
	s := openGroupTest(t)
	ctx := t.Context()
	rec := percolator.Mutation{Op: percolator.SetCell, Family: "w", Column: "c", Ts: 20, Value: []byte("record")}
	notify := percolator.Mutation{Op: percolator.SetCell, Family: "n", Column: "c", Ts: 20}
	unlock := percolator.Mutation{Op: percolator.DeleteCell, Family: "l", Column: "c", Ts: 10}
	lock := percolator.Mutation{Op: percolator.SetCell, Family: "l", Column: "c", Ts: 30, Value: []byte("lock")}
	commit := []percolator.Mutation{rec, unlock, notify}
	// The commit was applied, then its notification run deleted n:c@20.
	if err := s.MutateRows(ctx, []percolator.RowMutation{{Row: "committed", Mutations: []percolator.Mutation{rec}}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		row                string
		ifMatch, ifNoMatch []percolator.Mutation
		decided, matched   bool
		err                bool
	}{
		{"IfMatchPartlyThere", "committed", commit, nil, true, true, false},
		{"IfNoMatchThere", "committed", []percolator.Mutation{lock}, []percolator.Mutation{rec}, true, false, false},
		{"NeitherThere", "empty", commit, []percolator.Mutation{lock}, false, false, false},
		{"NeitherThereOtherBranchEmpty", "empty", nil, []percolator.Mutation{lock}, false, false, false},
		{"DeleteOnlyBranch", "empty", []percolator.Mutation{unlock}, []percolator.Mutation{lock}, false, false, true},
		{"DeletesOnly", "empty", []percolator.Mutation{unlock}, nil, false, false, false},
		{"DeletesInBoth", "empty", []percolator.Mutation{unlock}, []percolator.Mutation{unlock}, false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			decided, matched, err := s.decide(ctx, tc.row, tc.ifMatch, tc.ifNoMatch)
			if decided != tc.decided || matched != tc.matched || (err != nil) != tc.err {
				t.Errorf("decide = %v, %v, %v; want %v, %v, error %v", decided, matched, err, tc.decided, tc.matched, tc.err)
			}
		})
	}
}
