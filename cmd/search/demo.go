package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/internal/httpserver"
)

// demoSite is the sample site -demo crawls: the PostgreSQL 15 manual
// embedded in the repository (internal/corpus, PostgreSQL licence),
// served by this process on 127.0.0.1.
type demoSite struct {
	srv   *httpserver.Server
	addr  netip.AddrPort
	seed  string // its index.html
	pages int
}

// demoAddrFile, in the data directory, remembers the demo site's address:
// a later -demo -data DIR serves it at the same URLs if the port is free,
// so the table's pages stay the site's.
const demoAddrFile = "demo-addr"

// demoQueries are suggested to try on the demo.
var demoQueries = []string{"vacuum", `"write-ahead log"`, "create index concurrently", "pg_dump"}

// startDemo serves the manual on 127.0.0.1, on the port it had for the
// table in dataDir if it can, else on a free one.
func startDemo(dataDir string) (*demoSite, error) {
	pages, err := corpus.Load()
	if err != nil {
		return nil, fmt.Errorf("demo: the bundled manual: %w", err)
	}
	addrPath := filepath.Join(dataDir, demoAddrFile)
	var ln net.Listener
	if b, err := os.ReadFile(addrPath); err == nil {
		ln, _ = net.Listen("tcp", strings.TrimSpace(string(b)))
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	addr, err := netip.ParseAddrPort(ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.WriteFile(addrPath, []byte(addr.String()+"\n"), 0o644); err != nil {
		ln.Close()
		return nil, fmt.Errorf("demo: %w", err)
	}
	d := &demoSite{
		srv:   httpserver.New(corpus.Handler(pages, nil), httpserver.Options{}),
		addr:  addr,
		seed:  "http://" + addr.String() + "/index.html",
		pages: len(pages),
	}
	go d.srv.Serve(ln)
	return d, nil
}

func (d *demoSite) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := d.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		d.srv.Close()
	}
}
