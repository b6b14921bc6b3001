package percolator

import "fmt"

// covered appends to done the deletions of the notifications that a run of
// o on t's row, which began at startTs, answers (Observer.Covers): those of
// the covered columns that t saw, ready or waiting, older than startTs.
func covered(done []Mutation, o *observerState, t task, startTs uint64) []Mutation {
	for _, col := range o.Covers {
		for _, notes := range [][]note{t.notes, t.waits} {
			for _, n := range notes {
				if n.col != col {
					continue
				}
				for _, v := range n.versions {
					if v < startTs {
						done = append(done, Mutation{Op: DeleteCell, Family: famNotify, Column: col, Ts: v})
					}
				}
			}
		}
	}
	return done
}

// checkCovers returns an error if o covers a column that is not weak: a
// strong notification's observer must see its ack.
func checkCovers(db *DB, o Observer) error {
	for _, col := range o.Covers {
		if !db.weak[col] {
			return fmt.Errorf("%w: observer %q covers %q, which is not in Options.Weak", ErrInvalid, o.Name, col)
		}
	}
	return nil
}
