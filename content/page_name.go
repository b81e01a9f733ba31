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
func PageName(title string) string {
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
