package observers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Cluster returns the observer that keeps a page in the duplicate cluster
// of its content hash (webtable.Hash): a member row of its own
// (webtable.MemberRow), moved when the content changes, and a weak
// notification of the cluster row !dup/HASH. Members are rows of their
// own, so that no row grows with a cluster (the same page on thousands of
// URLs), and the election is a weak notification, so hundreds of
// duplicates arriving at once never conflict (section 2.4 of the paper).
func Cluster() percolator.Observer {
	return percolator.Observer{Name: "cluster", Column: webtable.Hash, Run: cluster}
}

func cluster(ctx context.Context, tx *percolator.Tx, row, col string) error {
	h, err := tx.Get(ctx, row, col)
	if err != nil {
		return err
	}
	old, err := tx.Get(ctx, row, webtable.ClusterHash)
	if err != nil {
		return err
	}
	if string(h) == string(old) && (h == nil) == (old == nil) {
		return nil
	}
	if old != nil {
		if err := webtable.LeaveCluster(tx, string(old), row); err != nil {
			return err
		}
		if err := tx.Notify(webtable.ClusterPrefix+string(old), webtable.DupDirty); err != nil {
			return err
		}
	}
	if h == nil {
		// Out of every cluster: no longer indexed.
		for _, c := range []string{webtable.ClusterHash, webtable.ClusterOf, webtable.ClusterSize} {
			if err := tx.Delete(row, c); err != nil {
				return err
			}
		}
		return tx.Notify(row, webtable.DocDirty)
	}
	k := webtable.ClusterPrefix + string(h)
	if err := webtable.JoinCluster(tx, string(h), row); err != nil {
		return err
	}
	if err := tx.Set(row, webtable.ClusterHash, h); err != nil {
		return err
	}
	if err := tx.Set(row, webtable.ClusteredAt, strconv.AppendInt(nil, time.Now().UnixMilli(), 10)); err != nil {
		return err
	}
	return tx.Notify(k, webtable.DupDirty)
}

// Elect returns the observer that elects a cluster's canonical page: the
// member with the highest PageRank, ties broken by the shorter URL, then
// the lexicographically smaller (see Canonical). It records the canonical
// and the size in every member and notifies the documents that change.
func Elect() percolator.Observer {
	// An election answers the background one's notifications too.
	return percolator.Observer{Name: "elect", Column: webtable.DupDirty, Covers: []string{webtable.DupRanked}, Run: elect}
}

// TieBand is how close (relative) two PageRanks must be to count as a tie
// in an election. PageRank is kept to within about 1% of its exact value,
// so members whose ranks are closer than that (duplicates linked alike
// have equal exact ranks) are told apart by their URLs, not by which of
// them the rank observer last rounded up.
const TieBand = 0.005

type candidate struct {
	row, url string
	rank     float64
}

// better reports whether a should be canonical rather than b, among
// members whose ranks tie.
func better(a, b candidate) bool {
	if len(a.url) != len(b.url) {
		return len(a.url) < len(b.url)
	}
	return a.url < b.url
}

// Canonical returns the row that wins the election among members, given
// their PageRank: among the members whose rank is within TieBand of the
// highest, the one with the shortest URL, then the lexicographically
// smallest. It is the rule Elect applies, exported for the batch
// recomputation.
func Canonical(members []string, rankOf func(row string) float64) string {
	top := math.Inf(-1)
	cs := make([]candidate, len(members))
	for i, m := range members {
		u, err := webtable.URL(m)
		if err != nil {
			u = m
		}
		cs[i] = candidate{row: m, url: u, rank: rankOf(m)}
		top = max(top, cs[i].rank)
	}
	var best *candidate
	for i := range cs {
		if c := &cs[i]; c.rank >= top-TieBand*math.Abs(top) && (best == nil || better(*c, *best)) {
			best = c
		}
	}
	if best == nil {
		return ""
	}
	return best.row
}

// memberSize is the webtable.ClusterSize an election writes in the rows
// of a cluster of n members: "1" alone, else "2" (two or more). What
// reads it asks whether a page is alone (rank's alone); writing the exact
// size would rewrite every member's row each time one joins, so a cluster
// of the same page on thousands of URLs (a soft 404) would cost writes in
// the square of its members. The document counts them all (ClusterSize).
func memberSize(n int) string {
	if n <= 1 {
		return "1"
	}
	return "2"
}

// colMembers, in a cluster row: a digest of the members at the last
// election, so the canonical's document is rebuilt only when they change.
const colMembers = "dup:members"

