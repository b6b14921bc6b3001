package web

import "strings"

// titleSeparators split a site's name from a page's own title.
var titleSeparators = []string{" — ", " – ", " - ", " -- ", " | ", " · ", " :: ", " : ", ": "}

// minAffixTitles is how many titles must share an affix before it is taken
// for the site's name: with fewer, one page's title could lose its words.
const minAffixTitles = 3

// commonAffix returns the longest prefix and suffix that every title has,
// each cut at a title separator ("PostgreSQL: ", " — PostgreSQL 15
// Documentation") and leaving every title something of its own. Both are
// "" for fewer than minAffixTitles titles or when a title is empty.
func commonAffix(titles []string) (prefix, suffix string) {
	if len(titles) < minAffixTitles {
		return "", ""
	}
	first := titles[0]
	for _, sep := range titleSeparators {
		for i := 0; ; {
			j := strings.Index(first[i:], sep)
			if j < 0 {
				break
			}
			at := i + j
			if p := first[:at+len(sep)]; len(p) > len(prefix) && everyHas(titles, p, strings.HasPrefix) {
				prefix = p
			}
			if s := first[at:]; len(s) > len(suffix) && everyHas(titles, s, strings.HasSuffix) {
				suffix = s
			}
			i = at + 1
		}
	}
	for _, t := range titles {
		if len(t) <= len(prefix)+len(suffix) || strings.TrimSpace(t[len(prefix):len(t)-len(suffix)]) == "" {
			// Some title would be left empty: keep the longer affix only.
			if len(prefix) >= len(suffix) {
				suffix = ""
			} else {
				prefix = ""
			}
			break
		}
	}
	for _, t := range titles {
		if strings.TrimSpace(stripAffix(t, prefix, suffix)) == "" {
			return "", ""
		}
	}
	return prefix, suffix
}

// everyHas reports whether has(t, a) holds for every title t, and a is
// not all of any of them.
func everyHas(titles []string, a string, has func(string, string) bool) bool {
	for _, t := range titles {
		if !has(t, a) || len(t) == len(a) {
			return false
		}
	}
	return true
}

// stripAffix removes prefix and suffix from title.
func stripAffix(title, prefix, suffix string) string {
	title = strings.TrimPrefix(title, prefix)
	return strings.TrimSpace(strings.TrimSuffix(title, suffix))
}
