package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxKeyValue is the longest escaped free-form value (filter, sort, fields,
// page path) written into a key as text; a longer one is written as "@" and
// the SHA-256 of its canonical text.
const maxKeyValue = 100

// Key is the one canonical object key of the request's answer, shared by the
// publisher (which writes it), the edge (which reads it) and the origin:
//
//	{guid}/{apitype}/{locale}/item/{contentID}/d{depth}[,all].json
//	{guid}/{apitype}/{locale}/list/{referenceName}/d{depth}[,all],take{n},skip{n}[,sort={path},{asc|desc}][,filter={filter}][,fields={a}+{b}].json
//	{guid}/{apitype}/{locale}/page/{pageID}/d{depth}[,all].json
//	{guid}/{apitype}/{locale}/pagepath/{channel}/{path}/d{depth}[,all].json
//	{guid}/{apitype}/{locale}/sitemap/flat/{channel}.json
//	{guid}/{apitype}/{locale}/sitemap/nested/{channel}.json
//	{guid}/{apitype}/{locale}/sync/items/token{n},size{n}.json
//	{guid}/{apitype}/{locale}/sync/pages/token{n},size{n}.json
//	{guid}/{apitype}/gallery/{galleryID}.json
//	{guid}/{apitype}/urlredirection.json
//	{guid}/{apitype}/urlredirection/since{yyyymmdd}t{hhmmss[.f]}z.json
//
// Names are lower case, every parameter that matters is written (defaults
// too) in this fixed order, and parameters that do not matter to the kind
// are left out, so every spelling of one request has one key. A key holds
// only [a-z0-9._,=@~+/-]: free-form text is escaped, each byte outside
// [a-z0-9._-] as "~" and two lower-case hex digits (a leading "." too, so
// no segment is "." or ".."), and written as "@" and a SHA-256 in hex when
// the escaped text is longer than 100 bytes. Key is meant for requests
// returned by Parse.
func (r Request) Key() string {
	b := make([]byte, 0, 96)
	b = appendSegment(b, r.Guid)
	b = append(b, '/')
	b = appendSegment(b, r.APIType)
	b = append(b, '/')
	switch r.Kind {
	case Gallery:
		b = append(b, "gallery/"...)
		b = strconv.AppendInt(b, r.GalleryID, 10)
		return string(append(b, ".json"...))
	case URLRedirection:
		b = append(b, "urlredirection"...)
		if t, err := time.Parse(time.RFC3339Nano, r.LastAccessDate); err == nil {
			b = append(b, "/since"...)
			b = append(b, strings.ToLower(t.UTC().Format("20060102T150405.999999999Z"))...)
		} else if r.LastAccessDate != "" {
			b = append(b, "/since="...)
			b = appendValue(b, r.LastAccessDate)
		}
		return string(append(b, ".json"...))
	}
	b = appendSegment(b, strings.ToLower(r.Locale))
	switch r.Kind {
	case Item:
		b = append(b, "/item/"...)
		b = strconv.AppendInt(b, r.ContentID, 10)
		b = r.appendDepth(append(b, '/'))
	case List:
		b = append(b, "/list/"...)
		b = appendSegment(b, r.ReferenceName)
		b = r.appendDepth(append(b, '/'))
		b = append(b, ",take"...)
		b = strconv.AppendInt(b, int64(r.Take), 10)
		b = append(b, ",skip"...)
		b = strconv.AppendInt(b, int64(r.Skip), 10)
		if r.Sort != "" {
			b = append(b, ",sort="...)
			b = appendValue(b, r.Sort)
			b = append(b, ',')
			b = append(b, r.direction()...)
		}
		if r.Filter != nil {
			b = append(b, ",filter="...)
			b = appendValue(b, r.Filter.String())
		}
		if len(r.Fields) > 0 {
			b = append(b, ",fields="...)
			b = appendList(b, r.Fields)
		}
	case Page:
		b = append(b, "/page/"...)
		b = strconv.AppendInt(b, r.PageID, 10)
		b = r.appendDepth(append(b, '/'))
	case PageByPath:
		b = append(b, "/pagepath/"...)
		b = appendSegment(b, r.Channel)
		b = append(b, '/')
		b = appendValue(b, r.Path)
		b = r.appendDepth(append(b, '/'))
	case SitemapFlat, SitemapNested:
		b = append(b, "/sitemap/"...)
		if r.Kind == SitemapFlat {
			b = append(b, "flat/"...)
		} else {
			b = append(b, "nested/"...)
		}
		b = appendSegment(b, r.Channel)
	case SyncItems, SyncPages:
		if r.Kind == SyncItems {
			b = append(b, "/sync/items/token"...)
		} else {
			b = append(b, "/sync/pages/token"...)
		}
		b = strconv.AppendInt(b, r.SyncToken, 10)
		b = append(b, ",size"...)
		b = strconv.AppendInt(b, int64(r.PageSize), 10)
	default:
		b = append(b, "/unknown"...)
	}
	return string(append(b, ".json"...))
}

func (r Request) appendDepth(b []byte) []byte {
	b = append(b, 'd')
	b = strconv.AppendInt(b, int64(r.Depth), 10)
	if r.ExpandAll {
		b = append(b, ",all"...)
	}
	return b
}

func (r Request) direction() string {
	if strings.EqualFold(r.Direction, "desc") {
		return "desc"
	}
	return "asc"
}

func keySafe(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s with every byte outside [a-z0-9._-] written as
// "~xx"; with leadingDot, a leading "." too.
func appendEscaped(b []byte, s string, leadingDot bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keySafe(c) && !(leadingDot && i == 0 && c == '.') {
			b = append(b, c)
			continue
		}
		b = append(b, '~', hexDigits[c>>4], hexDigits[c&15])
	}
	return b
}

// appendSegment appends a name as one key segment: escaped, never empty
// (an empty name is "~", which escaping never produces), never "." or "..".
func appendSegment(b []byte, s string) []byte {
	if s == "" {
		return append(b, '~')
	}
	return appendEscaped(b, s, true)
}

// appendValue appends free-form text: escaped, or "@" and its SHA-256 when
// the escaped form is longer than maxKeyValue.
func appendValue(b []byte, s string) []byte {
	if escapedLen(s) > maxKeyValue {
		return appendHash(b, s)
	}
	return appendEscaped(b, s, true)
}

// appendList appends a list of free-form texts, escaped and joined by "+",
// or "@" and the SHA-256 of the texts joined by "," when that is longer than
// maxKeyValue.
func appendList(b []byte, list []string) []byte {
	n := len(list) - 1
	for _, s := range list {
		n += escapedLen(s)
	}
	if n > maxKeyValue {
		return appendHash(b, strings.Join(list, ","))
	}
	for i, s := range list {
		if i > 0 {
			b = append(b, '+')
		}
		b = appendEscaped(b, s, true)
	}
	return b
}

func escapedLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if keySafe(s[i]) && !(i == 0 && s[i] == '.') {
			n++
		} else {
			n += 3
		}
	}
	return n
}

