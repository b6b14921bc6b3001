package crawl

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/caffeine-go/caffeine/extract"
)

// Scope says which discovered URLs the crawl follows.
type Scope string

const (
	// ScopeHost follows URLs on the seeds' hosts (host and port).
	ScopeHost Scope = "host"
	// ScopeDomain follows URLs whose registrable domain (eTLD+1) is a
	// seed's, on any port.
	ScopeDomain Scope = "domain"
	// ScopePrefix follows URLs that start with a seed's URL up to the last
	// slash of its path.
	ScopePrefix Scope = "prefix"
)

// DefaultUserAgent is sent when Options.UserAgent is empty. robots.txt
// groups match its product token, extract.Agent ("caffeine-crawler"),
// which is also the token whose robots meta and X-Robots-Tag rules are
// honoured.
const DefaultUserAgent = extract.Agent + "/0.1 (+https://github.com/caffeine-go/caffeine)"

// Options configure a Crawler. The zero value of every field selects the
// default named in its comment.
type Options struct {
	// Seeds are the URLs the crawl starts from. They are remembered in the
	// table, so a restart may pass none.
	Seeds []string
	// Scope is ScopeHost (default), ScopeDomain or ScopePrefix.
	Scope Scope
	// MaxDepth bounds the link distance from a seed of the pages added to
	// the frontier; 0 means unbounded. Seeds have depth 0.
	MaxDepth int
	// MaxPages stops Run after this many fetches; 0 means no limit.
	MaxPages int
	// Once makes Run return when nothing in the frontier is due (the first
	// crawl is done). Without it Run keeps recrawling until ctx is done.
	Once bool
	// AllowPrivate allows fetching private, loopback and link-local
	// addresses. They are refused by default, also after DNS resolution.
	AllowPrivate bool
	// PrivateAddrs, if not empty, narrows AllowPrivate to these address
	// and port pairs: the crawler connects to public addresses and to
	// exactly these non-public ones (a demo server on 127.0.0.1, say), no
	// other, also after DNS resolution.
	PrivateAddrs []netip.AddrPort
	// RecrawlDir, if set, is a directory of recrawl requests (see
	// QueueRecrawl) that Run applies when it starts and then every
	// second, deleting each once applied: how `crawler recrawl` reaches a
	// running process, which holds the table's directory lock.
	RecrawlDir string

	// UserAgent is sent with every request and matched against
	// robots.txt. Default DefaultUserAgent. Robots rules in pages (meta,
	// X-Robots-Tag) are read by package extract for extract.Agent whatever
	// UserAgent says, so that the parse observer reaches the same verdict.
	UserAgent string
	// Delay is the least time between the starts of two requests to one
	// host; a larger robots.txt Crawl-delay (up to MaxCrawlDelay) wins.
	// Default 1s; negative means none.
	Delay time.Duration
	// Parallel bounds concurrent requests to one host. Default 1. A host
	// with a Crawl-delay gets 1.
	Parallel int
	// Workers bounds concurrent fetches overall (the goroutines that fetch).
	// Default 32.
	Workers int
	// Timeout bounds one request, body included. Default 30s.
	Timeout time.Duration
	// MaxBodySize is where bodies are cut (and marked fetch:truncated).
	// Default 10 MiB.
	MaxBodySize int64
	// MaxRedirects bounds a redirect chain, each hop fetched as its own
	// URL. Default 5.
	MaxRedirects int
	// Retries is how often a 5xx or 429 response is retried at once, with
	// exponential backoff from RetryBackoff or the server's Retry-After.
	// Default 2; negative means none.
	Retries int
	// RetryBackoff is the first retry's wait. Default 1s.
	RetryBackoff time.Duration
	// MaxRetryWait is the longest wait before an immediate retry; a longer
	// Retry-After reschedules the page instead. Default 30s.
	MaxRetryWait time.Duration

	// MinInterval, MaxInterval and InitialInterval bound and start the
	// adaptive revisit interval (see NextInterval). Defaults are Nutch's:
	// 1 minute, 365 days, 30 days. A first fetch whose response has a
	// Last-Modified starts from the time since then instead (see
	// FirstInterval).
	MinInterval, MaxInterval, InitialInterval time.Duration

	// RobotsTTL is how long a host's robots.txt is cached. Default 24h.
	RobotsTTL time.Duration
	// MaxCrawlDelay caps a robots.txt Crawl-delay. Default 60s.
	MaxCrawlDelay time.Duration
	// NoSitemaps turns off reading sitemaps (robots.txt Sitemap: lines and
	// /sitemap.xml).
	NoSitemaps bool
	// MaxSitemapURLs bounds the pages new to the table taken from one
	// host's sitemaps each time its robots.txt is read (RobotsTTL); pages
	// the table has get their lastmod hints and do not count, so the next
	// reading goes on past them. Default 50,000 (at the default Delay, a
	// host's fetches for about 14 hours).
	MaxSitemapURLs int

	// LeaseTTL is how long a claimed page stays leased to this crawler;
	// another crawler may take it over after. Default 10 minutes, raised
	// to cover the longest fetch with its retries.
	LeaseTTL time.Duration
	// KnownRows bounds the cache of page rows known to exist, which saves
	// a table read per repeated link. Default 1<<17.
	KnownRows int
	// MaxHosts bounds the per-host politeness state kept in memory; idle
	// hosts are evicted past it. Default 10,000.
	MaxHosts int

	// WARCDir, if set, is where every page fetch is archived as WARC
	// records (see the WARC writer in warcout.go): a request and a
	// response record, or a revisit record for a 304.
	WARCDir string
	// WARCMaxSize is the size at which a WARC file is closed and the next
	// one begun. Default 1 GB, as Heritrix.
	WARCMaxSize int64

	// Logger receives per-page events (debug) and failures (info). Nil
	// discards them.
	Logger *slog.Logger
	// WrapTransport, if set, wraps the crawler's HTTP transport (for
	// tests and metrics). The address guard stays underneath it.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Behind, if set, is asked before pages are handed out; while it
	// returns true none is (the indexing chain is behind the crawl).
	Behind func() bool
	// CaughtUp, if set, is called once, the first time nothing in the
	// frontier is due and nothing is in flight (when Once would return),
	// or when Run returns first. A crawl that is not Once goes on
	// (recrawls, new seeds): what waited for the first crawl may start.
	CaughtUp func()
}

