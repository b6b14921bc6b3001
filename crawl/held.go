package crawl

// maxHeld bounds the rows the dispatcher holds (heldRows): about 200 bytes
// each.
const maxHeld = 100_000

// heldRows are due rows the dispatcher read from the index but could not
// dispatch, because their host had no request slot free: per host, in the
// order read. A slot that frees takes the host's next held row, so a
// host's backlog is read from the table once, not again at every fetch's
// end (which made a bulk crawl of one big host quadratic in its pages).
// A row is held at most once. A held row may go stale (another crawler
// fetched it, a recrawl moved it): the claim finds that out, as it does
// for a row read from the index.
type heldRows struct {
	byHost map[string][]heldRow // host key → rows, oldest first
	rows   map[string]bool
	max    int
}

// heldRow is a held index row and its page's URL.
type heldRow struct {
	cd  candidate
	url string
}

func newHeldRows(max int) *heldRows {
	return &heldRows{byHost: make(map[string][]heldRow), rows: make(map[string]bool), max: max}
}

// len returns the number of rows held.
func (h *heldRows) len() int { return len(h.rows) }

// has reports whether row is held.
func (h *heldRows) has(row string) bool { return h.rows[row] }

// busy reports whether host has rows held: a row of it read later waits
// behind them.
func (h *heldRows) busy(host string) bool { return len(h.byHost[host]) > 0 }

// add holds a row of host; false if the row is held already or max rows
// are.
func (h *heldRows) add(host string, r heldRow) bool {
	if h.rows[r.cd.row] || len(h.rows) >= h.max {
		return false
	}
	h.rows[r.cd.row] = true
	h.byHost[host] = append(h.byHost[host], r)
	return true
}

// each calls f with every host that has rows held and its oldest row,
// until f returns false; f returns whether it took the row (then each
// offers the host's next one) and whether to go on.
func (h *heldRows) each(f func(host string, r heldRow) (took, more bool)) {
	for host, q := range h.byHost {
		for len(q) > 0 {
			took, more := f(host, q[0])
			if took {
				delete(h.rows, q[0].cd.row)
				q[0] = heldRow{}
				q = q[1:]
			}
			if !more {
				h.set(host, q)
				return
			}
			if !took {
				break
			}
		}
		h.set(host, q)
	}
}

func (h *heldRows) set(host string, q []heldRow) {
	if len(q) == 0 {
		delete(h.byHost, host)
		return
	}
	h.byHost[host] = q
}