func appendHash(b []byte, s string) []byte {
	sum := sha256.Sum256([]byte(s))
	b = append(b, '@')
	return hex.AppendEncode(b, sum[:])
}

// URLPath is the request's canonical URL path, such as
// /acme/fetch/en-us/item/42, for forwarding it (with Query) to the origin.
// Parse of URLPath and Query gives back the same request.
func (r Request) URLPath() string {
	var b strings.Builder
	seg := func(s string) {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	seg(r.Guid)
	seg(r.APIType)
	switch r.Kind {
	case Gallery:
		seg("gallery")
		seg(strconv.FormatInt(r.GalleryID, 10))
		return b.String()
	case URLRedirection:
		seg("urlredirection")
		return b.String()
	}
	seg(r.Locale)
	switch r.Kind {
	case Item:
		seg("item")
		seg(strconv.FormatInt(r.ContentID, 10))
	case List:
		seg("list")
		seg(r.ReferenceName)
	case Page:
		seg("page")
		seg(strconv.FormatInt(r.PageID, 10))
	case PageByPath:
		seg("page")
		seg(r.Channel)
	case SitemapFlat:
		seg("sitemap")
		seg("flat")
		seg(r.Channel)
	case SitemapNested:
		seg("sitemap")
		seg("nested")
		seg(r.Channel)
	case SyncItems:
		seg("sync")
		seg("items")
	case SyncPages:
		seg("sync")
		seg("pages")
	}
	return b.String()
}

// Query is the request's canonical query string (without "?"): the
// parameters that matter to its kind, defaults included, in a fixed order,
// with their canonical names. It is empty for sitemaps and galleries.
func (r Request) Query() string {
	var b strings.Builder
	add := func(p int, v string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(paramNames[p])
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	depth := func() {
		add(qDepth, strconv.Itoa(r.Depth))
		add(qExpand, strconv.FormatBool(r.ExpandAll))
	}
	switch r.Kind {
	case Item, Page:
		depth()
	case PageByPath:
		add(qPath, r.Path)
		depth()
	case List:
		depth()
		add(qTake, strconv.Itoa(r.Take))
		add(qSkip, strconv.Itoa(r.Skip))
		if r.Sort != "" {
			add(qSort, r.Sort)
			add(qDirection, r.direction())
		}
		if r.Filter != nil {
			add(qFilter, r.Filter.String())
		}
		if len(r.Fields) > 0 {
			add(qFields, strings.Join(r.Fields, ","))
		}
	case SyncItems, SyncPages:
		add(qSyncToken, strconv.FormatInt(r.SyncToken, 10))
		add(qPageSize, strconv.Itoa(r.PageSize))
	case URLRedirection:
		if r.LastAccessDate != "" {
			add(qLastAccessDate, r.LastAccessDate)
		}
	}
	return b.String()
}

// Cacheable reports whether the answer may be stored and served from a
// cache: true for the fetch flavour (published content), false for preview,
// which must always come fresh from the origin. Sync answers are never
// cached either: they are reads of a cursor whose answer grows as soon as a
// change commits, and a cached one would hold a client back.
func (r Request) Cacheable() bool {
	return r.APIType == Fetch && r.Kind != SyncItems && r.Kind != SyncPages
}