// ElectRank returns the election observer of clusters a member of which
// changed PageRank (webtable.DupRanked), in the background like
// ExportLinksObserver.
func ElectRank() percolator.Observer {
	return percolator.Observer{Name: "elect-rank", Column: webtable.DupRanked, Background: true,
		Delay: BackgroundDelay, MaxDelay: BackgroundMaxDelay, Run: elect}
}

func elect(ctx context.Context, tx *percolator.Tx, k, _ string) error {
	c, err := webtable.ReadCluster(ctx, tx, strings.TrimPrefix(k, webtable.ClusterPrefix))
	if err != nil {
		return err
	}
	members, old, oldDigest := c.Members, c.Cells[webtable.ClusterCanon], c.Cells[colMembers]
	if len(members) == 0 {
		if old != nil {
			if err := tx.Delete(k, webtable.ClusterCanon); err != nil {
				return err
			}
		}
		if oldDigest != nil {
			return tx.Delete(k, colMembers)
		}
		return nil
	}
	// One call for every member's cells on Bigtable, not three a member.
	if err := tx.Prefetch(ctx, members, webtable.Rank, webtable.ClusterOf, webtable.ClusterSize); err != nil {
		return err
	}
	ranks := make(map[string]float64, len(members))
	values := make(map[string][]byte, len(members))
	for _, m := range members {
		v, err := tx.Get(ctx, m, webtable.Rank)
		if err != nil {
			return err
		}
		if v == nil {
			// Not ranked yet: the rank observer tells this election when
			// it writes the member's value, so wait for that instead of
			// electing (and exporting) twice.
			return nil
		}
		ranks[m], _ = strconv.ParseFloat(string(v), 64)
		values[m] = v
	}
	canon := Canonical(members, func(r string) float64 { return ranks[r] })
	size := memberSize(len(members))
	rebuild := string(old) != canon
	if rebuild {
		if err := tx.Set(k, webtable.ClusterCanon, []byte(canon)); err != nil {
			return err
		}
		if old != nil {
			if err := tx.Notify(string(old), webtable.DocDirty); err != nil {
				return err
			}
		}
	}
	if d := membersDigest(members); d != string(oldDigest) {
		rebuild = true
		if err := tx.Set(k, colMembers, []byte(d)); err != nil {
			return err
		}
	}
	for _, m := range members {
		before, err := tx.Get(ctx, m, webtable.ClusterOf)
		if err != nil {
			return err
		}
		was, err := tx.Get(ctx, m, webtable.ClusterSize)
		if err != nil {
			return err
		}
		if string(was) != size {
			if err := tx.Set(m, webtable.ClusterSize, []byte(size)); err != nil {
				return err
			}
		}
		if string(was) == "1" && size != "1" {
			// The rank observer tells no election of a member alone in its
			// cluster (rank's alone): rewriting m's PageRank as read here
			// makes a rank transaction that read m alone and writes a
			// newer value after this snapshot conflict with this one.
			if err := tx.Set(m, webtable.Rank, values[m]); err != nil {
				return err
			}
		}
		if string(before) == canon {
			continue
		}
		if err := tx.Set(m, webtable.ClusterOf, []byte(canon)); err != nil {
			return err
		}
		// m became or stopped being a canonical: a node of the near-copy
		// graph (see near.go).
		if (string(before) == m) != (canon == m) {
			if err := tx.Notify(m, webtable.NearDirty); err != nil {
				return err
			}
		}
		// m's own document changes standing (it may have to leave the
		// index or enter it). A duplicate elected for the first time has
		// no document, and the canonical's is rebuilt below.
		if before != nil || canon == m {
			if err := tx.Notify(m, webtable.DocDirty); err != nil {
				return err
			}
		}
		// Anchors from m are credited to its canonical: the pages m links
		// to must rebuild their documents when that changes (not when a
		// page is first elected canonical of itself).
		if !(before == nil && canon == m) {
			if err := notifyTargets(ctx, tx, m); err != nil {
				return err
			}
		}
	}
	if !rebuild {
		return nil
	}
	// The canonical's document lists the members and gathers their anchors.
	return tx.Notify(canon, webtable.DocDirty)
}

// membersDigest identifies a cluster's membership.
func membersDigest(members []string) string {
	h := sha256.New()
	for _, m := range members {
		h.Write([]byte(m))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// notifyTargets notifies the documents of the pages row links to, in the
// background (webtable.DocLinked): only their anchors change.
func notifyTargets(ctx context.Context, tx *percolator.Tx, row string) error {
	b, err := tx.Get(ctx, row, webtable.LinksOut)
	if err != nil || len(b) == 0 {
		return err
	}
	var out map[string]string
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("decode %s of %q: %w", webtable.LinksOut, row, err)
	}
	for t := range out {
		if err := tx.Notify(t, webtable.DocLinked); err != nil {
			return err
		}
	}
	return nil
}
