package crawl

import (
	"errors"

	"github.com/caffeine-go/caffeine/webtable"
)

var (
	// ErrNoSeeds is returned by Run when neither Options.Seeds nor the
	// table name a seed to crawl from.
	ErrNoSeeds = errors.New("crawl: no seeds")

	// ErrPrivateSeeds is returned by Run when seeds the table remembers
	// are private or loopback addresses and Options.AllowPrivate is false:
	// recrawling them would refuse every page and empty the index.
	ErrPrivateSeeds = errors.New("crawl: the table's seeds are private addresses (crawled with AllowPrivate); allow them to recrawl")

	// ErrRunning is returned by Run when the crawler is already running.
	ErrRunning = errors.New("crawl: already running")

	// ErrPrivateAddress is the cause recorded for a fetch refused because
	// the host is or resolves to a private, loopback or link-local address
	// and Options.AllowPrivate is false.
	ErrPrivateAddress = errors.New(webtable.CauseRefused)

	// ErrRobots is the cause recorded for a page that robots.txt disallows.
	ErrRobots = errors.New(webtable.CauseRobots)

	// ErrRedirectLoop is the cause recorded on a page whose redirect chain
	// leads back to it.
	ErrRedirectLoop = errors.New("crawl: redirect loop")

	// ErrTooManyRedirects is the cause recorded on a page whose redirect
	// would exceed Options.MaxRedirects hops.
	ErrTooManyRedirects = errors.New("crawl: too many redirects")

	// ErrUnknownPage is returned by Recrawl for a URL that is not in the
	// frontier.
	ErrUnknownPage = errors.New("crawl: page not in the frontier")

	// ErrNotWARC is returned (in an *ImportError) by Importer.ImportFile
	// for a file that does not start with a WARC record.
	ErrNotWARC = errors.New("crawl: not a WARC file")

	// ErrInvalidOptions is returned by New for options it cannot use.
	ErrInvalidOptions = errors.New("crawl: invalid options")

	// errLeaseLost aborts a loader transaction whose lease expired and was
	// taken over: the other crawler's fetch wins.
	errLeaseLost = errors.New("crawl: lease lost")
)
