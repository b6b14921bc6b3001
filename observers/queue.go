package observers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
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

// registry caches the registered indexes (webtable.IndexPrefix) for the
// export transactions of one observer, which serves one table: a read at
// snapshot S stands for every transaction that starts by S plus
// webtable.RegistryTTL, so that an export needs no scan of its own
// (webtable.IndexSince is that much after a registration). It is safe for
// concurrent use.
type registry struct {
	mu sync.Mutex       // guards the fields below
	at uint64           // the snapshot of qs: the start timestamp of the transaction that read it
	qs []webtable.Queue // nil before the first read
}

// registryTTL is webtable.RegistryTTL in timestamp units.
var registryTTL = percolator.TsFromTime(time.UnixMilli(0).Add(webtable.RegistryTTL))

// queues returns the export queues of the indexes registered as of a
// snapshot no more than webtable.RegistryTTL older than tx's (read by tx
// when the cache is older). The slice is shared: do not change it.
func (r *registry) queues(ctx context.Context, tx *percolator.Tx) ([]webtable.Queue, error) {
	r.mu.Lock()
	if r.qs != nil && tx.StartTs() <= r.at+registryTTL {
		qs := r.qs
		r.mu.Unlock()
		return qs, nil
	}
	r.mu.Unlock()
	qs, final, err := queues(ctx, tx)
	if err != nil || !final {
		return qs, err
	}
	r.mu.Lock()
	if tx.StartTs() > r.at {
		r.at, r.qs = tx.StartTs(), qs
	}
	r.mu.Unlock()
	return qs, nil
}

// queues returns the export queues of the serving indexes registered as
// tx sees the registry (webtable.IndexPrefix): the default index's alone
// while none is. An index registered after tx began gets no entry from
// it; its feeder backfills what it missed from the table. In a table
// without a spread yet, tx records it (webtable.SpreadTx), and final is
// false: the queues hold only if tx commits.
func queues(ctx context.Context, tx *percolator.Tx) (qs []webtable.Queue, final bool, err error) {
	n, final, err := webtable.SpreadTx(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	err = tx.Scan(ctx, webtable.IndexPrefix, webtable.IndexPrefix+"\xff", webtable.IndexState, func(row, _ string, _ []byte) bool {
		qs = append(qs, webtable.SpreadQueue(strings.TrimPrefix(row, webtable.IndexPrefix), n))
		return true
	})
	if err != nil {
		return nil, false, err
	}
	if len(qs) == 0 {
		qs = append(qs, webtable.SpreadQueue(webtable.DefaultIndex, n))
	}
	return qs, final, nil
}

// queue writes the export entry e (JSON) into every registered index's
// queue.
func (r *registry) queue(ctx context.Context, tx *percolator.Tx, row string, e []byte) error {
	qs, err := r.queues(ctx, tx)
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

func (r *registry) enqueue(ctx context.Context, tx *percolator.Tx, row string, doc *webtable.Doc, digest string) error {
	e, err := json.Marshal(webtable.Export{Op: webtable.OpUpsert, Version: tx.StartTs(), Row: row, URL: doc.URL, Doc: doc})
	if err != nil {
		return err
	}
	if err := r.queue(ctx, tx, row, e); err != nil {
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
	} {
		if err := tx.Set(w.row, w.col, w.val); err != nil {
			return err
		}
	}
	return nil
}

func (r *registry) unexport(ctx context.Context, tx *percolator.Tx, row string) error {
	u, _ := webtable.URL(row)
	e, err := json.Marshal(webtable.Export{Op: webtable.OpDelete, Version: tx.StartTs(), Row: row, URL: u})
	if err != nil {
		return err
	}
	if err := r.queue(ctx, tx, row, e); err != nil {
		return err
	}
	for _, c := range []struct{ row, col string }{
		{row, webtable.ExportDigest}, {row, webtable.ExportLast}, {row, webtable.ExportRank},
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
