package observers

import (
	"context"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
)

// Chain returns the observers of the indexing chain, in the order data
// flows through them. cmd/indexer and cmd/search run exactly these.
func Chain() []percolator.Observer {
	// rank:dirty → !rank/KEY block solve → rank:value; and in the
	// background, rank:outside (what the block gets from other blocks
	// changed) → the same.
	ranks := rank.Observers(rankOptions)
	return []percolator.Observer{
		Parse(),          // fetch:body → page:*
		Links(),          // page:links → in:SRC on targets
		LinksMore(),      // links:more → the same, for the rest of a page's many links
		Cluster(),        // page:hash → !dup/HASH members
		Near(),           // page:simhash → !near/B/VVVV/ROW band rows
		Elect(),          // dup:dirty → cluster:canon
		NearDocs(),       // near:dirty → near:check on the documents near a page
		NearCheck(),      // near:check → doc:dirty when the page's near-copies changed
		ranks[0],         // rank:dirty → !rank/KEY block solve → rank:value
		ranks[1],         // rank:outside → the same, in the background
		ExportObserver(), // doc:dirty → !export/ queue
		// The same for a new PageRank only, in the background.
		ElectRank(), // dup:ranked → cluster:canon
		// And for new inbound anchors or PageRank only, in the background.
		ExportLinksObserver(), // doc:linked → !export/ queue
	}
}

// BulkStages are the stages in which a first bulk crawl drains the chain
// over db (percolator.WorkerOptions.Stages, engine.Config.Stages): the
// pages parsed, their links published, their clusters and band rows
// joined; then
// PageRank, seeded with the fixed point of the whole graph (rank.Seed)
// so that each block solves once; then the elections; then the exports.
// Each stage's observers notify only their own stage's and later ones,
// so with every page in the table a page is elected once its PageRank is
// final (and the documents near it told, once every page is elected) and
// exported once with all its anchors, not again as each of
// them arrives.
func BulkStages(db *percolator.DB) []percolator.Stage {
	return []percolator.Stage{
		{Observers: []string{"parse", "links", "links-more", "cluster", "near"}},
		{Observers: []string{"rank", "rank-outside"}, Before: func(ctx context.Context) error {
			_, err := rank.Seed(ctx, db, rankOptions)
			return err
		}},
		{Observers: []string{"elect", "elect-rank", "near-docs", "near-check"}},
		{Observers: []string{"export", "export-links"}},
	}
}

// rankOptions are the chain's rank options.
var rankOptions = rank.Options{OutsideDelay: BackgroundDelay, OutsideMaxDelay: BackgroundMaxDelay}
