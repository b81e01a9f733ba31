package content

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// letterFolds spells letters that Unicode decomposition does not reduce to ASCII.
var letterFolds = map[rune]string{
	'ß': "ss", 'æ': "ae", 'Æ': "ae", 'ø': "o", 'Ø': "o", 'œ': "oe", 'Œ': "oe", 'đ': "d", 'Đ': "d",
	'ł': "l", 'Ł': "l", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d", 'ı': "i", '&': "and",
}

const maxPageNameLen = 80

// PageName makes the URL-safe name of a page from its title: ASCII letters
// and digits in lower case, words joined by single hyphens, accents dropped
// ("Über uns" -> "uber-uns"). A title with nothing left (punctuation only,
// or a script without a Latin spelling) gives "page"; the caller makes the
// name unique among siblings.
func PageName(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFKD.String(title) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		s, ok := letterFolds[r]
		if !ok {
			r = unicode.ToLower(r)
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				s = string(r)
			}
		}
		if s == "" {
			hyphen = b.Len() > 0
			continue
		}
		if hyphen {
			b.WriteByte('-')
			hyphen = false
		}
		b.WriteString(s)
	}
	name := b.String()
	if len(name) > maxPageNameLen {
		name = strings.TrimRight(name[:maxPageNameLen], "-")
	}
	if name == "" {
		return "page"
	}
	return name
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
