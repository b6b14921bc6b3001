package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestOracleVerb runs `indexer oracle` on a table and then every indexer
// run with -oracle taking its timestamps from it.
func TestOracleVerb(t *testing.T) {
	table := emulatorTable("indexer-oracle")
	loadTable(t, table, fetchAll)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"oracle", "-table", table, "-listen", addr, "-lease", "1s"}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("indexer oracle: %v", err)
		}
	}()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		} else if time.Now().After(end) {
			t.Fatalf("indexer oracle does not listen: %v", err)
		}
	}
	if err := run(context.Background(), []string{"-table", table, "-oracle", addr, "-until-idle"}); err != nil {
		t.Fatalf("-until-idle -oracle: %v", err)
	}
	if err := run(context.Background(), []string{"-table", table, "-oracle", addr, "-verify"}); err != nil {
		t.Fatalf("-verify -oracle: %v", err)
	}
	if err := run(context.Background(), []string{"oracle", "-data", t.TempDir()}); err == nil {
		t.Error("indexer oracle -data: no error")
	}
}

// TestOracleVerbRefusesData: `indexer oracle` on an embedded table says
// that it serves Bigtable tables only.
func TestOracleVerbRefusesData(t *testing.T) {
	for _, args := range [][]string{{"oracle", "-data", t.TempDir()}, {"oracle"}} {
		if err := run(context.Background(), args); err == nil || !strings.Contains(err.Error(), "-table") {
			t.Errorf("indexer %v: %v, want an error naming -table", args, err)
		}
	}
}
