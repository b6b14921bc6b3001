package extract

import (
	"strings"
	"testing"

	"github.com/abadojack/whatlanggo"
)

var langTexts = map[string]string{
	"en": "APT needs to be given a list of package sources: the file sources.list lists the different repositories that publish Debian packages. APT will then import the list of packages published by each of these sources, and keep them up to date when the administrator asks it to.",
	"fr": "APT a besoin qu'on lui donne une liste de sources de paquets : le fichier sources.list énumère les différents dépôts qui publient des paquets Debian. APT importera ensuite la liste des paquets publiés par chacune de ces sources, et la tiendra à jour quand l'administrateur le lui demandera.",
	"de": "APT benötigt eine Liste der Paketquellen: Die Datei sources.list führt die verschiedenen Depots auf, die Debian-Pakete veröffentlichen. APT importiert dann die Liste der von jeder dieser Quellen veröffentlichten Pakete und hält sie aktuell, wenn der Administrator es verlangt.",
	"ja": "APT にはパッケージソースのリストを与える必要があります。ファイル sources.list には、Debian パッケージを公開しているさまざまなリポジトリが列挙されています。APT はそれぞれのソースが公開しているパッケージのリストを取り込みます。",
}

// TestDetectLang: page-length texts are detected, reliably, in their
// language; a window from the middle decides, past an English menu.
func TestDetectLang(t *testing.T) {
	for want, text := range langTexts {
		if got, ok := DetectLang(text); got != want || !ok {
			t.Errorf("DetectLang(%.20q…) = %q, %v; want %q, true", text, got, ok, want)
		}
	}
	menu := strings.Repeat("Home Download Documentation Support News About ", 20)
	body := strings.Repeat(langTexts["fr"]+" ", 10)
	if got, _ := DetectLang(menu + body + menu); got != "fr" {
		t.Errorf("a French body between English menus: %q, want fr", got)
	}
	for _, text := range []string{"", "   ", "ok"} {
		if got, ok := DetectLang(text); ok {
			t.Errorf("DetectLang(%q) = %q, reliable; want unreliable", text, got)
		}
	}
}

// TestResolveLang: a declared language stands unless the text clearly
// says another (a mismatch); without one, the header, then detection.
func TestResolveLang(t *testing.T) {
	for _, c := range []struct {
		declared, header, text, want string
		mismatch                     bool
	}{
		{"fr-fr", "", langTexts["fr"], "fr-fr", false},   // agrees: the tag as declared
		{"en", "", langTexts["fr"], "fr", true},          // a template's lang="en" on a translation
		{"en-us", "", "ok", "en-us", false},              // too short to contradict
		{"", "de-DE", "ok", "de-de", false},              // the header when the page says nothing
		{"", "de", langTexts["ja"], "ja", true},          // the text over a wrong header
		{"", "", langTexts["de"], "de", false},           // detected
		{"", "", "", "", false},                          // nothing to go by
		{"", "not a tag!", "", "", false},                // a header that is not a tag
		{"zh-hant", "", langTexts["en"], "en", true},     // English under a Chinese tag
		{"de-at", "fr", langTexts["de"], "de-at", false}, // the page's own tag over the header
	} {
		got, mismatch := resolveLang(c.declared, c.header, "", c.text)
		if got != c.want || mismatch != c.mismatch {
			t.Errorf("resolveLang(%q, %q, %.20q…) = %q, %v; want %q, %v", c.declared, c.header, c.text, got, mismatch, c.want, c.mismatch)
		}
	}
}

// TestURLLang: a page that declares no language is held to the one its
// URL names, for the mismatch only.
func TestURLLang(t *testing.T) {
	for _, c := range []struct {
		url, want string
	}{
		{"http://h.example/cs-CZ/sect.apt-file.html", "cs"},
		{"http://h.example/doc/pt_BR/index.html", "pt"},
		{"http://h.example/fr/", "fr"},
		{"http://h.example/zh-TW/a.html", "zh"},
		{"http://h.example/docs/install.html", ""},
		{"http://h.example/go/x-y2/", ""},
		{"http://h.example/en-US-x/", ""},
		{"http://h.example/user/id/42", ""},
		{"http://h.example/id-ID/a.html", "id"},
		{"%", ""},
	} {
		if got := urlLang(c.url); got != c.want {
			t.Errorf("urlLang(%q) = %q, want %q", c.url, got, c.want)
		}
	}
	for _, c := range []struct {
		declared, urlLang, text, want string
		mismatch                      bool
	}{
		{"", "cs", langTexts["en"], "en", true},
		{"", "en", langTexts["en"], "en", false},
		{"", "de", langTexts["de"], "de", false},
		{"", "cs", "ok", "", false},
		{"en", "cs", langTexts["en"], "en", false}, // the page's own tag over its URL
	} {
		got, mismatch := resolveLang(c.declared, "", c.urlLang, c.text)
		if got != c.want || mismatch != c.mismatch {
			t.Errorf("resolveLang(%q, url %q, %.20q…) = %q, %v; want %q, %v", c.declared, c.urlLang, c.text, got, mismatch, c.want, c.mismatch)
		}
	}
}

// TestDocumentLang: Document resolves the language of HTML (lang
// attribute against the text) and of plain text (Content-Language, else
// detection).
func TestDocumentLang(t *testing.T) {
	html := `<html lang="en"><title>Sources</title><body><p>` + langTexts["fr"] + `</p></body></html>`
	p, _, err := Document("http://example.com/fr/apt.html", []byte(html), "text/html", Options{})
	if err != nil || p.Lang != "fr" {
		t.Errorf("HTML with lang=en and a French body: lang %q (err %v), want fr", p.Lang, err)
	}
	p, _, err = Document("http://example.com/apt.txt", []byte(langTexts["de"]), "text/plain", Options{ContentLanguage: "de-CH"})
	if err != nil || p.Lang != "de-ch" {
		t.Errorf("German text served as de-CH: lang %q (err %v), want de-ch", p.Lang, err)
	}
}

func BenchmarkDetectLang(b *testing.B) {
	text := strings.Repeat(langTexts["fr"]+" ", 100)
	b.SetBytes(langSample)
	for b.Loop() {
		DetectLang(text)
	}
}

// TestLangCode: every language detection knows has a code, two letters
// where ISO 639-1 has them.
func TestLangCode(t *testing.T) {
	for l, name := range whatlanggo.Langs {
		c := langCode(l)
		if len(c) < 2 || len(c) > 3 || (len(c) == 3 && l.Iso6391() != "") {
			t.Errorf("%s: code %q", name, c)
		}
	}
	if c := langCode(whatlanggo.Pes); c != "fa" {
		t.Errorf("Persian: %q, want fa", c)
	}
}
