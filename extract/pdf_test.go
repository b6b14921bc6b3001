package extract

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestPDFWrittenByOthers reads the Debian handbook's figures (PDFs made by
// Inkscape/cairo) and, when CAFFEINE_PDF names one, a long manual such as
// debian-reference-en's debian-reference.en.pdf.
func TestPDFWrittenByOthers(t *testing.T) {
	cases := []struct{ file, title, text string }{
		{"testdata/pdf/handbook-ssh-R.pdf", "Mellommann", "Lokal SSH- forbindelse 8000 25"},
		{"testdata/pdf/handbook-virtual-package.pdf", "libdigest-md5-perl", "Provides: Replaces: Conflicts:"},
	}
	if f := os.Getenv("CAFFEINE_PDF"); f != "" {
		cases = append(cases, struct{ file, title, text string }{f, "", ""})
	}
	for _, c := range cases {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		p, kind, err := Document("https://example.com/doc.pdf", b, "", Options{})
		if err != nil || kind != KindPDF {
			t.Fatalf("%s: kind %q, %v", c.file, kind, err)
		}
		checkPage(t, p, DefaultMaxTextBytes)
		t.Logf("%s: %v, title %q, %d bytes of text, %d links", c.file, time.Since(start), p.Title, len(p.Text), len(p.Links))
		if p.Title == "" || p.Hash == "" || !strings.Contains(p.Text, c.text) || c.title != "" && p.Title != c.title {
			t.Errorf("%s: title %q, hash %q, text %.300q", c.file, p.Title, p.Hash, p.Text)
		}
	}
}

// TestPDFBad: broken, encrypted, oversized and hostile PDFs are ErrBadPDF,
// promptly, and never a panic.
func TestPDFBad(t *testing.T) {
	good, err := os.ReadFile("testdata/pdf/handbook-virtual-package.pdf")
	if err != nil {
		t.Fatal(err)
	}
	xref := bytes.LastIndex(good, []byte("startxref"))
	cases := map[string][]byte{
		"empty":       nil,
		"signature":   []byte("%PDF-1.7\n"),
		"truncated":   good[:len(good)/2],
		"no xref":     good[:xref],
		"bad xref":    append(bytes.Clone(good[:xref]), "startxref\n99999999\n%%EOF\n"...),
		"garbage":     bytes.Repeat([]byte("%PDF-1.4 \x00\xff<<[[[("), 1000),
		"encrypted":   []byte(encryptedPDF),
		"deep arrays": []byte("%PDF-1.4\n1 0 obj " + strings.Repeat("[", 100000) + "\nendobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"),
		"page count":  []byte(selfPagesPDF),
		"too large":   make([]byte, MaxPDFBytes+1),
	}
	for name, b := range cases {
		start := time.Now()
		p, err := PDF("https://example.com/bad.pdf", b, Options{})
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: %v", name, d)
		}
		if !errors.Is(err, ErrBadPDF) {
			// A few broken files still read: then the Page keeps its
			// invariants.
			checkPage(t, p, DefaultMaxTextBytes)
			t.Logf("%s: read, %v: %q", name, err, p.Text)
		}
	}
	if _, err := PDF("https://example.com/x.pdf", cases["encrypted"], Options{}); !errors.Is(err, ErrBadPDF) {
		t.Errorf("encrypted: %v, want ErrBadPDF", err)
	}
	if _, err := PDF("https://example.com/x.pdf", cases["too large"], Options{}); !errors.Is(err, ErrBadPDF) {
		t.Errorf("too large: %v, want ErrBadPDF", err)
	}
}

// encryptedPDF declares a standard security handler in its trailer.
const encryptedPDF = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n" +
	"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n" +
	"3 0 obj<</Filter/Standard/V 1/R 2/O(0123456789abcdef0123456789abcdef)/U(0123456789abcdef0123456789abcdef)/P -4>>endobj\n" +
	"trailer<</Root 1 0 R/Encrypt 3 0 R/ID[<00><00>]>>\n%%EOF\n"

// selfPagesPDF claims a million pages in a page tree that is its own kid.
const selfPagesPDF = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n" +
	"2 0 obj<</Type/Pages/Kids[2 0 R]/Count 1000000>>endobj\n" +
	"trailer<</Root 1 0 R>>\n%%EOF\n"

// TestText: a text/plain body's first line is its title, its charset is
// honoured, and binary bodies served as text/plain are not text.
func TestText(t *testing.T) {
	p, kind, err := Document("https://example.com/README", []byte("\n\n  Read  me\tfirst \r\nThen the rest.\n"), "text/plain", Options{})
	if err != nil || kind != KindText || p.Title != "Read me first" || p.Text != "Read me first Then the rest." || p.Hash == "" {
		t.Errorf("kind %q, %v, %+v", kind, err, p)
	}
	p, _, err = Document("https://example.com/l1.txt", []byte("caf\xe9"), "text/plain; charset=iso-8859-1", Options{})
	if err != nil || p.Text != "café" {
		t.Errorf("latin-1: %v %q", err, p.Text)
	}
	if k := Kind("text/plain", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00")); k != "" {
		t.Errorf("PNG as text/plain: kind %q", k)
	}
	if k := Kind("image/png", []byte("%PDF-1.4")); k != "" {
		t.Errorf("declared image: kind %q", k)
	}
	if k := Kind("text/html", []byte("<p>x")); k != KindHTML {
		t.Errorf("html: kind %q", k)
	}
}

// FuzzPDF: no input panics or hangs PDF, and what reads keeps the Page
// invariants. Seeds: the handbook's figures and the crafted bad files.
func FuzzPDF(f *testing.F) {
	for _, name := range []string{"testdata/pdf/handbook-ssh-R.pdf", "testdata/pdf/handbook-virtual-package.pdf"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(encryptedPDF))
	f.Add([]byte(selfPagesPDF))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := PDF("https://example.com/f.pdf", body, Options{MaxTextBytes: 4096})
		if err != nil {
			if !errors.Is(err, ErrBadPDF) {
				t.Fatalf("error not ErrBadPDF: %v", err)
			}
			return
		}
		checkPage(t, p, 4096)
	})
}
