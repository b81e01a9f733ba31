// Package fetch turns a Content Fetch API request into a validated Request
// with one canonical object key, and holds the grammar of list filters and
// sorts.
//
// The origin, the edge and the publisher all speak in Requests: the publisher
// writes a rendered answer under Request.Key, the edge looks the same key up,
// and the origin answers what the edge misses. Every spelling of a request
// that real clients send (query names in any case, repeated keys, defaults
// left out or spelled "undefined", a /v1 prefix, the guid in the path, in a
// Guid header or in the host name) parses to one Request with one Key, so the
// three roles always agree on where an answer lives.
//
// The package is pure: no I/O, no HTTP framework, no regular expressions.
// Errors are problem errors: problem.Invalid (400) for a value a client can
// correct, problem.NotFound (404) for a path of no known shape.
// README.md describes the key scheme.
package fetch

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/edgecms/edgecms/problem"
)

// The two API types (delivery flavours) of the Fetch API.
const (
	Fetch   = "fetch"   // published content only; answers may be cached
	Preview = "preview" // the working copy; never cached
)

// Kind says what a Request asks for.
type Kind uint8

// The kinds of request. The zero Kind is invalid.
const (
	Item           Kind = iota + 1 // /{locale}/item/{contentID}
	List                           // /{locale}/list/{referenceName}
	Page                           // /{locale}/page/{pageID}
	PageByPath                     // /{locale}/page/{channel}?path=/a/b
	SitemapFlat                    // /{locale}/sitemap/flat/{channel}
	SitemapNested                  // /{locale}/sitemap/nested/{channel}
	SyncItems                      // /{locale}/sync/items
	SyncPages                      // /{locale}/sync/pages
	Gallery                        // /gallery/{galleryID}, no locale
	URLRedirection                 // /urlredirection, no locale
)

var kindNames = [...]string{
	Item:           "item",
	List:           "list",
	Page:           "page",
	PageByPath:     "page-by-path",
	SitemapFlat:    "sitemap-flat",
	SitemapNested:  "sitemap-nested",
	SyncItems:      "sync-items",
	SyncPages:      "sync-pages",
	Gallery:        "gallery",
	URLRedirection: "urlredirection",
}

// String is the kind's name, for example "page-by-path".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Default values of the optional parameters, per client-compat.md.
const (
	DefaultDepth     = 1   // contentLinkDepth of items and lists
	DefaultPageDepth = 2   // contentLinkDepth of pages (by ID or by path)
	DefaultTake      = 10  // list page size
	DefaultPageSize  = 500 // sync page size
	MaxDepth         = 5   // largest contentLinkDepth
	MaxTake          = 250 // largest list take
	MaxPageSize      = 500 // largest sync pageSize
)

// Request is one validated Fetch API request in canonical form. Parse fills
// only the members that matter to its Kind; the others are zero.
type Request struct {
	Guid    string // instance identifier, lower-cased
	APIType string // Fetch or Preview
	// Locale is the locale code as sent (the caller resolves it against the
	// instance's configured codes); empty for Gallery and URLRedirection.
	// Key uses its lower-case form.
	Locale string
	Kind   Kind

	ContentID int64 // Item
	PageID    int64 // Page
	GalleryID int64 // Gallery

	ReferenceName string // List: container name, lower-cased
	Channel       string // PageByPath, SitemapFlat, SitemapNested: lower-cased
	// Path is the page path of a PageByPath request (the path query
	// parameter), normalised: lower-cased, one leading "/", no empty, "." or
	// ".." segments, no trailing "/" except for the root "/".
	Path string

	Depth     int  // contentLinkDepth of Item, List, Page, PageByPath
	ExpandAll bool // expandAllContentLinks of Item, List, Page, PageByPath

	Take      int     // List: 1..MaxTake
	Skip      int     // List: >= 0
	Sort      string  // List: lower-cased dotted path, or empty for container order
	Direction string  // List: "asc" or "desc"; always "asc" without Sort
	Filter    *Filter // List: nil when there is none
	// Fields is the List's field selection: lower-cased dotted paths, sorted,
	// without duplicates; nil returns all fields.
	Fields []string

	SyncToken int64 // SyncItems, SyncPages: >= 0
	PageSize  int   // SyncItems, SyncPages: 1..MaxPageSize

	// LastAccessDate of a URLRedirection request, in canonical form:
	// RFC 3339 in UTC with nanosecond precision and no trailing zeros
	// (time.RFC3339Nano); empty when not given.
	LastAccessDate string
}

