package crawl

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Recrawl makes the pages at urls due at when (now if zero), so a running
// or later crawler fetches them again. A page in flight (leased) is left
// alone: its loader transaction schedules it. It returns how many pages
// are now due at when (one already due then counts, a leased one does
// not); a URL the table does not know is an error wrapping ErrUnknownPage
// after the known ones were moved.
func Recrawl(ctx context.Context, db *percolator.DB, urls []string, when time.Time) (int, error) {
	ms := dueMillis(when)
	moved := 0
	var unknown []string
	for _, u := range urls {
		n, err := webtable.Normalize(u)
		if err != nil {
			return moved, err
		}
		row, err := webtable.Row(n)
		if err != nil {
			return moved, err
		}
		ok, did, err := recrawlRow(ctx, db, row, ms)
		if err != nil {
			return moved, fmt.Errorf("crawl: recrawl %s: %w", n, err)
		}
		if !ok {
			unknown = append(unknown, n)
		}
		if did {
			moved++
		}
	}
	if len(unknown) > 0 {
		return moved, fmt.Errorf("%w: %v", ErrUnknownPage, unknown)
	}
	return moved, nil
}

// RecrawlHost makes every page of host due at when (now if zero), as
// Recrawl does. host is a host name or address ("example.com",
// "127.0.0.1", "[::1]"), with a port to take only that port's pages
// ("127.0.0.1:8080"; without one, every scheme and port). It finds the
// pages by their row keys, which start with the reversed host, so failed,
// redirected and not-yet-indexed pages are found too. A host without a
// page in the table is an error wrapping ErrUnknownPage.
func RecrawlHost(ctx context.Context, db *percolator.DB, host string, when time.Time) (int, error) {
	prefix, port, err := hostPrefix(host)
	if err != nil {
		return 0, err
	}
	// Page rows of the host: "REVERSED:scheme[:port]/path". The scan
	// reads only the Due column, which every page in the frontier has.
	var rows []string
	err = db.View(ctx, func(tx *percolator.Tx) error {
		rows = rows[:0]
		return tx.Scan(ctx, prefix, prefix[:len(prefix)-1]+";", webtable.Due, func(row, col string, _ []byte) bool {
			if col == webtable.Due && rowPort(row, port) {
				rows = append(rows, row)
			}
			return true
		})
	})
	if err != nil {
		return 0, fmt.Errorf("crawl: recrawl host %s: %w", host, err)
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("%w: no page of host %s", ErrUnknownPage, host)
	}
	ms := dueMillis(when)
	moved := 0
	for _, row := range rows {
		_, did, err := recrawlRow(ctx, db, row, ms)
		if err != nil {
			return moved, fmt.Errorf("crawl: recrawl host %s: %w", host, err)
		}
		if did {
			moved++
		}
	}
	return moved, nil
}

// hostPrefix returns the row-key prefix of host's pages (the reversed host
// and ":") and the port asked for ("" for all).
func hostPrefix(host string) (prefix, port string, err error) {
	h := strings.TrimSpace(host)
	if h == "" || strings.ContainsAny(h, "/?#@") {
		return "", "", fmt.Errorf("crawl: %q is not a host (want HOST or HOST:PORT)", host)
	}
	u, err := url.Parse("http://" + h + "/")
	if err != nil {
		return "", "", fmt.Errorf("crawl: %q is not a host: %w", host, err)
	}
	port = u.Port()
	n, err := webtable.Normalize("http://" + h + "/")
	if err != nil {
		return "", "", fmt.Errorf("crawl: %q is not a host: %w", host, err)
	}
	row, err := webtable.Row(n)
	if err != nil {
		return "", "", err
	}
	head := webtable.HostOfRow(row) // "REVERSED:http" or "REVERSED:http:PORT"
	i := strings.LastIndex(head, ":http")
	return head[:i+1], port, nil
}

// rowPort reports whether page row is on port (any when port is "").
func rowPort(row, port string) bool {
	if port == "" {
		return true
	}
	head := webtable.HostOfRow(row)
	if i := strings.LastIndex(head, "]"); i >= 0 { // IPv6: colons inside
		head = head[i+1:]
	}
	parts := strings.Split(head, ":")
	switch {
	case len(parts) == 3:
		return parts[2] == port
	case len(parts) == 2 && parts[1] == "http":
		return port == "80"
	case len(parts) == 2 && parts[1] == "https":
		return port == "443"
	}
	return false
}

// recrawlRow makes page row due at ms. It reports whether the row is a
// page of the frontier and whether it is due at ms now (not if leased).
func recrawlRow(ctx context.Context, db *percolator.DB, row string, ms int64) (known, moved bool, err error) {
	n, err := webtable.Spread(ctx, db)
	if err != nil {
		return false, false, err
	}
	err = db.Update(ctx, func(tx *percolator.Tx) error {
		known, moved = false, false
		due, err := tx.Get(ctx, row, webtable.Due)
		if err != nil || due == nil {
			return err
		}
		known = true
		lease, err := tx.Get(ctx, row, webtable.Lease)
		if err != nil || lease != nil {
			return err
		}
		moved = true
		if atoi(due) == ms {
			return nil // already due then, as when two requests come within a millisecond
		}
		tx.Delete(webtable.SpreadDueRow(n, atoi(due), row), webtable.DuePage)
		tx.Set(webtable.SpreadDueRow(n, ms, row), webtable.DuePage, []byte(row))
		return tx.Set(row, webtable.Due, itoa(ms))
	})
	return known, moved, err
}

func dueMillis(when time.Time) int64 {
	if when.IsZero() {
		when = time.Now()
	}
	return when.UnixMilli()
}
