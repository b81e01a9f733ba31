package fetch

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/problem"
)

// Builders of expected requests with every default made explicit.
func item(id int64) Request {
	return Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: Item, ContentID: id, Depth: 1}
}

func list(ref string) Request {
	return Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: List, ReferenceName: ref,
		Depth: 1, Take: 10, Direction: "asc"}
}

func page(id int64) Request {
	return Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: Page, PageID: id, Depth: 2}
}

func pageByPath(channel, path string) Request {
	return Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: PageByPath, Channel: channel, Path: path, Depth: 2}
}

func sync(k Kind) Request {
	return Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: k, PageSize: 500}
}

func with(r Request, f func(*Request)) Request {
	f(&r)
	return r
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want Request
	}{
		{"item", Input{Path: "/acme/fetch/en-us/item/42"}, item(42)},
		{"item upper-case words", Input{Path: "/ACME/FETCH/en-US/ITEM/42"}, with(item(42), func(r *Request) { r.Locale = "en-US" })},
		{"item trailing slash", Input{Path: "/acme/fetch/en-us/item/42/"}, item(42)},
		{"item leading zeros", Input{Path: "/acme/fetch/en-us/item/0042"}, item(42)},
		{"item percent-encoded word", Input{Path: "/acme/fetch/en-us/%69tem/42"}, item(42)},
		{"preview", Input{Path: "/acme/preview/en-us/item/42"}, with(item(42), func(r *Request) { r.APIType = Preview })},
		{"preview mixed case", Input{Path: "/acme/PreView/en-us/item/42"}, with(item(42), func(r *Request) { r.APIType = Preview })},
		{"v1 alias", Input{Path: "/v1/acme/fetch/en-us/item/42"}, item(42)},
		{"V1 alias upper", Input{Path: "/V1/acme/fetch/en-us/item/42"}, item(42)},
		{"guid header", Input{Path: "/fetch/en-us/item/42", GuidHeader: "acme"}, item(42)},
		{"guid header upper-case", Input{Path: "/fetch/en-us/item/42", GuidHeader: "ACME"}, item(42)},
		{"guid header and v1", Input{Path: "/v1/fetch/en-us/item/42", GuidHeader: "acme"}, item(42)},
		{"guid header repeated in path", Input{Path: "/acme/fetch/en-us/item/42", GuidHeader: "acme"}, item(42)},
		{"path guid wins over header", Input{Path: "/acme/fetch/en-us/item/42", GuidHeader: "other"}, item(42)},
		{"empty guid header ignored", Input{Path: "/acme/fetch/en-us/item/42", GuidHeader: ""}, item(42)},
		{"bad header ignored when path has guid", Input{Path: "/acme/fetch/en-us/item/42", GuidHeader: "no way"}, item(42)},
		{"host form", Input{Host: "acme-api.example.com", Path: "/fetch/en-us/item/42"}, item(42)},
		{"host form with port", Input{Host: "acme-api.example.com:8443", Path: "/fetch/en-us/item/42"}, item(42)},
		{"host form upper-case", Input{Host: "ACME-API.Example.com", Path: "/fetch/en-us/item/42"}, item(42)},
		{"host form repeating guid", Input{Host: "acme-api.example.com", Path: "/acme/fetch/en-us/item/42"}, item(42)},
		{"host form guid with dashes", Input{Host: "ab-12-u-api.example.com", Path: "/fetch/en-us/item/42"},
			with(item(42), func(r *Request) { r.Guid = "ab-12-u" })},
		{"path guid wins over host", Input{Host: "edge-api.example.com", Path: "/acme/fetch/en-us/item/42"}, item(42)},
		{"header wins over host", Input{Host: "other-api.example.com", Path: "/fetch/en-us/item/42", GuidHeader: "acme"}, item(42)},
		{"guid named fetch", Input{Path: "/fetch/fetch/en-us/item/42"}, with(item(42), func(r *Request) { r.Guid = "fetch" })},
		{"uuid guid", Input{Path: "/191309CA-e675-4be2-bb29-351879528707/fetch/en-us/item/1"},
			with(item(1), func(r *Request) { r.Guid = "191309ca-e675-4be2-bb29-351879528707" })},

		{"depth", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=3"}, with(item(42), func(r *Request) { r.Depth = 3 })},
		{"depth Pascal case", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "ContentLinkDepth=3"}, with(item(42), func(r *Request) { r.Depth = 3 })},
		{"depth upper case", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "CONTENTLINKDEPTH=3"}, with(item(42), func(r *Request) { r.Depth = 3 })},
		{"depth 0", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=0"}, with(item(42), func(r *Request) { r.Depth = 0 })},
		{"depth 5", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=5"}, with(item(42), func(r *Request) { r.Depth = 5 })},
		{"repeated key takes first", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "ContentLinkDepth=2&ContentLinkDepth=4"}, with(item(42), func(r *Request) { r.Depth = 2 })},
		{"repeated key in two casings", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentlinkdepth=4&ContentLinkDepth=2"}, with(item(42), func(r *Request) { r.Depth = 4 })},
		{"undefined means default", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=undefined"}, item(42)},
		{"empty means default", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth="}, item(42)},
		{"bare key means default", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth"}, item(42)},
		{"NaN means default", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=NaN"}, item(42)},
		{"trailing ampersand", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=2&"}, with(item(42), func(r *Request) { r.Depth = 2 })},
		{"empty pairs", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "&&contentLinkDepth=2&&"}, with(item(42), func(r *Request) { r.Depth = 2 })},
		{"encoded query name", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "content%4cinkDepth=2"}, with(item(42), func(r *Request) { r.Depth = 2 })},
		{"unknown parameters ignored", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "foo=bar&locale=xx"}, item(42)},
		{"parameters of other kinds ignored", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "take=0&skip=-1&filter=((&pageSize=0"}, item(42)},
		{"expand true", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "expandAllContentLinks=true"}, with(item(42), func(r *Request) { r.ExpandAll = true })},
		{"expand TRUE", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "ExpandAllContentLinks=TRUE"}, with(item(42), func(r *Request) { r.ExpandAll = true })},
		{"expand 1", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "expandallcontentlinks=1"}, with(item(42), func(r *Request) { r.ExpandAll = true })},
		{"expand False", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "expandAllContentLinks=False"}, item(42)},
		{"expand 0", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "expandAllContentLinks=0"}, item(42)},
		{"expand undefined", Input{Path: "/acme/fetch/en-us/item/42", RawQuery: "expandAllContentLinks=undefined"}, item(42)},

		{"list", Input{Path: "/acme/fetch/en-us/list/posts"}, list("posts")},
		{"list name lower-cased", Input{Path: "/acme/fetch/en-us/LIST/BlogPosts"}, list("blogposts")},
		{"list name with _ . -", Input{Path: "/acme/fetch/en-us/list/blog_posts.v2-x"}, list("blog_posts.v2-x")},
		{"list take skip", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "take=250&skip=500"},
			with(list("posts"), func(r *Request) { r.Take, r.Skip = 250, 500 })},
		{"list take 1", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "Take=1&Skip=0"},
			with(list("posts"), func(r *Request) { r.Take = 1 })},
		{"list take plus sign", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "take=%2B20"},
			with(list("posts"), func(r *Request) { r.Take = 20 })},
		{"list take undefined", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "take=undefined&skip=undefined"}, list("posts")},
		{"list fields, sort and direction undefined in any case", Input{Path: "/acme/fetch/en-us/list/posts",
			RawQuery: "fields=Undefined&sort=NULL&direction=Undefined"}, list("posts")},
		{"list JS SDK query", Input{Path: "/acme/fetch/en-us/list/posts",
			RawQuery: "contentLinkDepth=2&fields=fields.title%2Cfields.Body&sort=fields.date&direction=desc&skip=20&take=50&expandAllContentLinks=true&"},
			with(list("posts"), func(r *Request) {
				r.Depth, r.Fields, r.Sort, r.Direction, r.Skip, r.Take, r.ExpandAll =
					2, []string{"body", "title"}, "fields.date", "desc", 20, 50, true
			})},
		{"list sort mixed case", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "Sort=Properties.Modified&Direction=DESC"},
			with(list("posts"), func(r *Request) { r.Sort, r.Direction = "properties.modified", "desc" })},
		{"list direction without sort", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "direction=desc"},
			list("posts")},
		{"list fields deduplicated", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "fields=title,,Title, body"},
			with(list("posts"), func(r *Request) { r.Fields = []string{"body", "title"} })},
		{"list empty filter", Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter="}, list("posts")},

		{"page", Input{Path: "/acme/fetch/en-us/page/7"}, page(7)},
		{"page depth", Input{Path: "/acme/fetch/en-us/page/7", RawQuery: "contentLinkDepth=3&expandAllContentLinks=true"},
			with(page(7), func(r *Request) { r.Depth, r.ExpandAll = 3, true })},
		{"page by path", Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/blog/My-Post&contentLinkDepth=2&expandAllContentLinks=true"},
			with(pageByPath("website", "/blog/my-post"), func(r *Request) { r.ExpandAll = true })},
		{"page by path channel case", Input{Path: "/acme/fetch/en-us/PAGE/WebSite", RawQuery: "Path=/blog"}, pageByPath("website", "/blog")},
		{"page by path root", Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/"}, pageByPath("website", "/")},
		{"page by path normalised", Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=blog//post/"}, pageByPath("website", "/blog/post")},
		{"page by path encoded", Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=%2FBlog%2Fpost"}, pageByPath("website", "/blog/post")},
		{"page by path unicode", Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/caf%C3%89"}, pageByPath("website", "/café")},
		{"page channel with digits", Input{Path: "/acme/fetch/en-us/page/site2", RawQuery: "path=/a"}, pageByPath("site2", "/a")},

		{"sitemap flat", Input{Path: "/acme/fetch/en-us/sitemap/flat/website"},
			Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: SitemapFlat, Channel: "website"}},
		{"sitemap nested upper", Input{Path: "/acme/fetch/en-us/SITEMAP/NESTED/WebSite"},
			Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: SitemapNested, Channel: "website"}},
		{"sitemap ignores query", Input{Path: "/acme/fetch/en-us/sitemap/flat/website", RawQuery: "contentLinkDepth=9"},
			Request{Guid: "acme", APIType: Fetch, Locale: "en-us", Kind: SitemapFlat, Channel: "website"}},

		{"sync items", Input{Path: "/acme/fetch/en-us/sync/items", RawQuery: "pageSize=500&syncToken=0"}, sync(SyncItems)},
		{"sync items defaults", Input{Path: "/acme/fetch/en-us/sync/items"}, sync(SyncItems)},
		{"sync items undefined page size", Input{Path: "/acme/fetch/en-us/sync/items", RawQuery: "pageSize=undefined&syncToken=1234"},
			with(sync(SyncItems), func(r *Request) { r.SyncToken = 1234 })},
		{"sync pages Pascal case", Input{Path: "/acme/fetch/en-us/Sync/Pages", RawQuery: "SyncToken=99&PageSize=1"},
			with(sync(SyncPages), func(r *Request) { r.SyncToken, r.PageSize = 99, 1 })},

		{"gallery", Input{Path: "/acme/fetch/gallery/12"}, Request{Guid: "acme", APIType: Fetch, Kind: Gallery, GalleryID: 12}},
		{"gallery header form", Input{Path: "/fetch/Gallery/12", GuidHeader: "acme"}, Request{Guid: "acme", APIType: Fetch, Kind: Gallery, GalleryID: 12}},
		{"urlredirection", Input{Path: "/acme/fetch/urlredirection"}, Request{Guid: "acme", APIType: Fetch, Kind: URLRedirection}},
		{"urlredirection trailing slash", Input{Path: "/acme/fetch/urlredirection/"}, Request{Guid: "acme", APIType: Fetch, Kind: URLRedirection}},
		{"urlredirection last access", Input{Path: "/acme/fetch/urlredirection/", RawQuery: "lastAccessDate=2024-05-01T10:00:00.000Z"},
			Request{Guid: "acme", APIType: Fetch, Kind: URLRedirection, LastAccessDate: "2024-05-01T10:00:00Z"}},
		{"urlredirection last access offset as space", Input{Path: "/acme/fetch/urlredirection", RawQuery: "LastAccessDate=2024-05-01T12:00:00.5+02:00"},
			Request{Guid: "acme", APIType: Fetch, Kind: URLRedirection, LastAccessDate: "2024-05-01T10:00:00.5Z"}},
		{"urlredirection last access undefined", Input{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=undefined"},
			Request{Guid: "acme", APIType: Fetch, Kind: URLRedirection}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%+v) error: %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%+v)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseFilterParameter(t *testing.T) {
	tests := []struct {
		query string
		want  string // Filter.String()
	}{
		{`filter=fields.title[eq]"Hello"`, `fields.title[eq]hello`},
		{`filter=fields.title%5Beq%5D%22How%20this%20site%20works%22%20AND%20fields.details%5Blike%5D%22Lorem%22`,
			`fields.details[like]lorem and fields.title[eq]"how this site works"`},
		{`Filter=contentID[gt]5+or+contentID[lt]2&filter=ignored[eq]1`, `contentid[gt]5 or contentid[lt]2`},
		{`FILTER=(a[eq]1 OR b[eq]2) AND c[eq]3`, `(a[eq]1 or b[eq]2) and c[eq]3`},
	}
	for _, tt := range tests {
		got, err := Parse(Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: tt.query})
		if err != nil {
			t.Errorf("Parse(%q) error: %v", tt.query, err)
			continue
		}
		if got.Filter.String() != tt.want {
			t.Errorf("Parse(%q).Filter = %q, want %q", tt.query, got.Filter.String(), tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	const list = "/acme/fetch/en-us/list/posts"
	tests := []struct {
		name  string
		in    Input
		kind  problem.Kind
		field string // the parameter the error names, for Invalid
		also  string // a part of the detail
	}{
		{"take 0", Input{Path: list, RawQuery: "take=0"}, problem.Invalid, "take", "between 1 and 250"},
		{"take 251", Input{Path: list, RawQuery: "take=251"}, problem.Invalid, "take", "got 251"},
		{"take not integer", Input{Path: list, RawQuery: "take=1.5"}, problem.Invalid, "take", "not an integer"},
		{"take digits and letters", Input{Path: list, RawQuery: "take=12abc"}, problem.Invalid, "take", "not an integer"},
		{"take huge", Input{Path: list, RawQuery: "take=99999999999999999999"}, problem.Invalid, "take", "out of range"},
		{"skip -1", Input{Path: list, RawQuery: "skip=-1"}, problem.Invalid, "skip", "at least 0"},
		{"depth 6", Input{Path: list, RawQuery: "contentLinkDepth=6"}, problem.Invalid, "contentLinkDepth", "between 0 and 5"},
		{"depth -1", Input{Path: "/acme/fetch/en-us/item/1", RawQuery: "ContentLinkDepth=-1"}, problem.Invalid, "contentLinkDepth", "got -1"},
		{"page depth 6", Input{Path: "/acme/fetch/en-us/page/1", RawQuery: "contentLinkDepth=6"}, problem.Invalid, "contentLinkDepth", ""},
		{"expand yes", Input{Path: "/acme/fetch/en-us/item/1", RawQuery: "expandAllContentLinks=yes"}, problem.Invalid, "expandAllContentLinks", ""},
		{"direction", Input{Path: list, RawQuery: "sort=fields.title&direction=up"}, problem.Invalid, "direction", "asc or desc"},
		{"sort not a path", Input{Path: list, RawQuery: "sort=fields..title"}, problem.Invalid, "sort", ""},
		{"sort with space", Input{Path: list, RawQuery: "sort=fields.date%20desc"}, problem.Invalid, "sort", ""},
		{"fields not paths", Input{Path: list, RawQuery: "fields=title,a b"}, problem.Invalid, "fields", ""},
		{"filter unknown operator", Input{Path: list, RawQuery: "filter=fields.title[eqq]1"}, problem.Invalid, "filter", "offset 13"},
		{"filter unbalanced", Input{Path: list, RawQuery: "filter=(a[eq]1"}, problem.Invalid, "filter", "offset 7"},
		{"filter bad encoding", Input{Path: list, RawQuery: "filter=a[eq]%zz"}, problem.Invalid, "filter", "percent-encoded"},
		{"sync token -1", Input{Path: "/acme/fetch/en-us/sync/items", RawQuery: "syncToken=-1"}, problem.Invalid, "syncToken", ""},
		{"page size 0", Input{Path: "/acme/fetch/en-us/sync/items", RawQuery: "pageSize=0"}, problem.Invalid, "pageSize", "between 1 and 500"},
		{"page size 501", Input{Path: "/acme/fetch/en-us/sync/pages", RawQuery: "pageSize=501"}, problem.Invalid, "pageSize", ""},
		{"last access date", Input{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=yesterday"}, problem.Invalid, "lastAccessDate", ""},
		{"page by path without path", Input{Path: "/acme/fetch/en-us/page/website"}, problem.Invalid, "path", "required"},
		{"page by path empty path", Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path="}, problem.Invalid, "path", "required"},

		{"item not integer", Input{Path: "/acme/fetch/en-us/item/abc"}, problem.Invalid, "contentID", "positive integer"},
		{"item 0", Input{Path: "/acme/fetch/en-us/item/0"}, problem.Invalid, "contentID", ""},
		{"item negative", Input{Path: "/acme/fetch/en-us/item/-1"}, problem.Invalid, "contentID", ""},
		{"item decimal", Input{Path: "/acme/fetch/en-us/item/1.5"}, problem.Invalid, "contentID", ""},
		{"item overflow", Input{Path: "/acme/fetch/en-us/item/99999999999999999999"}, problem.Invalid, "contentID", ""},
		{"page negative", Input{Path: "/acme/fetch/en-us/page/-5"}, problem.Invalid, "pageID", ""},
		{"page 0", Input{Path: "/acme/fetch/en-us/page/0"}, problem.Invalid, "pageID", ""},
		{"gallery not integer", Input{Path: "/acme/fetch/gallery/x"}, problem.Invalid, "galleryID", ""},
		{"unknown apitype", Input{Path: "/acme/live/en-us/item/1"}, problem.Invalid, "apitype", `"live"`},
		{"unknown apitype after v1", Input{Path: "/v1/acme/live/en-us/item/1"}, problem.Invalid, "apitype", `"live"`},
		{"unknown request word", Input{Path: "/acme/fetch/en-us/widget/1"}, problem.Invalid, "requestType", `"widget"`},
		{"unknown sitemap", Input{Path: "/acme/fetch/en-us/sitemap/tree/website"}, problem.Invalid, "requestType", ""},
		{"unknown sync", Input{Path: "/acme/fetch/en-us/sync/things"}, problem.Invalid, "requestType", ""},
		{"bad guid", Input{Path: "/ac!me/fetch/en-us/item/1"}, problem.Invalid, "guid", ""},
		{"guid too long", Input{Path: "/" + strings.Repeat("a", 65) + "/fetch/en-us/item/1"}, problem.Invalid, "guid", ""},
		{"no guid", Input{Path: "/fetch/en-us/item/1"}, problem.Invalid, "guid", "missing"},
		{"no guid, host not api", Input{Host: "acme.example.com", Path: "/fetch/en-us/item/1"}, problem.Invalid, "guid", "missing"},
		{"bad guid header", Input{Path: "/fetch/en-us/item/1", GuidHeader: "ac me"}, problem.Invalid, "guid", "header"},
		{"bad locale", Input{Path: "/acme/fetch/en!us/item/1"}, problem.Invalid, "locale", ""},
		{"locale too long", Input{Path: "/acme/fetch/" + strings.Repeat("x", 101) + "/item/1"}, problem.Invalid, "locale", ""},
		{"bad reference name", Input{Path: "/acme/fetch/en-us/list/po$ts"}, problem.Invalid, "referenceName", ""},
		{"bad channel", Input{Path: "/acme/fetch/en-us/sitemap/flat/web%20site"}, problem.Invalid, "channel", ""},
		{"several errors", Input{Path: list, RawQuery: "take=0&skip=-1"}, problem.Invalid, "take", "and 1 more"},

		{"empty path", Input{Path: ""}, problem.NotFound, "", ""},
		{"root", Input{Path: "/"}, problem.NotFound, "", ""},
		{"favicon", Input{Path: "/favicon.ico"}, problem.NotFound, "", ""},
		{"guid only", Input{Path: "/acme"}, problem.NotFound, "", ""},
		{"no locale", Input{Path: "/acme/fetch"}, problem.NotFound, "", ""},
		{"locale only", Input{Path: "/acme/fetch/en-us"}, problem.NotFound, "", ""},
		{"item without id", Input{Path: "/acme/fetch/en-us/item"}, problem.NotFound, "", ""},
		{"item extra segment", Input{Path: "/acme/fetch/en-us/item/1/2"}, problem.NotFound, "", ""},
		{"list without name", Input{Path: "/acme/fetch/en-us/list/"}, problem.NotFound, "", ""},
		{"sitemap without channel", Input{Path: "/acme/fetch/en-us/sitemap/flat"}, problem.NotFound, "", ""},
		{"sync without what", Input{Path: "/acme/fetch/en-us/sync"}, problem.NotFound, "", ""},
		{"empty segment", Input{Path: "/acme//fetch/en-us/item/1"}, problem.NotFound, "", ""},
		{"two trailing slashes", Input{Path: "/acme/fetch/en-us/item/1//"}, problem.NotFound, "", ""},
		{"gallery without id", Input{Path: "/acme/fetch/gallery"}, problem.NotFound, "", ""},
		{"urlredirection extra", Input{Path: "/acme/fetch/urlredirection/x"}, problem.NotFound, "", ""},
		{"too many segments", Input{Path: "/a/b/c/d/e/f/g/h/i/j"}, problem.NotFound, "", ""},
		{"apitype in third place without v1", Input{Path: "/x/acme/fetch/en-us/item/1"}, problem.NotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%+v) = %+v, want an error", tt.in, got)
			}
			checkProblem(t, err, tt.kind, tt.field, tt.also)
		})
	}
}

// TestParseTraversal shows that nothing that could leave the instance's key
// prefix gets through: each is a 400 naming the offending part.
func TestParseTraversal(t *testing.T) {
	tests := []struct {
		in    Input
		field string
	}{
		{Input{Path: "/acme/fetch/en-us/list/.."}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/."}, "path"},
		{Input{Path: "/acme/fetch/../list/posts"}, "path"},
		{Input{Path: "/acme/fetch/%2e%2e/list/posts"}, "path"},
		{Input{Path: "/acme/fetch/%2E%2E/list/posts"}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/%2e%2e%2f%2e%2e%2fother"}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/a%2Fb"}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/a%2fb"}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/a%5Cb"}, "path"},
		{Input{Path: `/acme/fetch/en-us/list/a\b`}, "path"},
		{Input{Path: `/acme/fetch/en-us/list/..\..\x`}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/a%00b"}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/a%zz"}, "path"},
		{Input{Path: "/acme/fetch/en-us/sitemap/flat/%2e%2e"}, "path"},
		{Input{Path: "/%2e%2e/fetch/en-us/item/1"}, "path"},
		{Input{Path: "/acme/fetch/en-us/list/.hidden"}, "referenceName"},
		{Input{Path: "/acme/fetch/en-us/list/a..b"}, "referenceName"},
		{Input{Path: "/acme/fetch/.en-us/list/posts"}, "locale"},
		{Input{Path: "/acme/fetch/en-us/sitemap/flat/%2e.x"}, "channel"},
		{Input{Path: "/acme/fetch/en-us/item/1", GuidHeader: "../x"}, ""}, // path guid wins; fine
		{Input{Path: "/fetch/en-us/item/1", GuidHeader: "../x"}, "guid"},
		{Input{Path: "/fetch/en-us/item/1", Host: "..-api.example.com"}, "guid"},
		{Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/a/../b"}, "path"},
		{Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/a/%2e%2e/b"}, "path"},
		{Input{Path: "/acme/fetch/en-us/page/website", RawQuery: `path=/a\b`}, "path"},
		{Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/a%00"}, "path"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.field == "" {
			if err != nil || got.Guid != "acme" {
				t.Errorf("Parse(%+v) = %+v, %v; want guid acme", tt.in, got, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Parse(%+v) = %+v, want an error", tt.in, got)
			continue
		}
		checkProblem(t, err, problem.Invalid, tt.field, "")
	}
}

func checkProblem(t *testing.T, err error, kind problem.Kind, field, also string) {
	t.Helper()
	var pe *problem.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *problem.Error", err)
	}
	if pe.Kind != kind {
		t.Errorf("error %q has kind %v, want %v", err, pe.Kind.Title(), kind.Title())
	}
	if field != "" && (len(pe.Fields) == 0 || pe.Fields[0].Field != field) {
		t.Errorf("error %q names fields %+v, want %s", err, pe.Fields, field)
	}
	if field != "" && !strings.HasPrefix(pe.Detail, field+": ") {
		t.Errorf("error detail %q does not start with %q", pe.Detail, field+": ")
	}
	if also != "" && !strings.Contains(pe.Detail, also) {
		t.Errorf("error detail %q does not contain %q", pe.Detail, also)
	}
}

func TestKindString(t *testing.T) {
	tests := []struct {
		k    Kind
		want string
	}{
		{Item, "item"}, {PageByPath, "page-by-path"}, {SitemapNested, "sitemap-nested"},
		{SyncPages, "sync-pages"}, {URLRedirection, "urlredirection"}, {0, "kind(0)"}, {99, "kind(99)"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("Kind(%d).String() = %q, want %q", tt.k, got, tt.want)
		}
	}
}

var benchInputs = []Input{
	{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=1&expandAllContentLinks=false"},
	{Path: "/fetch/en-us/list/posts", GuidHeader: "acme",
		RawQuery: "contentLinkDepth=1&fields=fields.title%2Cfields.body&sort=properties.modified&direction=desc&skip=20&take=50&"},
	{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/blog/my-post&contentLinkDepth=2&expandAllContentLinks=true"},
	{Path: "/acme/fetch/en-us/sync/items", RawQuery: "pageSize=undefined&syncToken=0"},
}

func BenchmarkParse(b *testing.B) {
	for _, in := range benchInputs {
		r, _ := Parse(in)
		b.Run(r.Kind.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	in := Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: `take=20&filter=fields.category[eq]"news"%20AND%20properties.modified[gt]2024-01-01`}
	b.Run("list-filter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
