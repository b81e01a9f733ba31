package fetch

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgecms/edgecms/problem"
)

// The query parameters Parse knows, by index.
const (
	qDepth = iota
	qExpand
	qTake
	qSkip
	qSort
	qDirection
	qFilter
	qFields
	qSyncToken
	qPageSize
	qLastAccessDate
	qPath
	numParams
)

// paramNames are the canonical spellings, used in errors and by Query.
var paramNames = [numParams]string{
	qDepth:          "contentLinkDepth",
	qExpand:         "expandAllContentLinks",
	qTake:           "take",
	qSkip:           "skip",
	qSort:           "sort",
	qDirection:      "direction",
	qFilter:         "filter",
	qFields:         "fields",
	qSyncToken:      "syncToken",
	qPageSize:       "pageSize",
	qLastAccessDate: "lastAccessDate",
	qPath:           "path",
}

// Limits of query values.
const (
	maxSortPath  = 200  // sort and each fields entry
	maxFields    = 100  // entries of fields
	maxPagePath  = 1024 // path of a page by path
	maxQueryWord = 32   // longer query names are not ours
)

// encoded reports whether a query name or value needs decoding.
func encoded(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '+' {
			return true
		}
	}
	return false
}

// paramIndex returns the index of the query name key (still encoded), or -1.
func paramIndex(key string) int {
	if encoded(key) {
		dec, err := url.QueryUnescape(key)
		if err != nil {
			return -1
		}
		key = dec
	}
	if len(key) > maxQueryWord {
		return -1
	}
	var buf [maxQueryWord]byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch string(buf[:len(key)]) {
	case "contentlinkdepth":
		return qDepth
	case "expandallcontentlinks":
		return qExpand
	case "take":
		return qTake
	case "skip":
		return qSkip
	case "sort":
		return qSort
	case "direction":
		return qDirection
	case "filter":
		return qFilter
	case "fields":
		return qFields
	case "synctoken":
		return qSyncToken
	case "pagesize":
		return qPageSize
	case "lastaccessdate":
		return qLastAccessDate
	case "path":
		return qPath
	}
	return -1
}

// query holds the first raw (still encoded) value of each known parameter.
type query struct {
	raw  [numParams]string
	seen [numParams]bool
	errs []problem.FieldError
}

func (q *query) fail(p int, format string, args ...any) {
	q.errs = append(q.errs, problem.FieldError{Field: paramNames[p], Reason: fmt.Sprintf(format, args...)})
}

// value returns the decoded value of parameter p and whether it was given.
func (q *query) value(p int) (string, bool) {
	if !q.seen[p] {
		return "", false
	}
	v := q.raw[p]
	if encoded(v) {
		dec, err := url.QueryUnescape(v)
		if err != nil {
			q.fail(p, "value is not properly percent-encoded")
			return "", false
		}
		v = dec
	}
	return v, true
}

// parseQuery reads the parameters that matter to r.Kind and validates them.
func (r *Request) parseQuery(raw string) error {
	var q query
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		key, val, _ := strings.Cut(pair, "=")
		if key == "" {
			continue
		}
		if p := paramIndex(key); p >= 0 && !q.seen[p] {
			q.raw[p], q.seen[p] = val, true
		}
	}
	switch r.Kind {
	case Item, List:
		r.Depth = q.integer(qDepth, DefaultDepth, 0, MaxDepth)
		// At depth 0 no link is expanded, whole lists neither.
		r.ExpandAll = q.boolean(qExpand) && r.Depth > 0
	case Page, PageByPath:
		r.Depth = q.integer(qDepth, DefaultPageDepth, 0, MaxDepth)
		// A page at depth 1 shows its components at depth 0.
		r.ExpandAll = q.boolean(qExpand) && r.Depth > 1
	case SyncItems, SyncPages:
		r.SyncToken = q.integer64(qSyncToken, 0, 0, 1<<63-1)
		r.PageSize = q.integer(qPageSize, DefaultPageSize, 1, MaxPageSize)
	case URLRedirection:
		r.LastAccessDate = q.date(qLastAccessDate)
	}
	switch r.Kind {
	case List:
		r.Take = q.integer(qTake, DefaultTake, 1, MaxTake)
		r.Skip = q.integer(qSkip, 0, 0, 1<<31-1)
		r.Sort = q.sort()
		r.Direction = q.direction()
		if r.Sort == "" {
			r.Direction = "asc" // validated, but without a sort it means nothing
		}
		r.Filter = q.filter()
		r.Fields = q.fields()
	case PageByPath:
		r.Path = q.pagePath()
	}
	return problem.Fields(q.errs)
}

// integer64 parses an optional integer. A value with no digit at all
// ("undefined", "null", empty) means the default; one with digits must be an
// integer within [lo, hi].
func (q *query) integer64(p int, def, lo, hi int64) int64 {
	v, ok := q.value(p)
	v = strings.TrimSpace(v)
	if !ok || strings.IndexFunc(v, func(r rune) bool { return '0' <= r && r <= '9' }) < 0 {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			q.fail(p, "%s is out of range", v)
		} else {
			q.fail(p, "%q is not an integer", v)
		}
		return def
	}
	if n < lo || n > hi {
		if hi >= 1<<31-1 {
			q.fail(p, "must be at least %d; got %d", lo, n)
		} else {
			q.fail(p, "must be between %d and %d; got %d", lo, hi, n)
		}
		return def
	}
	return n
}

