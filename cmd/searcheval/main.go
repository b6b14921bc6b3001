// Command searcheval measures search quality on a judged query set: it
// indexes a corpus with the real indexing chain and serving index, runs
// every judged query and prints P@1, P@3, MRR, the query latency and the
// misses, by kind of query (keyword, question, typo) and beside plain
// BM25 over the same pages (-baseline).
//
//	searcheval [-corpus DIR] [-judged SET|FILE] [-mode crawl|batch] [-rounds 5] [-misses=true] [-snippets] [-baseline=true]
//
// Without -corpus it indexes the PostgreSQL manual embedded in the binary
// (internal/corpus) with the judged set "postgresql"; with -corpus DIR it
// serves DIR, whose index.html is the seed, and -judged names the set: an
// embedded one ("postgresql", "git-doc", "sqlite",
// "debian-handbook", "libstdc++", "qt"; see judged/) or a file of the same
// format (query, a tab, the path of the page that answers it under the
// corpus root, optionally more tabs and paths of pages that answer it too;
// # starts a comment; a line [keyword], [question] or [typo] makes the
// queries after it of that kind).
//
// The baseline is a plain Bleve index of the same pages (title and text as
// extracted, English analyzer, Bleve's BM25) searched for any of the
// query's words: what a search box on Bleve alone would answer.
//
// Modes:
//
//   - crawl (default): the corpus is served on 127.0.0.1 and crawled by the
//     one process (package engine: crawler, observer chain, serving feeder)
//     into a temporary table until idle, as `search -seeds …` does;
//   - batch: every page is written to a temporary table as if fetched
//     (http://corpus.test/PATH) and the documents are the chain's batch
//     recomputation (observers.RunBatch, which `indexer -verify` checks the
//     chain against), indexed with serving.BuildIndex: the same documents
//     for the pages a crawl reaches, in a few seconds.
//
// A query scores when the answering page is among its first results: P@1
// and P@3 are the shares of queries answered by the first result and by one
// of the first three (with one answering page a query, precision at k is
// this success rate); MRR is the mean of 1/rank over the first 10 results
// (0 when the page is not among them). Latency: every query is run -rounds
// times after one warm-up round; p50 and p99 are over all those runs.
//
// The table is an embedded Badger one in a temporary directory: the
// figures are of the chain and the index, not of a store, so searcheval
// takes no -table.
//
// Exit codes: 0 done, 1 failure, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("searcheval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dir    = fs.String("corpus", "", "corpus `directory` to serve and index (default: the embedded PostgreSQL manual)")
		judged = fs.String("judged", "", "judged set: an embedded `name` (postgresql, git-doc, sqlite, debian-handbook, libstdc++, qt) or a file (default: postgresql without -corpus)")
		mode   = fs.String("mode", modeCrawl, "how to index: crawl (the one process crawls the served corpus) or batch (the chain's batch recomputation)")
		rounds = fs.Int("rounds", 5, "timed runs of every query after the warm-up")
		misses = fs.Bool("misses", true, "print the queries whose page is not first, with what came first")
		snips  = fs.Bool("snippets", false, "print every query's first result's snippet, matches in [brackets]")
		prof   = fs.String("cpuprofile", "", "write a CPU profile of the timed query rounds to this `file`")
		base   = fs.Bool("baseline", true, "also measure plain BM25 (a plain Bleve index of the same pages, any of the words) for comparison")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: searcheval [-corpus DIR] [-judged SET|FILE] [-mode crawl|batch] [-rounds 5]")
		fmt.Fprintln(stderr, "The table is an embedded Badger one in a temporary directory, removed on exit: searcheval takes no -table.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || *rounds < 1 || (*mode != modeCrawl && *mode != modeBatch) {
		fs.Usage()
		return 2
	}
	set := *judged
	if set == "" {
		if *dir != "" {
			fmt.Fprintln(stderr, "searcheval: -corpus needs -judged")
			return 2
		}
		set = "postgresql"
	}
	qs, err := loadJudged(set)
	if err != nil {
		fmt.Fprintln(stderr, "searcheval:", err)
		return 2
	}
	pages, err := loadPages(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "searcheval:", err)
		return 2
	}
	tmp, err := os.MkdirTemp("", "searcheval-")
	if err != nil {
		fmt.Fprintln(stderr, "searcheval:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	b, err := build(ctx, *mode, pages, tmp, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "searcheval:", err)
		return 1
	}
	rep, err := evaluate(ctx, b, qs, *rounds, *prof)
	n, _ := b.ix.Count()
	if err == nil && *base {
		rep.baseline, err = baseline(ctx, pages, tmp, qs)
	}
	if cerr := b.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(stderr, "searcheval:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d pages, %d documents (%s), %d queries\n", set, len(pages), n, *mode, len(qs))
	rep.print(stdout, *misses, *snips)
	return 0
}
