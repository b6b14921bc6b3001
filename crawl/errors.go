package crawl

import "errors"

var (
	// ErrNoSeeds is returned by Run when neither Options.Seeds nor the
	// table name a seed to crawl from.
	ErrNoSeeds = errors.New("crawl: no seeds")

	// ErrRunning is returned by Run when the crawler is already running.
	ErrRunning = errors.New("crawl: already running")

	// ErrPrivateAddress is the cause recorded for a fetch refused because
	// the host is or resolves to a private, loopback or link-local address
	// and Options.AllowPrivate is false.
	ErrPrivateAddress = errors.New("crawl: refusing private address")

	// ErrRobots is the cause recorded for a page that robots.txt disallows.
	ErrRobots = errors.New("crawl: disallowed by robots.txt")

	// ErrRedirectLoop is the cause recorded on a page whose redirect chain
	// leads back to it.
	ErrRedirectLoop = errors.New("crawl: redirect loop")

	// ErrTooManyRedirects is the cause recorded on a page whose redirect
	// would exceed Options.MaxRedirects hops.
	ErrTooManyRedirects = errors.New("crawl: too many redirects")

	// ErrInvalidOptions is returned by New for options it cannot use.
	ErrInvalidOptions = errors.New("crawl: invalid options")

	// errLeaseLost aborts a loader transaction whose lease expired and was
	// taken over: the other crawler's fetch wins.
	errLeaseLost = errors.New("crawl: lease lost")
)