// integer is integer64 for int values.
func (q *query) integer(p, def, lo, hi int) int {
	return int(q.integer64(p, int64(def), int64(lo), int64(hi)))
}

// boolean parses an optional boolean: true, false, 1 or 0 in any case; empty,
// "undefined" and "null" mean false.
func (q *query) boolean(p int) bool {
	v, ok := q.value(p)
	v = strings.TrimSpace(v)
	switch {
	case !ok || v == "" || strings.EqualFold(v, "undefined") || strings.EqualFold(v, "null"):
		return false
	case strings.EqualFold(v, "true") || v == "1":
		return true
	case strings.EqualFold(v, "false") || v == "0":
		return false
	}
	q.fail(p, "%q is not true or false", v)
	return false
}

// absent reports whether an optional string value stands for "not given":
// empty, or "undefined" or "null" in any case, as boolean reads them. A
// value that differs only in case must not name a field (fields=Undefined)
// when "undefined" means none: the canonical query, lower case, would then
// read as another request.
func absent(v string) bool {
	return v == "" || strings.EqualFold(v, "undefined") || strings.EqualFold(v, "null")
}

// sort parses the sort path, lower-cased. A bare name other than contentID
// names a field, and is written fields.<name>, as the renderer reads it.
func (q *query) sort() string {
	v, ok := q.value(qSort)
	v = strings.TrimSpace(v)
	if !ok || absent(v) {
		return ""
	}
	if !validPropertyPath(v) {
		q.fail(qSort, "%q is not a dotted property path such as fields.title or properties.modified", v)
		return ""
	}
	v = strings.ToLower(v)
	if !strings.Contains(v, ".") && v != "contentid" {
		v = "fields." + v
	}
	return v
}

func (q *query) direction() string {
	v, ok := q.value(qDirection)
	v = strings.TrimSpace(v)
	switch {
	case !ok || absent(v) || strings.EqualFold(v, "asc"):
		return "asc"
	case strings.EqualFold(v, "desc"):
		return "desc"
	}
	q.fail(qDirection, "%q is not asc or desc", v)
	return "asc"
}

func (q *query) filter() *Filter {
	v, ok := q.value(qFilter)
	if !ok || absent(strings.TrimSpace(v)) {
		return nil
	}
	f, err := ParseFilter(v)
	if err != nil {
		q.fail(qFilter, "%s", err.Error())
		return nil
	}
	return f
}

// noFields is the canonical field selection that names no field: the
// renderer selects fields by name, and names hold no "." and are never
// "-".
var noFields = []string{"-"}

// fields parses a comma list of field names or fields.<name> paths into
// its canonical form: lower-cased names (fields.title is title), sorted,
// without duplicates or empty entries. An entry that still holds a "."
// names no field, as the renderer matches field names, and is left out; a
// selection of no field at all is noFields.
func (q *query) fields() []string {
	v, ok := q.value(qFields)
	if !ok || absent(strings.TrimSpace(v)) {
		return nil
	}
	var out []string
	named := false
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !validPropertyPath(f) {
			q.fail(qFields, "%q is not a field name or dotted property path", f)
			return nil
		}
		f = strings.ToLower(f)
		if name, ok := strings.CutPrefix(f, "fields."); ok && !strings.Contains(name, ".") {
			f = name
		}
		named = true
		if strings.Contains(f, ".") {
			continue
		}
		out = append(out, f)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxFields {
		q.fail(qFields, "at most %d fields; got %d", maxFields, len(out))
		return nil
	}
	if len(out) == 0 && named {
		return slices.Clone(noFields)
	}
	return out
}

// validPropertyPath reports whether s is a dotted path of names made of
// letters, digits, '_' and '-', such as fields.title.
func validPropertyPath(s string) bool {
	if s == "" || len(s) > maxSortPath {
		return false
	}
	prev := byte('.')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if prev == '.' {
				return false
			}
		case !isAlnum(c) && c != '_' && c != '-':
			return false
		}
		prev = c
	}
	return prev != '.'
}

// pagePath normalises the path of a page by path: lower case, one leading
// "/", empty segments dropped, no trailing "/" but for the root.
func (q *query) pagePath() string {
	v, ok := q.value(qPath)
	if !ok || strings.TrimSpace(v) == "" {
		q.fail(qPath, "required: the page path, such as /blog/my-post")
		return ""
	}
	if len(v) > maxPagePath {
		q.fail(qPath, "longer than %d bytes", maxPagePath)
		return ""
	}
	var b strings.Builder
	b.Grow(len(v) + 1)
	for seg := range strings.SplitSeq(v, "/") {
		if seg == "" {
			continue
		}
		if seg == "." || seg == ".." || strings.IndexFunc(seg, func(r rune) bool {
			return r == '\\' || r < 0x20 || r == 0x7f
		}) >= 0 {
			q.fail(qPath, "segment %q is not allowed", seg)
			return ""
		}
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if b.Len() == 0 {
		return "/"
	}
	return strings.ToLower(b.String())
}

// date parses lastAccessDate: RFC 3339 (a "+" of the offset may arrive as a
// space), or a date and time without offset, taken as UTC.
func (q *query) date(p int) string {
	v, ok := q.value(p)
	v = strings.TrimSpace(v)
	if !ok || absent(v) {
		return ""
	}
	t, ok := parseTime(strings.ReplaceAll(v, " ", "+"))
	if !ok {
		q.fail(p, "%q is not an RFC 3339 date and time", v)
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
