package content

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/edgecms/edgecms/problem"
)

// ItemQuery selects and orders the working copies GET /{locale}/items
// lists.
type ItemQuery struct {
	// Container, when set, is the referenceName of the one container to
	// list; else every container's items are listed (components, which
	// live on pages, are not).
	Container string
	// Q, when set, keeps the copies whose text and html fields hold every
	// word of it (each as a prefix; CJK text as a substring), case- and
	// accent-insensitively, best first unless Sort says otherwise.
	Q string
	// State, when not 0, keeps the copies in that state.
	State State
	// Sort is itemOrder (the default with a container), contentID (the
	// default without), modified or state; with Q, relevance is the
	// default. Direction is asc (default) or desc.
	Sort, Direction string
	Take, Skip      int
}

// MaxQueryLength is the longest search text accepted, in characters.
const MaxQueryLength = 200

// MaxRanked is the most matches a search ranks by relevance; past it, the
// newest come first (unless a sort is asked for).
const MaxRanked = 5000

var itemSorts = map[string]string{
	"itemOrder": "i.item_order %[1]s, i.content_id %[1]s",
	"contentID": "i.content_id %[1]s",
	"modified":  "ic.modified %[1]s, i.content_id %[1]s",
	"state":     "ic.state %[1]s, i.content_id %[1]s",
}

// tsQuery turns search text into a to_tsquery expression: every word
// (a run of letters and digits) as a quoted prefix, all required. A run of
// CJK characters in a word is searched as the vectors hold it (schema/020):
// two or more characters as every one of their overlapping pairs, one
// character as a prefix, so that any substring of the stored text matches.
// The pairs are not a phrase (<->): a tsvector keeps no position past
// 16,383 and at most 256 per lexeme, so a phrase would miss the end of a
// long article. A match may then hold the pairs apart; ts_rank weighs
// pairs that stand close higher.
func tsQuery(q string) string {
	var terms []string
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, piece := range splitCJK(strings.ToLower(w)) {
			rs := []rune(piece)
			if !isCJK(rs[0]) || len(rs) == 1 {
				terms = append(terms, "'"+piece+"':*")
				continue
			}
			pairs := make([]string, len(rs)-1)
			for i := range pairs {
				pairs[i] = "'" + string(rs[i:i+2]) + "'"
			}
			terms = append(terms, strings.Join(pairs, " & "))
		}
	}
	return strings.Join(terms, " & ")
}

// splitCJK cuts w into its runs of CJK characters and of other characters.
func splitCJK(w string) []string {
	var out []string
	start, prev := 0, false
	for i, r := range w {
		c := isCJK(r)
		if i > 0 && c != prev {
			out = append(out, w[start:i])
			start = i
		}
		prev = c
	}
	return append(out, w[start:])
}

// isCJK reports whether r is one of the characters that the search vectors
// keep as overlapping pairs (the ranges of edgecms_cjk_grams, schema/020):
// Hangul jamo and syllables, Hiragana, Katakana (and its halfwidth forms),
// the CJK ideographs with their extensions and compatibility forms.
func isCJK(r rune) bool {
	switch {
	case r >= 0x1100 && r <= 0x11FF, r >= 0x3040 && r <= 0x30FF, r >= 0x3400 && r <= 0x4DBF,
		r >= 0x4E00 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7AF, r >= 0xF900 && r <= 0xFAFF,
		r >= 0xFF66 && r <= 0xFF9F, r >= 0x20000 && r <= 0x2FA1F:
		return true
	}
	return false
}

func (q *ItemQuery) validate() error {
	if q.Q != "" {
		n := utf8.RuneCountInString(strings.TrimSpace(q.Q))
		if n == 0 || n > MaxQueryLength {
			return problem.Field("q", "must be 1 to %d characters", MaxQueryLength)
		}
		if tsQuery(q.Q) == "" {
			return problem.Field("q", "must hold a word (letters or digits)")
		}
	}
	if q.State != 0 && stateNames[q.State] == "" {
		return problem.Field("state", "must be a state number from 1 to 7")
	}
	if q.Sort != "" && q.Sort != "relevance" && itemSorts[q.Sort] == "" {
		return problem.Field("sort", "must be itemOrder, contentID, modified, state or relevance")
	}
	if q.Sort == "relevance" && q.Q == "" {
		return problem.Field("sort", "relevance needs q")
	}
	if q.Direction != "" && q.Direction != "asc" && q.Direction != "desc" {
		return problem.Field("direction", "must be asc or desc")
	}
	return nil
}

// SearchItems lists the working copies in locale that q selects, in its
// order, with how many there are in all.
func (s *Store) SearchItems(ctx context.Context, inst Instance, locale string, q ItemQuery) (ItemPage, error) {
	if err := q.validate(); err != nil {
		return ItemPage{}, err
	}
	where := []string{"ic.instance_id = $1", "ic.locale = $2"}
	args := []any{inst.ID, locale}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.Container != "" {
		c, err := containerByName(ctx, s.db, inst, q.Container)
		if err != nil {
			return ItemPage{}, err
		}
		where = append(where, "ic.container_id = "+arg(c.ID))
	} else {
		where = append(where, "ic.container_id IS NOT NULL")
	}
	if q.State != 0 {
		where = append(where, "ic.state = "+arg(int(q.State)))
	}
	rank := ""
	if q.Q != "" {
		tq := "to_tsquery('simple', edgecms_unaccent(" + arg(tsQuery(q.Q)) + "))"
		where = append(where, "ic.search @@ "+tq)
		rank = "ts_rank(ic.search, " + tq + ")"
	}
	dir := "ASC"
	if q.Direction == "desc" {
		dir = "DESC"
	}
	sort := q.Sort
	if sort == "" {
		switch {
		case q.Q != "":
			sort = "relevance"
		case q.Container != "":
			sort = "itemOrder"
		default:
			sort = "contentID"
		}
	}
	cond := strings.Join(where, " AND ")
	p := ItemPage{}
	count := `SELECT count(*) FROM item_copies ic WHERE ` + cond
	if err := s.db.GetContext(ctx, &p.TotalCount, count, args...); err != nil {
		return ItemPage{}, fmt.Errorf("count items: %w", err)
	}
	// Ranking reads every match's vector: past MaxRanked matches (a word
	// most items hold) the newest come first instead, so that the answer
	// stays fast whatever the number of items.
	if sort == "relevance" && q.Sort == "" && p.TotalCount > MaxRanked {
		sort, dir = "contentID", "DESC"
	}
	var order string
	if sort == "relevance" {
		// Best first unless asked otherwise: asc means best first here too.
		rdir := "DESC"
		if q.Direction == "desc" {
			rdir = "ASC"
		}
		order = rank + " " + rdir + ", i.content_id"
	} else {
		order = fmt.Sprintf(itemSorts[sort], dir)
	}
	list := `SELECT ` + itemColumns + itemFrom + ` WHERE ` + cond + ` ORDER BY ` + order +
		` LIMIT ` + arg(q.Take) + ` OFFSET ` + arg(q.Skip)
	var rows []itemRow
	if err := s.db.SelectContext(ctx, &rows, list, args...); err != nil {
		return ItemPage{}, fmt.Errorf("list items: %w", err)
	}
	p.Items = make([]Item, len(rows))
	for i, r := range rows {
		p.Items[i] = r.item(s.PublicURL)
	}
	return p, nil
}
