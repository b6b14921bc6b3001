package crawl

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// Flags registers the crawler's command-line flags on fs (the crawler and
// the one-command search both take them) and returns a function that, after
// fs.Parse, returns the Options they describe.
func Flags(fs *flag.FlagSet) func() (Options, error) {
	var (
		seeds     = fs.String("seeds", "", "comma-separated seed `URLs`")
		seedsFile = fs.String("seeds-file", "", "`file` of seed URLs, one a line (# comments)")
		scope     = fs.String("scope", "host", "follow links on the seeds' `host`, registrable domain (domain) or URL prefix (prefix)")
		maxDepth  = fs.Int("max-depth", 0, "link distance from a seed to follow (0: unlimited)")
		maxPages  = fs.Int("max-pages", 0, "stop after this many fetches (0: no limit)")
		once      = fs.Bool("once", false, "exit when nothing is due (the first crawl is done) instead of recrawling")
		private   = fs.Bool("allow-private", false, "allow private, loopback and link-local addresses (local corpora, tests)")
		userAgent = fs.String("user-agent", DefaultUserAgent, "User-Agent sent, and matched against robots.txt (robots meta and X-Robots-Tag rules are read for caffeine-crawler)")
		delay     = fs.Duration("delay", time.Second, "least time between two requests to one host (a larger Crawl-delay wins; 0: none)")
		parallel  = fs.Int("parallel", 1, "concurrent requests per host")
		workers   = fs.Int("workers", 32, "concurrent fetches overall")
		timeout   = fs.Duration("timeout", 30*time.Second, "timeout of one request, body included")
		maxBody   = fs.Int64("max-body", 10<<20, "body size `bytes` kept; longer bodies are cut and marked truncated")
		retries   = fs.Int("retries", 2, "immediate retries of a 5xx or 429 response (honouring Retry-After)")
		minIv     = fs.Duration("min-interval", time.Minute, "shortest revisit interval")
		maxIv     = fs.Duration("max-interval", 365*24*time.Hour, "longest revisit interval")
		initIv    = fs.Duration("initial-interval", 30*24*time.Hour, "revisit interval after the first fetch of a page without Last-Modified (with one: the time since then, within -min-interval and -max-interval)")
		noSitemap = fs.Bool("no-sitemaps", false, "do not read sitemaps")
		sitemapN  = fs.Int("sitemap-max-urls", 50000, "pages new to the table taken from one host's sitemaps each time its robots.txt is read (known pages get their lastmod hints and do not count)")
		warcOut   = fs.String("warc-out", "", "archive every fetch as WARC records (gzipped, a warcinfo record first in each file) in this `directory`")
		warcMax   = fs.Int64("warc-max-size", 1e9, "`bytes` at which a -warc-out file is closed and the next begun")
	)
	return func() (Options, error) {
		list, err := seedList(*seeds, *seedsFile)
		if err != nil {
			return Options{}, err
		}
		opt := Options{
			Seeds: list, Scope: Scope(*scope), MaxDepth: *maxDepth, MaxPages: *maxPages,
			Once: *once, AllowPrivate: *private, UserAgent: *userAgent,
			Delay: *delay, Parallel: *parallel, Workers: *workers, Timeout: *timeout,
			MaxBodySize: *maxBody, Retries: *retries,
			MinInterval: *minIv, MaxInterval: *maxIv, InitialInterval: *initIv,
			NoSitemaps: *noSitemap, MaxSitemapURLs: *sitemapN, WARCDir: *warcOut, WARCMaxSize: *warcMax,
		}
		if *delay == 0 {
			opt.Delay = -1
		}
		if *retries == 0 {
			opt.Retries = -1
		}
		if *sitemapN < 1 {
			return Options{}, fmt.Errorf("%w: -sitemap-max-urls %d (want 1 or more; -no-sitemaps reads none)", ErrInvalidOptions, *sitemapN)
		}
		return opt, nil
	}
}

func seedList(seeds, file string) ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(seeds, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" && !strings.HasPrefix(s, "#") {
				out = append(out, s)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
	}
	return out, nil
}
