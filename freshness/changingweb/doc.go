// Package changingweb is a changing web to measure freshness on: an
// http.Handler serving N pages whose content changes as independent Poisson
// processes, some pages hot (changing often), most cold, with a ground truth
// of every change.
//
// # Basics
//
// Change times are drawn lazily from the seed, one random stream per page,
// so they do not depend on the order anything is asked: the content of a
// page at time t is a pure function of (Options, page, t). The version of a
// page at t is the number of its changes in (Start, t]; each version has its
// own body text (so its visible-text content hash differs from every other
// version's), its own ETag, and a Last-Modified of when it appeared (its
// change, or Options.Born for version 0).
//
// The site, for a Web served at BASE:
//
//	BASE/             the index page: a link to every page (a good seed)
//	BASE/sS/N.html    page N, 0 ≤ N < Options.Pages, in section S = N / SectionSize
//	BASE/robots.txt   allows everything; names the sitemap if there is one
//	BASE/sitemap.xml  every page with its last change (Options.Sitemap)
//
// Every page links to the next one (a ring, so page 0 reaches all of them)
// and to Options.LinksPerPage others chosen by the seed, most in its own
// section (a site's sections are what its links cluster in); the link structure
// never changes. The last Options.Duplicates pages are exact copies of other
// pages: they serve the other page's bytes and so change when it does.
//
// # Time
//
// Rates are changes per second of the Clock, which is time.Now unless
// Options.Clock says otherwise. To compress an experiment, raise the rates
// rather than scaling the clock: the crawler stamps fetch times with the
// real clock, and ground truth must be on the same one.
//
// # Caveats
//
// The ground truth is exact for the fixture, but a crawler stamps a fetch
// with its own clock a little after the response was produced; a change
// inside that window (milliseconds) is attributed to the wrong copy.
//
// A Web is safe for concurrent use. Memory grows with the number of changes
// asked about (one time.Duration per change).
package changingweb
