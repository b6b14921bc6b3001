package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// p3Floors are just under the measured P@3 of the PostgreSQL set by type
// of query (see BENCHMARKS.md): a ranking change that loses a query fails
// here.
var p3Floors = map[string]float64{"keyword": 0.94, "question": 0.55, "typo": 0.85, "all": 0.80}

// The judged PostgreSQL queries over the embedded manual, indexed in batch
// mode: a quality regression test, not a timing one.
func TestPostgreSQLQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes the whole manual")
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-mode", "batch", "-rounds", "1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Log(out.String())
	for kind, floor := range p3Floors {
		m := regexp.MustCompile(`(?m)^` + kind + ` +[0-9]+ +[0-9.]+ ([0-9.]+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no P@3 of %s in %q", kind, out.String())
		}
		p3, _ := strconv.ParseFloat(m[1], 64)
		if p3 < floor {
			t.Errorf("%s: P@3 %.3f, below the floor %.2f", kind, p3, floor)
		}
	}
}

// The other sets, when their corpora are unpacked (`../shared/corpora/fetch
// git-doc DIR`, then GITDOC=DIR/usr/share/doc/git-doc; SQLITEDOC for
// sqlite3-doc's usr/share/doc/sqlite3; HANDBOOK for debian-handbook's
// usr/share/doc/debian-handbook/html/en-US; LIBSTDCXXDOC for
// libstdc++-12-doc's usr/share/doc/gcc-12-base/libstdc++; QTDOC for
// qtbase5-doc-html's usr/share/qt5/doc).
func TestOtherSetsQuality(t *testing.T) {
	for name, env := range corpusVars {
		t.Run(name, func(t *testing.T) {
			dir := os.Getenv(env)
			if dir == "" {
				t.Skipf("set %s to the %s corpus root", env, name)
			}
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{"-corpus", dir, "-judged", name, "-mode", "batch", "-rounds", "1"}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			t.Log(out.String())
		})
	}
}

func TestParseKinds(t *testing.T) {
	qs, err := parseJudged([]byte("a b\tx.html\n[question]\nhow do I\ty.html\tz.html\n[typo]\nteh\tw.html\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range qs {
		got = append(got, q.kind+":"+q.q+":"+strings.Join(q.pages, ","))
	}
	want := []string{"keyword:a b:x.html", "question:how do I:y.html,z.html", "typo:teh:w.html"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := parseJudged([]byte("[questions]\nq\tp.html\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestScores(t *testing.T) {
	var s scores
	for _, r := range []int{1, 2, 0, 4} {
		s.add("keyword", r)
	}
	s.add("typo", 3)
	p1, p3, mrr := s.all.rates()
	if p1 != 0.2 || p3 != 0.6 || mrr != (1+0.5+0.25+1.0/3)/5 {
		t.Errorf("all: %v %v %v", p1, p3, mrr)
	}
	if k := s.byKind["keyword"]; k.n != 4 || k.p3 != 2 {
		t.Errorf("keyword: %+v", *k)
	}
}

// The other corpora, when unpacked: the variable names the corpus root.
var corpusVars = map[string]string{"git-doc": "GITDOC", "sqlite": "SQLITEDOC", "debian-handbook": "HANDBOOK", "libstdc++": "LIBSTDCXXDOC", "qt": "QTDOC"}

// The sets written for questions and typos, beside keywords: at least 40
// queries, a third questions, a sixth typos.
var mixedSets = []string{"sqlite", "debian-handbook", "libstdc++", "qt"}

func TestJudgedSets(t *testing.T) {
	for _, name := range []string{"postgresql", "git-doc", "sqlite", "debian-handbook", "libstdc++", "qt"} {
		qs, err := loadJudged(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) < 30 {
			t.Errorf("%s: %d queries, want at least 30", name, len(qs))
		}
		n := map[string]int{}
		seen := map[string]bool{}
		for _, q := range qs {
			n[q.kind]++
			if seen[q.q] {
				t.Errorf("%s: %q twice", name, q.q)
			}
			seen[q.q] = true
		}
		if slices.Contains(mixedSets, name) && (len(qs) < 40 || 3*n["question"] < len(qs) || 6*n["typo"] < len(qs)) {
			t.Errorf("%s: %d queries, %d questions, %d typos: want at least 40, a third questions and a sixth typos", name, len(qs), n["question"], n["typo"])
		}
		if dir := os.Getenv(corpusVars[name]); dir != "" {
			for _, q := range qs {
				for _, p := range q.pages {
					if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
						t.Errorf("%s: %q: %v", name, q.q, err)
					}
				}
			}
		}
	}
	pages := make(map[string]bool)
	for _, p := range mustPages(t) {
		pages[p] = true
	}
	qs, _ := loadJudged("postgresql")
	for _, q := range qs {
		for _, p := range q.pages {
			if !pages[p] {
				t.Errorf("%q: no page %s in the manual", q.q, p)
			}
		}
	}
}

func mustPages(t *testing.T) []string {
	ps, err := loadPages("")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return out
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-corpus", t.TempDir()},                       // no -judged
		{"-judged", "nope"},                            // unknown set
		{"-corpus", t.TempDir(), "-judged", "git-doc"}, // no pages
		{"-mode", "fast"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(bad, []byte("just a query\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-judged", bad}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "line 1") {
		t.Errorf("bad judged file: exit %d, %s", code, errb.String())
	}
}
