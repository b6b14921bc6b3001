package badger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

// TestStoreBlobs runs the contract suite with every value of a byte or
// more stored as a blob.
func TestStoreBlobs(t *testing.T) {
	storetest.Run(t, func(t *testing.T) percolator.Store {
		s, err := badger.Open(t.TempDir(), badger.Options{BlobBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		return blobChecked{s, t}
	})
}

// blobChecked is a store that checks its blobs when it is closed.
type blobChecked struct {
	*badger.Store
	t *testing.T
}

func (s blobChecked) Close() error {
	if err := s.CheckBlobs(); err != nil {
		s.t.Error(err)
	}
	return s.Store.Close()
}

// Blobs of deleted versions give their space back: written, deleted (by
// DeleteCell, DeleteOlder and an overwrite of the same version) and
// compacted, they leave the value log to what is live.
func TestBlobSpaceReclaimed(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), badger.Options{})
	const rows, size = 64, 256 << 10 // 16 MiB a round
	val := func(i, round int) []byte {
		return bytes.Repeat([]byte{byte(i), byte(round)}, size/2)
	}
	var peak int64
	for round := range 12 {
		ts := uint64(10 * (round + 1))
		for i := range rows {
			row := fmt.Sprintf("r%03d", i)
			var muts []percolator.Mutation
			switch i % 3 {
			case 0: // a new version; the older ones go
				muts = []percolator.Mutation{
					{Op: percolator.SetCell, Family: "d", Column: "body", Ts: ts, Value: val(i, round)},
					delOlder("d", "body", ts),
				}
			case 1: // the same version again
				muts = []percolator.Mutation{{Op: percolator.SetCell, Family: "d", Column: "body", Ts: 5, Value: val(i, round)}}
			case 2: // a new version, then the old one deleted alone
				muts = []percolator.Mutation{{Op: percolator.SetCell, Family: "d", Column: "body", Ts: ts, Value: val(i, round)}}
				if round > 0 {
					muts = append(muts, del("d", "body", ts-10))
				}
			}
			mutate(t, s, row, muts...)
		}
		if err := s.Compact(ctx, ts); err != nil {
			t.Fatal(err)
		}
		lsm, vlog := s.Size()
		peak = max(peak, lsm+vlog)
		t.Logf("round %d: lsm %d KiB, vlog %d MiB, %d blobs", round, lsm>>10, vlog>>20, s.Blobs())
		if err := s.CheckBlobs(); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Blobs(); n != rows {
		t.Errorf("%d blobs, want one a row (%d)", n, rows)
	}
	for i := range rows {
		cells, err := s.ReadRow(ctx, fmt.Sprintf("r%03d", i), percolator.Filter{Family: "d", Column: "body", Latest: true})
		if err != nil || len(cells) != 1 || !bytes.Equal(cells[0].Value, val(i, 11)) {
			t.Fatalf("row %d: %d cells, %v", i, len(cells), err)
		}
	}
	// 12 rounds wrote 192 MiB; 16 MiB are live.
	if written := int64(12 * rows * size); peak > written/3 {
		t.Fatalf("peak %d MiB on disk for %d MiB written, 16 live: space not reclaimed", peak>>20, written>>20)
	}
}

// A write of several versions that stops after any of its steps, as a
// crash would stop it, leaves no cell whose blob is missing: blobs are
// written before the cells that refer to them and deleted after the
// cells that referred to them. The store is reopened after each stop.
func TestBlobWriteStopsNoneMissing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := badger.Open(dir, badger.Options{BlobBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	if err := s.EnsureFamilies(ctx, storetest.Families); err != nil {
		t.Fatal(err)
	}
	errCrash := errors.New("crash")
	r := rand.New(rand.NewPCG(1, 2))
	stop := -1 // the step a write stops before; -1: none
	badger.SetFlushStepHook(t, func(step int) error {
		if step == stop {
			return errCrash
		}
		return nil
	})
	const writes = 120
	stops := 0
	for i := range writes {
		row := fmt.Sprintf("r%d", r.IntN(8))
		ts := uint64(10 + i)
		// Several versions in one write: a new blob, a deletion of an
		// older one, and a write record at another version.
		muts := []percolator.Mutation{
			set("d", "body", ts, fmt.Sprintf("a value of some length %d", i)),
			delOlder("d", "body", ts),
			set("w", "body", ts+1, "w"),
		}
		if r.IntN(4) == 0 {
			muts = append(muts, del("d", "body", ts))
		}
		stop = r.IntN(4) // 3: no stop
		err := s.MutateRows(ctx, []percolator.RowMutation{{Row: row, Mutations: muts}})
		if err != nil && !errors.Is(err, errCrash) {
			t.Fatal(err)
		}
		if err != nil {
			stops++
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = badger.Open(dir, badger.Options{BlobBytes: 8}); err != nil {
				t.Fatal(err)
			}
		}
		stopped := stop
		stop = -1
		if err := s.CheckBlobsFound(); err != nil {
			t.Fatalf("after write %d (stopped before step %d): %v", i, stopped, err)
		}
		if _, err := s.ReadRow(ctx, row, percolator.Filter{Family: "d"}); err != nil {
			t.Fatalf("after write %d (stopped before step %d): %v", i, stopped, err)
		}
	}
	if stops == 0 {
		t.Fatal("no write was stopped")
	}
	t.Logf("%d of %d writes stopped", stops, writes)
}

// A write that sets one cell twice, at one version, keeps the blob of the
// second value only, whether the second value is a blob or not.
func TestBlobSetTwiceInOneWrite(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), badger.Options{BlobBytes: 8})
	for i, second := range []string{"a second long value", "short"} {
		row := fmt.Sprintf("r%d", i)
		mutate(t, s, row,
			set("d", "body", 5, "a first long value"),
			set("d", "body", 5, second))
		if cells := read(t, s, row, percolator.Filter{Family: "d"}); len(cells) != 1 || string(cells[0].Value) != second {
			t.Fatalf("row %s reads %v, want %q", row, cells, second)
		}
		if err := s.CheckBlobs(); err != nil {
			t.Fatalf("second value %q: %v", second, err)
		}
	}
	if err := s.Compact(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckBlobs(); err != nil {
		t.Fatal(err)
	}
}