// Input is the part of an HTTP request that Parse reads.
type Input struct {
	// Host is the Host header; a host name {guid}-api.<domain> names the
	// instance when neither the path nor the Guid header does.
	Host string
	// Path is the request path as sent, still percent-encoded (Fiber:
	// c.Request().URI().PathOriginal(); net/http: r.URL.EscapedPath()).
	// Parse splits it at "/" before decoding, so an encoded "%2F" never
	// makes a new segment.
	Path string
	// RawQuery is the query string without the "?", still encoded.
	RawQuery string
	// GuidHeader is the value of the Guid request header, if any.
	GuidHeader string
}

// Length limits of path values.
const (
	maxGuid     = 64
	maxName     = 100 // locale, reference name, channel
	maxSegments = 8   // /v1/{guid}/{apitype}/{locale}/sitemap/flat/{channel} and one spare
)

// Parse validates an incoming Fetch API request and returns it in canonical
// form. A path of no known shape is a problem.NotFound error; a bad value
// (an unknown apitype or request type, an ID that is not a positive
// integer, a parameter out of bounds, a filter that does not parse, a path
// segment that could escape the instance's key prefix) is a problem.Invalid
// error naming the parameter.
//
// Query parameter names and fixed path words match in any case, a repeated
// query key takes its first value, and an optional number given as no
// number at all ("undefined", empty) takes its default. Parameters that do
// not apply to the request's kind are ignored, even when malformed.
func Parse(in Input) (Request, error) {
	var buf [maxSegments]string
	segs, err := splitPath(in.Path, &buf)
	if err != nil {
		return Request{}, err
	}
	var r Request
	rest, err := r.parseInstance(segs, in)
	if err != nil {
		return Request{}, err
	}
	if err := r.parseResource(rest); err != nil {
		return Request{}, err
	}
	if err := r.parseQuery(in.RawQuery); err != nil {
		return Request{}, err
	}
	return r, nil
}

func notFound() error {
	return problem.NotFoundf("no Fetch API resource has this path")
}

// splitPath splits a still-encoded path into decoded segments. One trailing
// "/" is allowed; an empty segment elsewhere is no known shape. A segment that
// decodes to "." or "..", or holds "/", "\" or a control character, is
// rejected: it could only serve to escape a key prefix.
func splitPath(p string, buf *[maxSegments]string) ([]string, error) {
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil, notFound()
	}
	n := 0
	for {
		seg, next, more := strings.Cut(p, "/")
		if seg == "" || n == len(buf) {
			return nil, notFound()
		}
		if strings.IndexByte(seg, '%') >= 0 {
			dec, err := url.PathUnescape(seg)
			if err != nil {
				return nil, problem.Field("path", "segment %q is not properly percent-encoded", seg)
			}
			seg = dec
		}
		if !safeSegment(seg) {
			return nil, problem.Field("path", "segment %q is not allowed", seg)
		}
		buf[n] = seg
		n++
		if !more {
			return buf[:n], nil
		}
		p = next
	}
}

func safeSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '\\' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// parseInstance finds the guid and the apitype and returns the segments after
// the apitype. The apitype is the first "fetch" or "preview" segment that has
// a guid before it: nothing (the guid then comes from the Guid header or the
// host), a guid, "v1" (with the guid from header or host), or "v1" and a guid.
func (r *Request) parseInstance(s []string, in Input) ([]string, error) {
	external, externalErr := externalGuid(in)
	for i := 0; i < 3 && i < len(s); i++ {
		api := apiType(s[i])
		if api == "" {
			continue
		}
		var guid string
		switch {
		case i == 0 && external != "":
			guid = external
		case i == 1 && isV1(s[0]) && external != "":
			guid = external
		case i == 1:
			guid = s[0]
		case i == 2 && isV1(s[0]):
			guid = s[1]
		default:
			continue
		}
		if !validGuid(guid) {
			return nil, problem.Field("guid", "%q is not a valid instance guid (letters, digits and '-', at most %d)", guid, maxGuid)
		}
		r.Guid = strings.ToLower(guid)
		r.APIType = api
		return s[i+1:], nil
	}
	switch {
	case apiType(s[0]) != "" && externalErr != nil:
		return nil, externalErr
	case apiType(s[0]) != "":
		return nil, problem.Field("guid", "missing: give the instance guid in the path, the Guid header or the host name")
	case len(s) > 2 && apiType(s[2]) != "":
		return nil, notFound() // an apitype after some prefix other than v1
	case len(s) >= 3:
		at := 1
		if isV1(s[0]) && len(s) >= 4 {
			at = 2
		}
		return nil, problem.Field("apitype", "%q is not fetch or preview", s[at])
	}
	return nil, notFound()
}

