package observers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// rowsOf counts, as the table is now, the cells of row and the rows in
// [start, end).
func rowsOf(t *testing.T, e *env, row, start, end string) (cells int, rows map[string]bool) {
	t.Helper()
	rows = make(map[string]bool)
	err := e.db.View(bg, func(tx *percolator.Tx) error {
		err := tx.Scan(bg, row, row+"\x00", "", func(_, _ string, _ []byte) bool {
			cells++
			return true
		})
		if err != nil {
			return err
		}
		return tx.Scan(bg, start, end, "", func(r, _ string, _ []byte) bool {
			rows[r] = true
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return cells, rows
}

// A cluster of many copies (the same page on many URLs) and a page many
// URLs redirect to: each member and each redirect is a row of its own, so
// neither the cluster's row nor the target's grows with them; the chain
// agrees with the batch (the canonical's document lists every member and
// gathers the anchors of the links to the redirects) as members leave and
// redirects go.
func TestClustersAndRedirectsGrowNoRow(t *testing.T) {
	const copies, redirects = 40, 30
	e := newEnv(t)
	target := host + "/target"
	e.fetch(target, 200, page("Target", "the page the old addresses lead to", "/copy0", "a copy"))
	for i := range copies {
		e.fetch(fmt.Sprintf("%s/copy%d", host, i), 200, page("Not found", "this page is not here any more", "/target", "home"))
	}
	for i := range redirects {
		e.fetch(fmt.Sprintf("%s/old%d", host, i), 301, "", webtable.Redirect, target)
	}
	// Pages linking to the old addresses: their anchors are the target's.
	for i := range 12 {
		e.fetch(fmt.Sprintf("%s/p%d", host, i), 200, page(fmt.Sprintf("Page %d", i), fmt.Sprintf("a page numbered %d", i),
			fmt.Sprintf("/old%d", i), fmt.Sprintf("old link %d", i), fmt.Sprintf("/p%d", (i+1)%12), "next"))
	}
	hash := ""
	check := func(step string, members, aliases, linked int) {
		t.Helper()
		e.idle()
		b := verify(t, e)
		if hash == "" {
			hash = e.get(host+"/copy0", webtable.Hash)
		}
		k := webtable.ClusterPrefix + hash
		start, end := webtable.MemberRange(hash)
		cells, rows := rowsOf(t, e, k, start, end)
		if len(rows) != members || cells > 2 {
			t.Errorf("%s: %d member rows, %d cells in the cluster row; want %d, at most 2", step, len(rows), cells, members)
		}
		tr := mustRow(target)
		start, end = webtable.AliasRange(tr)
		_, rows = rowsOf(t, e, tr, start, end)
		if len(rows) != aliases {
			t.Errorf("%s: %d redirect rows, want %d", step, len(rows), aliases)
		}
		err := e.db.View(bg, func(tx *percolator.Tx) error {
			return tx.Scan(bg, tr, tr+"\x00", webtable.AliasPrefix, func(_, col string, _ []byte) bool {
				t.Errorf("%s: the target's row holds %s", step, col)
				return true
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		doc := e.index()[target]
		if doc == nil {
			t.Fatalf("%s: the target has no document", step)
		}
		n := 0
		for _, a := range anchors(doc) {
			if strings.HasPrefix(a, "old link") {
				n++
			}
		}
		if n != linked {
			t.Errorf("%s: the target's document has %d anchors of links to redirects, want %d", step, n, linked)
		}
		canon := b.Canonical[mustRow(fmt.Sprintf("%s/copy%d", host, copies-1))]
		if got := e.index()[mustURL(t, canon)]; got == nil || got.ClusterSize != members {
			t.Errorf("%s: the canonical's document %+v; want cluster size %d", step, got, members)
		}
	}
	check("built", copies, redirects, 12)
	// Members leave (their content changes) and redirects go.
	for i := range 10 {
		e.fetch(fmt.Sprintf("%s/copy%d", host, i), 200, page("Copy", fmt.Sprintf("this copy now says %d", i)))
		e.fetch(fmt.Sprintf("%s/old%d", host, i), 200, page("Old", fmt.Sprintf("an old address, a page again %d", i)))
	}
	check("changed", copies-10, redirects-10, 2)
}

func mustURL(t *testing.T, row string) string {
	t.Helper()
	u, err := webtable.URL(row)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A table written before members and redirects had rows of their own
// keeps them as cells (m:PAGE in the cluster row, alias:PAGE in the
// target's row): the chain reads them alongside the rows, Verify agrees,
// and when such a member leaves or such a redirect goes, its cell goes
// and no new one is written.
func TestOldMemberAndAliasCells(t *testing.T) {
	e := newEnv(t)
	target := host + "/target"
	e.fetch(target, 200, page("Target", "the page the old addresses lead to"))
	for i := range 6 {
		e.fetch(fmt.Sprintf("%s/copy%d", host, i), 200, page("Not found", "this page is not here any more", "/target", "home"))
		e.fetch(fmt.Sprintf("%s/old%d", host, i), 301, "", webtable.Redirect, target)
	}
	for i := range 12 {
		e.fetch(fmt.Sprintf("%s/p%d", host, i), 200, page(fmt.Sprintf("Page %d", i), fmt.Sprintf("a page numbered %d", i),
			fmt.Sprintf("/old%d", i%6), fmt.Sprintf("old link %d", i), fmt.Sprintf("/p%d", (i+1)%12), "next"))
	}
	e.idle()
	verify(t, e)
	hash := e.get(host+"/copy0", webtable.Hash)
	tr := mustRow(target)
	// Make the table as it was written before: every member row and
	// redirect row becomes a cell (no observed column changes).
	err := e.db.Update(bg, func(tx *percolator.Tx) error {
		var members, froms []string
		start, end := webtable.MemberRange(hash)
		err := tx.Scan(bg, start, end, "", func(r, _ string, _ []byte) bool {
			members = append(members, r[len(start):])
			return true
		})
		if err != nil {
			return err
		}
		start, end = webtable.AliasRange(tr)
		err = tx.Scan(bg, start, end, "", func(r, _ string, _ []byte) bool {
			froms = append(froms, r[len(start):])
			return true
		})
		if err != nil {
			return err
		}
		if len(members) != 6 || len(froms) != 6 {
			t.Fatalf("%d member rows and %d redirect rows, want 6 each", len(members), len(froms))
		}
		for _, m := range members {
			tx.Delete(webtable.MemberRow(hash, m), webtable.ClusterMember)
			tx.Set(webtable.ClusterPrefix+hash, webtable.MemberPrefix+m, nil)
		}
		for _, f := range froms {
			tx.Delete(webtable.AliasRow(tr, f), webtable.AliasFrom)
			tx.Set(tr, webtable.AliasPrefix+f, nil)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	verify(t, e)
	// Members leave and join, redirects go and come.
	for i := range 3 {
		e.fetch(fmt.Sprintf("%s/copy%d", host, i), 200, page("Copy", fmt.Sprintf("this copy now says %d", i)))
		e.fetch(fmt.Sprintf("%s/old%d", host, i), 200, page("Old", fmt.Sprintf("an old address, a page again %d", i)))
	}
	e.fetch(host+"/copy9", 200, page("Not found", "this page is not here any more", "/target", "home"))
	e.fetch(host+"/old9", 301, "", webtable.Redirect, target)
	e.idle()
	verify(t, e)
	var cells []string
	err = e.db.View(bg, func(tx *percolator.Tx) error {
		for _, r := range []string{webtable.ClusterPrefix + hash, tr} {
			err := tx.Scan(bg, r, r+"\x00", "", func(_, col string, _ []byte) bool {
				if strings.HasPrefix(col, webtable.MemberPrefix) || strings.HasPrefix(col, webtable.AliasPrefix) {
					cells = append(cells, col)
				}
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 6 {
		t.Errorf("old cells left %q; want the 3 members and 3 redirects that stayed", cells)
	}
	for _, c := range cells {
		for i := range 3 {
			for _, p := range []string{"copy", "old"} {
				if strings.HasSuffix(c, fmt.Sprintf("/%s%d", p, i)) {
					t.Errorf("old cell %s left after its page changed", c)
				}
			}
		}
	}
}
