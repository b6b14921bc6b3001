package observers

import (
	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
)

// Chain returns the observers of the indexing chain, in the order data
// flows through them. cmd/indexer and cmd/search run exactly these.
func Chain() []percolator.Observer {
	return []percolator.Observer{
		Parse(),                       // fetch:body → page:*
		Links(),                       // page:links → in:SRC on targets
		Cluster(),                     // page:hash → !dup/HASH members
		Elect(),                       // dup:dirty → cluster:canon
		rank.Observer(rank.Options{}), // rank:dirty → !rank/KEY block solve → rank:value
		ExportObserver(),              // doc:dirty → !export/ queue
		// The same for a new PageRank only, in the background.
		ElectRank(),          // dup:ranked → cluster:canon
		ExportRankObserver(), // doc:ranked (written by earlier releases) → !export/ queue
		// And for new inbound anchors or PageRank only, in the background.
		ExportLinksObserver(), // doc:linked → !export/ queue
	}
}