func apiType(s string) string {
	switch {
	case strings.EqualFold(s, Fetch):
		return Fetch
	case strings.EqualFold(s, Preview):
		return Preview
	}
	return ""
}

func isV1(s string) bool { return strings.EqualFold(s, "v1") }

// externalGuid is the guid named outside the path: the Guid header, else a
// host name {guid}-api.<domain>. A malformed header is an error, returned for
// when the path names no guid; a host that does not fit is ignored.
func externalGuid(in Input) (string, error) {
	if h := strings.TrimSpace(in.GuidHeader); h != "" {
		if !validGuid(h) {
			return "", problem.Field("guid", "Guid header %q is not a valid instance guid", h)
		}
		return h, nil
	}
	label, _, ok := strings.Cut(in.Host, ".")
	if !ok || len(label) <= len("-api") || !strings.EqualFold(label[len(label)-4:], "-api") {
		return "", nil
	}
	if g := label[:len(label)-4]; validGuid(g) {
		return g, nil
	}
	return "", nil
}

func validGuid(s string) bool {
	if s == "" || len(s) > maxGuid {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// validName reports whether s may be a locale, reference name or channel:
// letters, digits, '-', '_' and '.', not starting with '.', without "..".
// Such a name can never leave the key prefix it is placed under.
func validName(s string) bool {
	if s == "" || len(s) > maxName || s[0] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func nameField(field, s string) error {
	return problem.Field(field, "%q is not a valid name (letters, digits, '-', '_' and '.', at most %d, not starting with '.')", s, maxName)
}

// parseResource reads the segments after the apitype.
func (r *Request) parseResource(s []string) error {
	if len(s) == 0 {
		return notFound()
	}
	switch {
	case strings.EqualFold(s[0], "urlredirection"):
		if len(s) != 1 {
			return notFound()
		}
		r.Kind = URLRedirection
		return nil
	case strings.EqualFold(s[0], "gallery"):
		if len(s) != 2 {
			return notFound()
		}
		id, err := parseID("galleryID", s[1])
		r.Kind, r.GalleryID = Gallery, id
		return err
	}
	if len(s) < 2 {
		return notFound()
	}
	if !validName(s[0]) {
		return nameField("locale", s[0])
	}
	r.Locale = s[0]
	word, args := s[1], s[2:]
	switch {
	case strings.EqualFold(word, "item"):
		if len(args) != 1 {
			return notFound()
		}
		id, err := parseID("contentID", args[0])
		r.Kind, r.ContentID = Item, id
		return err
	case strings.EqualFold(word, "list"):
		if len(args) != 1 {
			return notFound()
		}
		if !validName(args[0]) {
			return nameField("referenceName", args[0])
		}
		r.Kind, r.ReferenceName = List, strings.ToLower(args[0])
		return nil
	case strings.EqualFold(word, "page"):
		if len(args) != 1 {
			return notFound()
		}
		if looksNumeric(args[0]) {
			id, err := parseID("pageID", args[0])
			r.Kind, r.PageID = Page, id
			return err
		}
		if !validName(args[0]) {
			return nameField("channel", args[0])
		}
		r.Kind, r.Channel = PageByPath, strings.ToLower(args[0])
		return nil
	case strings.EqualFold(word, "sitemap"):
		if len(args) != 2 {
			return notFound()
		}
		switch {
		case strings.EqualFold(args[0], "flat"):
			r.Kind = SitemapFlat
		case strings.EqualFold(args[0], "nested"):
			r.Kind = SitemapNested
		default:
			return problem.Field("requestType", "sitemap/%s is not sitemap/flat or sitemap/nested", args[0])
		}
		if !validName(args[1]) {
			return nameField("channel", args[1])
		}
		r.Channel = strings.ToLower(args[1])
		return nil
	case strings.EqualFold(word, "sync"):
		if len(args) != 1 {
			return notFound()
		}
		switch {
		case strings.EqualFold(args[0], "items"):
			r.Kind = SyncItems
		case strings.EqualFold(args[0], "pages"):
			r.Kind = SyncPages
		default:
			return problem.Field("requestType", "sync/%s is not sync/items or sync/pages", args[0])
		}
		return nil
	}
	return problem.Field("requestType", "%q is not item, list, page, sitemap or sync", word)
}

// looksNumeric reports whether s is an optional sign and digits: after
// "page" such a segment is a page ID (valid or not), anything else a channel.
func looksNumeric(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseID parses a path ID: decimal digits, a positive int64.
func parseID(field, s string) (int64, error) {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, problem.Field(field, "%q is not a positive integer", s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, problem.Field(field, "%q is not a positive integer", s)
	}
	return n, nil
}
