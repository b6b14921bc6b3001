package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches a Markdown inline link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks checks that every relative link in README.md,
// BENCHMARKS.md and docs/*.md names a file or directory that exists.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := docFiles(t, root)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, frag, _ := strings.Cut(target, "#")
				p := f
				if target != "" {
					p = filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
				}
				rel, _ := filepath.Rel(root, f)
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d: link %q does not resolve: %v", rel, i+1, m[1], err)
					continue
				}
				if frag != "" && strings.HasSuffix(p, ".md") && !anchors(t, p)[frag] {
					t.Errorf("%s:%d: link %q: no heading of %s has the anchor #%s", rel, i+1, m[1], filepath.Base(p), frag)
				}
			}
		}
	}
}

// docFiles returns the Markdown files the tests read: the README,
// BENCHMARKS.md and everything under docs/.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// anchors returns the anchors GitHub gives the headings of the Markdown
// file p: lower case, spaces as hyphens, other punctuation dropped, a
// repeated one numbered (-1, -2, ...).
func anchors(t *testing.T, p string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]int)
	out := make(map[string]bool)
	inFence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var slug strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		a := slug.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocsLength: no Markdown file is over 800 lines: a topic that grows
// past it is split, so that each file stays readable.
func TestDocsLength(t *testing.T) {
	for _, f := range docFiles(t, filepath.Join("..", "..")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > 800 {
			t.Errorf("%s: %d lines, over 800", f, n)
		}
	}
}
