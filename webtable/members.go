package webtable

import (
	"context"
	"slices"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
)

// Rows that a page adds to a row of another page or of a cluster would
// grow without bound on a real site: the same error page served on every
// URL makes a duplicate cluster of thousands, and a site may redirect
// thousands of old URLs to its home page. So each such entry is a row of
// its own, keyed by the row it belongs to: the key space grows, no row
// does.
//
//   - A duplicate cluster's member: MemberRow(hash, page), column
//     ClusterMember (the cluster row ClusterPrefix+hash keeps the
//     election's cells).
//   - A redirect: AliasRow(target, redirecting page), column AliasFrom.
//
// Tables written before kept them as cells (MemberPrefix+page in the
// cluster row, AliasPrefix+page in the target's row). Those stay where
// they are and are read alongside (ReadCluster, ScanAliases); the writers
// delete both forms when an entry goes and add only rows, so no old row
// grows.

const (
	// MemberRowPrefix begins the member rows; MemberRowEnd ends them.
	MemberRowPrefix = "!dupm/"
	MemberRowEnd    = "!dupm0"
	// ClusterMember is the column of a member row (no value).
	ClusterMember = "dup:member"

	// AliasRowPrefix begins the redirect rows; AliasRowEnd ends them.
	AliasRowPrefix = "!alias/"
	AliasRowEnd    = "!alias0"
	// AliasFrom is the column of a redirect row (no value).
	AliasFrom = "alias:from"
)

// subRow is the row, under prefix, of an entry item of owner (a
// cluster, a page): prefix + owner + NUL + item, so that an owner's
// entries are one range of rows (subRange).
func subRow(prefix, owner, item string) string {
	return prefix + owner + "\x00" + item
}

// subRange returns the rows of owner's entries under prefix: [start, end).
func subRange(prefix, owner string) (start, end string) {
	return prefix + owner + "\x00", prefix + owner + "\x01"
}

// parseSubRow returns the owner and the item of an entry's row under
// prefix.
func parseSubRow(prefix, row string) (owner, item string, ok bool) {
	rest, found := strings.CutPrefix(row, prefix)
	if !found {
		return "", "", false
	}
	owner, item, ok = strings.Cut(rest, "\x00")
	return owner, item, ok && owner != "" && item != ""
}

// MemberRow is the row saying that page is a member of the cluster of
// content hash.
func MemberRow(hash, page string) string { return subRow(MemberRowPrefix, hash, page) }

// MemberRange returns the member rows of the cluster of hash: [start, end).
func MemberRange(hash string) (start, end string) { return subRange(MemberRowPrefix, hash) }

// ParseMemberRow returns the cluster hash and the page of a member row.
func ParseMemberRow(row string) (hash, page string, ok bool) {
	return parseSubRow(MemberRowPrefix, row)
}

// Cluster is what a duplicate cluster's rows hold.
type Cluster struct {
	// Members are the member pages' rows, sorted, each once.
	Members []string
	// Cells are the cluster row's other cells by column (ClusterCanon and
	// the election's own).
	Cells map[string][]byte
}

// ReadCluster reads the cluster of content hash as tx sees it: its member
// rows and its cluster row (with the member cells of tables written
// before), in one store call on a store that reads several ranges at once.
func ReadCluster(ctx context.Context, tx *percolator.Tx, hash string) (Cluster, error) {
	k := ClusterPrefix + hash
	start, end := MemberRange(hash)
	// The cluster row sorts first: "!dup/" < "!dupm/".
	ranges := []percolator.KeyRange{{Start: k, End: k + "\x00"}, {Start: start, End: end}}
	c := Cluster{Cells: make(map[string][]byte)}
	cells := false // member cells of a table written before
	err := tx.ScanRanges(ctx, ranges, "", func(r int, row, col string, v []byte) bool {
		switch {
		case r == 1:
			if col == ClusterMember {
				c.Members = append(c.Members, row[len(start):])
			}
		case strings.HasPrefix(col, MemberPrefix):
			c.Members = append(c.Members, col[len(MemberPrefix):])
			cells = true
		default:
			c.Cells[col] = v
		}
		return true
	})
	if err != nil {
		return Cluster{}, err
	}
	if cells {
		slices.Sort(c.Members)
		c.Members = slices.Compact(c.Members)
	}
	return c, nil
}

// JoinCluster makes page a member of the cluster of hash in tx.
func JoinCluster(tx *percolator.Tx, hash, page string) error {
	return tx.Set(MemberRow(hash, page), ClusterMember, nil)
}

// LeaveCluster takes page out of the cluster of hash in tx, in both forms.
func LeaveCluster(tx *percolator.Tx, hash, page string) error {
	if err := tx.Delete(MemberRow(hash, page), ClusterMember); err != nil {
		return err
	}
	return tx.Delete(ClusterPrefix+hash, MemberPrefix+page)
}

// AliasRow is the row saying that page from redirects to target.
func AliasRow(target, from string) string { return subRow(AliasRowPrefix, target, from) }

// AliasRange returns the redirect rows of target: [start, end).
func AliasRange(target string) (start, end string) { return subRange(AliasRowPrefix, target) }

// ParseAliasRow returns the target and the redirecting page of a redirect
// row.
func ParseAliasRow(row string) (target, from string, ok bool) {
	return parseSubRow(AliasRowPrefix, row)
}

// ScanAliases calls fn with every page redirecting to target as tx sees
// it (its redirect rows, then the cells of a table written before), until
// fn returns false: one store call on a store that reads several ranges
// at once. The observers never leave a page in both forms.
func ScanAliases(ctx context.Context, tx *percolator.Tx, target string, fn func(from string) bool) error {
	start, end := AliasRange(target)
	// The redirect rows sort first: page rows never begin with "!".
	ranges := []percolator.KeyRange{{Start: start, End: end}, {Start: target, End: target + "\x00"}}
	return tx.ScanRanges(ctx, ranges, AliasPrefix, func(r int, row, col string, _ []byte) bool {
		switch {
		case r == 0:
			if col != AliasFrom {
				return true
			}
			return fn(row[len(start):])
		default:
			return fn(col[len(AliasPrefix):])
		}
	})
}

// AddAlias records in tx that page from redirects to target.
func AddAlias(tx *percolator.Tx, target, from string) error {
	return tx.Set(AliasRow(target, from), AliasFrom, nil)
}

// RemoveAlias records in tx that page from no longer redirects to target,
// in both forms.
func RemoveAlias(tx *percolator.Tx, target, from string) error {
	if err := tx.Delete(AliasRow(target, from), AliasFrom); err != nil {
		return err
	}
	return tx.Delete(target, AliasPrefix+from)
}