// longestFetch is the longest a page's requests can take: every attempt
// (and robots.txt) timing out, plus the waits between them.
func (o *Options) longestFetch() time.Duration {
	return time.Duration(o.Retries+2)*o.Timeout + time.Duration(o.Retries)*o.MaxRetryWait
}

func (o *Options) ensureDefaults() error {
	switch o.Scope {
	case "":
		o.Scope = ScopeHost
	case ScopeHost, ScopeDomain, ScopePrefix:
	default:
		return fmt.Errorf("%w: scope %q (want host, domain or prefix)", ErrInvalidOptions, o.Scope)
	}
	if o.MaxDepth < 0 || o.MaxPages < 0 {
		return fmt.Errorf("%w: negative MaxDepth or MaxPages", ErrInvalidOptions)
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Delay == 0 {
		o.Delay = time.Second
	} else if o.Delay < 0 {
		o.Delay = 0
	}
	if o.Parallel <= 0 {
		o.Parallel = 1
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxBodySize <= 0 {
		o.MaxBodySize = 10 << 20
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	if o.Retries == 0 {
		o.Retries = 2
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = time.Second
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = 30 * time.Second
	}
	if o.MinInterval <= 0 {
		o.MinInterval = time.Minute
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = 365 * 24 * time.Hour
	}
	if o.InitialInterval <= 0 {
		o.InitialInterval = 30 * 24 * time.Hour
	}
	if o.MinInterval > o.MaxInterval {
		return fmt.Errorf("%w: MinInterval %v > MaxInterval %v", ErrInvalidOptions, o.MinInterval, o.MaxInterval)
	}
	o.InitialInterval = min(max(o.InitialInterval, o.MinInterval), o.MaxInterval)
	if o.RobotsTTL <= 0 {
		o.RobotsTTL = 24 * time.Hour
	}
	if o.MaxCrawlDelay <= 0 {
		o.MaxCrawlDelay = time.Minute
	}
	if o.MaxSitemapURLs <= 0 {
		o.MaxSitemapURLs = 50000
	}
	// A lease must outlive the longest fetch.
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 10 * time.Minute
	}
	o.LeaseTTL = max(o.LeaseTTL, 2*o.longestFetch())
	if o.KnownRows <= 0 {
		o.KnownRows = 1 << 17
	}
	if o.MaxHosts <= 0 {
		o.MaxHosts = 10000
	}
	if o.WARCMaxSize <= 0 {
		o.WARCMaxSize = 1e9
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
