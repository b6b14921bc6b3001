package rank

// Columns of a page row owned by the rank observer, besides webtable.Rank
// (its value x). Values are decimal floats unless said otherwise.
const (
	colResidual  = "rank:residual"  // absorbed change not yet pushed (|r| < ε)
	colPushed    = "rank:pushed"    // JSON pushed: the value and out-set last pushed along, and what waits unannounced
	colSeeded    = "rank:seeded"    // "1" while the teleport (1 − d) is in the value
	colAnnounced = "rank:announced" // the value last announced to export and election

	// rinPrefix + source row + ":" + hex(start ts of the pushing run), in
	// the target row: one delta pushed by the source. Written once, deleted
	// when absorbed.
	rinPrefix = "rin:"
)

// pushed is the content of colPushed.
type pushed struct {
	X   float64  `json:"x"`
	Out []string `json:"out"` // sorted rows
	// Quiet is, per target, the sum of |delta| pushed to it since u last
	// notified it: those deltas may still wait unabsorbed in its row.
	Quiet map[string]float64 `json:"quiet,omitempty"`
}
