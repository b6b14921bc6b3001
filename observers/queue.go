package observers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// The export queues: entries the serving feeders apply in version order,
// one queue per registered index, and the page row's record of what was
// exported.

// docDigest identifies a document's exported content: PageRank as
// webtable.RoundRank has it, the fetch time not at all (a recrawl that
// changed nothing is not an update).
func docDigest(d *webtable.Doc) string {
	c := *d
	c.FetchedAt = time.Time{}
	c.PageRank, _ = strconv.ParseFloat(webtable.RoundRank(d.PageRank), 64)
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// queues returns the export queues of the serving indexes registered as
// tx sees the registry (webtable.IndexPrefix): the default index's alone
// while none is. An index registered after tx began gets no entry from
// it; its feeder backfills what it missed from the table.
func queues(ctx context.Context, tx *percolator.Tx) ([]webtable.Queue, error) {
	var qs []webtable.Queue
	err := tx.Scan(ctx, webtable.IndexPrefix, webtable.IndexPrefix+"\xff", webtable.IndexState, func(row, _ string, _ []byte) bool {
		qs = append(qs, webtable.QueueOf(strings.TrimPrefix(row, webtable.IndexPrefix)))
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		qs = append(qs, webtable.QueueOf(webtable.DefaultIndex))
	}
	return qs, nil
}

// queue writes the export entry e (JSON) into every registered index's
// queue.
func queue(ctx context.Context, tx *percolator.Tx, row string, e []byte) error {
	qs, err := queues(ctx, tx)
	if err != nil {
		return err
	}
	for _, q := range qs {
		if err := tx.Set(q.Row(tx.StartTs(), row), webtable.ExportDoc, e); err != nil {
			return err
		}
	}
	return nil
}

func enqueue(ctx context.Context, tx *percolator.Tx, row string, doc *webtable.Doc, digest string) error {
	e, err := json.Marshal(webtable.Export{Op: webtable.OpUpsert, Version: tx.StartTs(), Row: row, URL: doc.URL, Doc: doc})
	if err != nil {
		return err
	}
	if err := queue(ctx, tx, row, e); err != nil {
		return err
	}
	last, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	for _, w := range []struct {
		row, col string
		val      []byte
	}{
		{row, webtable.ExportDigest, []byte(digest)},
		{row, webtable.ExportLast, last},
		{row, webtable.ExportRank, []byte(webtable.RoundRank(doc.PageRank))},
		{row, webtable.ExportedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10))},
		{row, webtable.ExportVer, []byte(strconv.FormatUint(tx.StartTs(), 10))},
		{webtable.HostRow(row), webtable.HostPagePrefix + row, []byte(strconv.Itoa(doc.CrossHostAnchors()))},
	} {
		if err := tx.Set(w.row, w.col, w.val); err != nil {
			return err
		}
	}
	return nil
}

func unexport(ctx context.Context, tx *percolator.Tx, row string) error {
	u, _ := webtable.URL(row)
	e, err := json.Marshal(webtable.Export{Op: webtable.OpDelete, Version: tx.StartTs(), Row: row, URL: u})
	if err != nil {
		return err
	}
	if err := queue(ctx, tx, row, e); err != nil {
		return err
	}
	for _, c := range []struct{ row, col string }{
		{row, webtable.ExportDigest}, {row, webtable.ExportLast}, {row, webtable.ExportRank}, {webtable.HostRow(row), webtable.HostPagePrefix + row},
	} {
		if err := tx.Delete(c.row, c.col); err != nil {
			return err
		}
	}
	if err := tx.Set(row, webtable.ExportVer, []byte(strconv.FormatUint(tx.StartTs(), 10))); err != nil {
		return err
	}
	return tx.Set(row, webtable.ExportedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10)))
}
