package percolator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Failure is a notification whose observer kept failing and was parked:
// its notification is gone and nothing retries it until Retry is called.
// Parked failures live in the table, so they survive restarts.
type Failure struct {
	Observer string    `json:"observer"`
	Row      string    `json:"row"`
	Column   string    `json:"column"`
	Error    string    `json:"error"`
	Attempts int       `json:"attempts"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
}

// Failure records: row \x00failed/OBSERVER\x00ROW, column = observed column.
const failedPrefix = "\x00failed/"

func failedRow(observer, row string) string { return failedPrefix + observer + "\x00" + row }

// park records f and deletes the notification versions it was about, in
// that order: a crash in between leaves both, and the notification is tried
// again.
func (db *DB) park(ctx context.Context, f Failure, versions []uint64) error {
	rec, err := json.Marshal(f)
	if err != nil {
		return err
	}
	del := make([]Mutation, len(versions))
	for i, v := range versions {
		del[i] = Mutation{Op: DeleteCell, Family: famNotify, Column: f.Column, Ts: v}
	}
	if err := db.st.MutateRows(ctx, []RowMutation{{Row: failedRow(f.Observer, f.Row), Mutations: []Mutation{
		{Op: SetCell, Family: famMeta, Column: f.Column, Ts: 1, Value: rec},
	}}}); err != nil {
		return fmt.Errorf("percolator: park failure: %w", err)
	}
	if err := db.st.MutateRows(ctx, []RowMutation{{Row: f.Row, Mutations: del}}); err != nil {
		return fmt.Errorf("percolator: park failure: %w", err)
	}
	return nil
}

// Failed lists the parked failures, by observer and row.
func (db *DB) Failed(ctx context.Context) ([]Failure, error) {
	var out []Failure
	var decodeErr error
	err := db.st.ReadRows(ctx, failedPrefix, failedPrefix[:len(failedPrefix)-1]+"0", func(_ string, cells []Cell) bool {
		for _, c := range cells {
			var f Failure
			if err := json.Unmarshal(c.Value, &f); err != nil {
				decodeErr = fmt.Errorf("percolator: corrupt failure record: %w", err)
				return false
			}
			out = append(out, f)
		}
		return true
	}, Filter{Family: famMeta, Latest: true})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return nil, fmt.Errorf("percolator: list failures: %w", err)
	}
	return out, nil
}

// Retry brings a parked failure back: the observer runs again on its row
// (even if the column did not change since), and the record is removed.
func (db *DB) Retry(ctx context.Context, f Failure) error {
	if !strings.HasPrefix(failedRow(f.Observer, f.Row), failedPrefix) || f.Row == "" || f.Column == "" {
		return fmt.Errorf("%w: failure without row or column", ErrInvalid)
	}
	var version uint64
	if db.weak[f.Column] {
		ts, err := db.orc.Next(ctx)
		if err != nil {
			return err
		}
		version = ts
	} else {
		// Forget the observer's acknowledgement, and notify at the start of
		// the newest write, so the run that follows deletes the notification.
		err := db.Update(ctx, func(tx *Tx) error {
			var wc Cell
			ok, err := tx.readWrite(ctx, f.Row, f.Column, &wc)
			if err != nil {
				return err
			}
			version = 1
			if ok {
				rec, err := decodeWrite(wc.Value)
				if err != nil {
					return err
				}
				version = rec.startTs
			}
			return tx.bufferInternal(f.Row, ackColumn(f.Observer), pending{kind: kindDelete})
		})
		if err != nil {
			return fmt.Errorf("percolator: retry: %w", err)
		}
	}
	if err := db.setNotify(ctx, f.Row, f.Column, version); err != nil {
		return err
	}
	err := db.st.MutateRows(ctx, []RowMutation{{Row: failedRow(f.Observer, f.Row), Mutations: []Mutation{
		{Op: DeleteOlder, Family: famMeta, Column: f.Column, Ts: MaxTs},
	}}})
	if err != nil {
		return fmt.Errorf("percolator: retry: remove failure record: %w", err)
	}
	return nil
}
