package extract

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
)

// langSample is how much of a page's text language detection reads: a
// window of this many bytes from the middle of the text, past the
// navigation a page starts with (an untranslated menu above a translated
// body). Detection costs about a microsecond a byte.
const langSample = 600

// DetectLang returns the code of the language text is written in (ISO
// 639-1 where there is one: "fr", "de", "zh", "ja", "fa"; see langCode),
// and whether the detection is reliable: a text long and clear enough
// that its trigrams and script point to one language. It returns "" for
// a text of no script it knows. It uses whatlanggo (trigram profiles of 84
// languages, compiled in: no model to load, nothing held in memory).
func DetectLang(text string) (lang string, reliable bool) {
	s := text
	if len(s) > langSample {
		mid := len(s)/2 - langSample/2
		for mid > 0 && !utf8.RuneStart(s[mid]) {
			mid--
		}
		end := mid + langSample
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		s = s[mid:end]
	}
	if strings.TrimSpace(s) == "" {
		return "", false
	}
	info := whatlanggo.Detect(s)
	if info.Lang < 0 {
		return "", false
	}
	return langCode(info.Lang), info.IsReliable()
}

// langCode is the shortest BCP 47 primary subtag of a language: its ISO
// 639-1 code, the 639-1 code of its macrolanguage (Persian, Yiddish), else
// its ISO 639-3 code (Cebuano: "ceb").
func langCode(l whatlanggo.Lang) string {
	switch l {
	case whatlanggo.Pes:
		return "fa"
	case whatlanggo.Ydd:
		return "yi"
	}
	if c := l.Iso6391(); c != "" {
		return c
	}
	return l.Iso6393()
}

// resolveLang returns the language of a page: the one it declares (its
// lang attribute or content-language meta, else the response's
// Content-Language header) when the text agrees with it or is not clear
// enough to say, the detected one when the text clearly says another (a
// template that says lang="en" on every translation) or when the page
// declares none, and "" when neither says.
//
// mismatch tells a page whose text is clearly not in the language it
// claims: the one it declares, else the one its URL names (urlLang: a
// site's /cs-CZ/ copy of a page left untranslated). The URL never sets
// the language, only the mismatch.
func resolveLang(declared, header, urlLang, text string) (lang string, mismatch bool) {
	if declared == "" {
		declared = langTag(header)
	}
	claimed := declared
	if claimed == "" {
		claimed = urlLang
	}
	detected, reliable := DetectLang(text)
	mismatch = reliable && claimed != "" && primaryLang(claimed) != detected && detectable[primaryLang(claimed)]
	switch {
	case !reliable:
		return declared, mismatch
	case declared == "":
		return detected, mismatch
	case !mismatch:
		return declared, false // agreed, or a language detection cannot tell (Catalan)
	}
	return detected, true
}

// urlLang returns the language a URL's path names: the first segment
// that is a language tag of a language DetectLang knows, with a region
// ("cs-CZ", "pt_BR", "zh-tw") or without ("fr", "de"; not one of
// notURLLangs), lower-cased; "" if none.
func urlLang(pageURL string) string {
	u, err := url.Parse(pageURL)
	if err != nil {
		return ""
	}
	for _, seg := range strings.Split(u.Path, "/") {
		primary, region, hasRegion := strings.Cut(strings.ReplaceAll(seg, "_", "-"), "-")
		if len(primary) != 2 || !isLetters(primary) || !detectable[strings.ToLower(primary)] {
			continue
		}
		if hasRegion && (len(region) < 2 || len(region) > 4 || !isLetters(region)) || !hasRegion && notURLLangs[strings.ToLower(primary)] {
			continue
		}
		return strings.ToLower(primary)
	}
	return ""
}

// notURLLangs are language codes that, alone in a path segment, are
// more often English words or abbreviations (/id/42, /my/account).
var notURLLangs = map[string]bool{"id": true, "my": true, "am": true, "be": true, "so": true, "as": true, "or": true, "is": true, "to": true}

func isLetters(s string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// detectable is the codes of the languages DetectLang knows: a page that
// declares another keeps it, whatever its closest known language.
var detectable = func() map[string]bool {
	m := make(map[string]bool, len(whatlanggo.Langs))
	for l := range whatlanggo.Langs {
		m[langCode(l)] = true
	}
	return m
}()

// primaryLang returns a language tag's primary subtag: "en" of "en-us".
func primaryLang(tag string) string {
	p, _, _ := strings.Cut(tag, "-")
	return p
}
