package content

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/gosimple/slug"

	"github.com/edgecms/edgecms/problem"
)

const maxPageNameLen = 80

// PageName makes the URL-safe name of a page from its title: ASCII letters
// and digits in lower case, words joined by single hyphens, transliterated
// from any script by github.com/gosimple/slug (unidecode tables: "Über
// uns" -> "uber-uns", "О нас" -> "o-nas", "会社概要" -> "hui-she-gai-yao").
// A title with nothing left (punctuation or emoji only) gives "page"; the
// caller makes the name unique among siblings.
//
// A title that is a name already (a slug field: "hello-world") is its own
// name, without the transliteration, which costs microseconds: a sitemap
// names every item of a dynamic page this way on each walk.
func PageName(title string) string {
	if isPageName(title) {
		return title
	}
	return makePageName(title)
}

// isPageName reports whether s is what PageName makes of it: words of
// lower-case ASCII letters and digits joined by single hyphens, at most
// maxPageNameLen bytes.
func isPageName(s string) bool {
	if s == "" || len(s) > maxPageNameLen || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

func makePageName(title string) string {
	// Symbols (emoji) separate words, where slug would drop them.
	title = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.So, r) {
			return ' '
		}
		return r
	}, title)
	name := slug.Make(title)
	// slug keeps underscores; names here are letters, digits and hyphens.
	name = strings.Trim(strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' }), "-"), "-")
	if len(name) > maxPageNameLen {
		name = strings.TrimRight(name[:maxPageNameLen], "-")
	}
	if name == "" {
		return "page"
	}
	return name
}

// pageNamePattern is what a chosen page name may be: a path segment that
// needs no escaping.
var pageNamePattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9_-]{0,78}[a-z0-9])?$`)

// checkPageName validates a name given for a page.
func checkPageName(name string) error {
	if !pageNamePattern.MatchString(name) {
		return problem.Field("name", "must be 1 to 80 lower-case letters, digits, hyphens or underscores, starting and ending with a letter or digit")
	}
	return nil
}

// uniqueName returns base, or base-2, base-3, ... whichever is not taken.
func uniqueName(base string, taken map[string]bool) string {
	if !taken[base] {
		return base
	}
	for n := 2; ; n++ {
		c := base + "-" + strconv.Itoa(n)
		if !taken[c] {
			return c
		}
	}
}
