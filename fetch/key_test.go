package fetch

import (
	"reflect"
	"strings"
	"testing"
)

func mustParse(t testing.TB, in Input) Request {
	t.Helper()
	r, err := Parse(in)
	if err != nil {
		t.Fatalf("Parse(%+v): %v", in, err)
	}
	return r
}

// keySafeString reports whether a key uses only the documented charset.
func keySafeString(k string) bool {
	for i := 0; i < len(k); i++ {
		if !keySafe(k[i]) && strings.IndexByte(",=@~+/", k[i]) < 0 {
			return false
		}
	}
	return true
}

func TestKey(t *testing.T) {
	tests := []struct {
		in   Input
		want string
	}{
		{Input{Path: "/acme/fetch/en-us/item/42"}, "acme/fetch/en-us/item/42/d1.json"},
		{Input{Path: "/acme/preview/EN-US/item/42", RawQuery: "contentLinkDepth=3&expandAllContentLinks=true"}, "acme/preview/en-us/item/42/d3,all.json"},
		{Input{Path: "/acme/fetch/en-us/list/posts"}, "acme/fetch/en-us/list/posts/d1,take10,skip0.json"},
		{Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "take=5&skip=10&sort=Fields.Title&direction=desc&fields=fields.title,fields.body&expandAllContentLinks=1&contentLinkDepth=2"},
			"acme/fetch/en-us/list/posts/d2,all,take5,skip10,sort=fields.title,desc,fields=body+title.json"},
		{Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "sort=properties.modified"},
			"acme/fetch/en-us/list/posts/d1,take10,skip0,sort=properties.modified,asc.json"},
		{Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: `filter=fields.title[eq]"Hi there"`},
			"acme/fetch/en-us/list/posts/d1,take10,skip0,filter=fields.title~5beq~5d~22hi~20there~22.json"},
		{Input{Path: "/acme/fetch/en-us/page/7"}, "acme/fetch/en-us/page/7/d2.json"},
		{Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/Blog/Post&expandAllContentLinks=true"},
			"acme/fetch/en-us/pagepath/website/~2fblog~2fpost/d2,all.json"},
		{Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/"}, "acme/fetch/en-us/pagepath/website/~2f/d2.json"},
		{Input{Path: "/acme/fetch/en-us/sitemap/flat/website"}, "acme/fetch/en-us/sitemap/flat/website.json"},
		{Input{Path: "/acme/fetch/en-us/sitemap/nested/website"}, "acme/fetch/en-us/sitemap/nested/website.json"},
		{Input{Path: "/acme/fetch/en-us/sync/items"}, "acme/fetch/en-us/sync/items/token0,size500.json"},
		{Input{Path: "/acme/fetch/en-us/sync/pages", RawQuery: "syncToken=77&pageSize=20"}, "acme/fetch/en-us/sync/pages/token77,size20.json"},
		{Input{Path: "/acme/fetch/gallery/12"}, "acme/fetch/gallery/12.json"},
		{Input{Path: "/acme/fetch/urlredirection"}, "acme/fetch/urlredirection.json"},
		{Input{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=2024-05-01T10:00:00.250Z"}, "acme/fetch/urlredirection/since20240501t100000.25z.json"},
	}
	for _, tt := range tests {
		r := mustParse(t, tt.in)
		if got := r.Key(); got != tt.want {
			t.Errorf("Parse(%+v).Key() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestKeySameRequest shows that every spelling of one request has one key.
func TestKeySameRequest(t *testing.T) {
	groups := []struct {
		key string
		ins []Input
	}{
		{"acme/fetch/en-us/item/42/d1.json", []Input{
			{Path: "/acme/fetch/en-us/item/42"},
			{Path: "/ACME/Fetch/EN-US/Item/042/"},
			{Path: "/v1/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=1"},
			{Path: "/fetch/en-us/item/42", GuidHeader: "Acme"},
			{Path: "/v1/fetch/en-us/item/42", GuidHeader: "acme"},
			{Path: "/fetch/en-us/item/42", Host: "acme-api.example.com"},
			{Path: "/acme/fetch/en-us/item/42", Host: "acme-api.example.com"},
			{Path: "/acme/fetch/en-us/item/42", RawQuery: "ContentLinkDepth=undefined&take=5&foo=bar"},
			{Path: "/acme/fetch/en-us/item/42", RawQuery: "expandAllContentLinks=false&"},
			{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=1&contentLinkDepth=3"},
			{Path: "/acme/fetch/en-us/%69tem/42"},
		}},
		{"acme/fetch/en-us/list/posts/d1,take10,skip0.json", []Input{
			{Path: "/acme/fetch/en-us/list/posts"},
			{Path: "/acme/fetch/en-us/list/Posts/", RawQuery: "take=10&skip=0"},
			{Path: "/acme/fetch/en-us/LIST/POSTS", RawQuery: "TAKE=10&Skip=0&"},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: "direction=desc"},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: "sort=&direction=asc&filter=&fields="},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: "take=undefined&skip=undefined&contentLinkDepth=undefined"},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: "pageSize=3&syncToken=4&path=/x"},
		}},
		{"", []Input{ // a filter in different spellings
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: `filter=fields.title[eq]"Hello" AND contentID[gt]5`},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: `Filter=contentid[GT]5%20and%20FIELDS.TITLE[EQ]hello`},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: `filter=(contentid[gt]"5")+AND+(fields.title[eq]"HELLO")`},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: `filter=contentid[gt]5 and fields.title[eq]hello and contentid[gt]5`},
		}},
		{"", []Input{ // a sort and fields in different spellings
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: "sort=Fields.Title&direction=DESC&fields=fields.title,fields.body"},
			{Path: "/acme/fetch/en-us/list/posts", RawQuery: "fields=fields.body,FIELDS.TITLE,fields.body&sort=fields.title&direction=desc"},
		}},
		{"acme/fetch/en-us/pagepath/website/~2fblog~2fpost/d2.json", []Input{
			{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/blog/post"},
			{Path: "/acme/fetch/en-us/page/WebSite", RawQuery: "path=/Blog/Post/"},
			{Path: "/acme/fetch/en-us/page/website", RawQuery: "PATH=blog//post&contentLinkDepth=2&expandAllContentLinks=false"},
			{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=%2Fblog%2Fpost"},
		}},
		{"acme/fetch/en-us/sync/items/token0,size500.json", []Input{
			{Path: "/acme/fetch/en-us/sync/items"},
			{Path: "/acme/fetch/en-us/sync/items", RawQuery: "syncToken=0&pageSize=500"},
			{Path: "/acme/fetch/en-us/Sync/Items", RawQuery: "SyncToken=undefined&PageSize=undefined"},
		}},
		{"acme/fetch/urlredirection.json", []Input{
			{Path: "/acme/fetch/urlredirection"},
			{Path: "/acme/fetch/urlredirection/"},
			{Path: "/fetch/urlredirection/", GuidHeader: "acme"},
			{Path: "/acme/fetch/UrlRedirection", RawQuery: "lastAccessDate="},
		}},
		{"acme/fetch/urlredirection/since20240501t100000z.json", []Input{
			{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=2024-05-01T10:00:00.000Z"},
			{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=2024-05-01T12:00:00%2B02:00"},
			{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=2024-05-01T10:00:00"},
		}},
	}
	for _, g := range groups {
		want := g.key
		for _, in := range g.ins {
			got := mustParse(t, in).Key()
			if want == "" {
				want = got
			}
			if got != want {
				t.Errorf("Parse(%+v).Key() = %q, want %q", in, got, want)
			}
		}
	}
}

// TestKeyDifferentRequests shows that different requests have different keys.
func TestKeyDifferentRequests(t *testing.T) {
	ins := []Input{
		{Path: "/acme/fetch/en-us/item/42"},
		{Path: "/acme/fetch/en-us/item/43"},
		{Path: "/acme/fetch/en-us/item/42", RawQuery: "contentLinkDepth=2"},
		{Path: "/acme/fetch/en-us/item/42", RawQuery: "expandAllContentLinks=true"},
		{Path: "/acme/preview/en-us/item/42"},
		{Path: "/acme/fetch/fr-ca/item/42"},
		{Path: "/acme2/fetch/en-us/item/42"},
		{Path: "/acme/fetch/en-us/page/42"},
		{Path: "/acme/fetch/gallery/42"},
		{Path: "/acme/fetch/en-us/list/posts"},
		{Path: "/acme/fetch/en-us/list/posts2"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "take=11"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "skip=1"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "sort=fields.title"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "sort=fields.title&direction=desc"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "sort=fields.name"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[eq]a"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[eq]b"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[ne]a"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[eq]a or fields.x[eq]1"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[eq]a and fields.x[eq]1"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[eq]" + strings.Repeat("x", 200)},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[eq]" + strings.Repeat("x", 201)},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "fields=fields.title"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "fields=fields.title,fields.body"},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "contentLinkDepth=0"},
		{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/a"},
		{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/a/b"},
		{Path: "/acme/fetch/en-us/page/other", RawQuery: "path=/a"},
		{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/"},
		{Path: "/acme/fetch/en-us/sitemap/flat/website"},
		{Path: "/acme/fetch/en-us/sitemap/nested/website"},
		{Path: "/acme/fetch/en-us/sitemap/flat/other"},
		{Path: "/acme/fetch/en-us/sync/items"},
		{Path: "/acme/fetch/en-us/sync/pages"},
		{Path: "/acme/fetch/en-us/sync/items", RawQuery: "syncToken=1"},
		{Path: "/acme/fetch/en-us/sync/items", RawQuery: "pageSize=499"},
		{Path: "/acme/fetch/urlredirection"},
		{Path: "/acme/preview/urlredirection"},
		{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=2024-05-01T10:00:00Z"},
		{Path: "/acme/fetch/urlredirection", RawQuery: "lastAccessDate=2024-05-01T10:00:00.001Z"},
	}
	seen := map[string]Input{}
	for _, in := range ins {
		k := mustParse(t, in).Key()
		if prev, dup := seen[k]; dup {
			t.Errorf("Key %q for both %+v and %+v", k, prev, in)
		}
		seen[k] = in
		if !keySafeString(k) || !strings.HasPrefix(k, "acme") {
			t.Errorf("Key %q has a character outside the key charset", k)
		}
	}
}

func TestKeyLongValuesHashed(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []Input{
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "filter=fields.title[eq]" + long},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "sort=fields." + long[:190]},
		{Path: "/acme/fetch/en-us/list/posts", RawQuery: "fields=fields.alpha,fields.bravo,fields.charlie,fields.delta,fields.echo,fields.foxtrot,fields.golf,fields.hotel,fields.india,fields.juliet,fields.kilo,fields.lima,fields.mike,fields.november,fields.oscar,fields.papa,fields.quebec"},
		{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/" + long},
	}
	for _, in := range tests {
		k := mustParse(t, in).Key()
		if !strings.Contains(k, "@") || len(k) > 200 || !keySafeString(k) {
			t.Errorf("Parse(%+v).Key() = %q, want a short key with a hash", in, k)
		}
	}
}

// TestKeyHandBuilt shows that Key stays within its charset and prefix even
// for requests that did not come from Parse.
func TestKeyHandBuilt(t *testing.T) {
	tests := []struct {
		r    Request
		want string
	}{
		{Request{Guid: "acme", APIType: Fetch, Locale: "..", Kind: List, ReferenceName: "a/b", Take: 10}, "acme/fetch/~2e./list/a~2fb/d0,take10,skip0.json"},
		{Request{Guid: "acme", APIType: Fetch, Kind: Item, ContentID: 1}, "acme/fetch/~/item/1/d0.json"},
		{Request{Guid: "acme", APIType: Fetch, Kind: URLRedirection, LastAccessDate: "Yesterday"}, "acme/fetch/urlredirection/since=~59esterday.json"},
		{Request{Guid: "acme", APIType: Fetch, Locale: "en-us"}, "acme/fetch/en-us/unknown.json"},
	}
	for _, tt := range tests {
		if got := tt.r.Key(); got != tt.want {
			t.Errorf("%+v.Key() = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestURLPathAndQuery(t *testing.T) {
	tests := []struct {
		in        Input
		wantPath  string
		wantQuery string
	}{
		{Input{Path: "/fetch/EN-US/item/42", GuidHeader: "ACME"}, "/acme/fetch/EN-US/item/42", "contentLinkDepth=1&expandAllContentLinks=false"},
		{Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: `filter=Fields.Title[eq]"A B"&sort=fields.title&fields=b,a&Take=5`},
			"/acme/fetch/en-us/list/posts",
			"contentLinkDepth=1&expandAllContentLinks=false&take=5&skip=0&sort=fields.title&direction=asc&filter=fields.title%5Beq%5D%22a+b%22&fields=a%2Cb"},
		{Input{Path: "/acme/fetch/en-us/list/posts", RawQuery: "direction=desc"}, "/acme/fetch/en-us/list/posts",
			"contentLinkDepth=1&expandAllContentLinks=false&take=10&skip=0"},
		{Input{Path: "/acme/fetch/en-us/page/website", RawQuery: "path=/Blog"}, "/acme/fetch/en-us/page/website", "path=%2Fblog&contentLinkDepth=2&expandAllContentLinks=false"},
		{Input{Path: "/acme/fetch/en-us/sitemap/nested/website"}, "/acme/fetch/en-us/sitemap/nested/website", ""},
		{Input{Path: "/acme/fetch/en-us/sync/pages"}, "/acme/fetch/en-us/sync/pages", "syncToken=0&pageSize=500"},
		{Input{Path: "/acme/preview/gallery/3"}, "/acme/preview/gallery/3", ""},
		{Input{Path: "/acme/fetch/urlredirection/", RawQuery: "lastAccessDate=2024-05-01T10:00:00.000Z"}, "/acme/fetch/urlredirection", "lastAccessDate=2024-05-01T10%3A00%3A00Z"},
	}
	for _, tt := range tests {
		r := mustParse(t, tt.in)
		if got := r.URLPath(); got != tt.wantPath {
			t.Errorf("URLPath of %+v = %q, want %q", tt.in, got, tt.wantPath)
		}
		if got := r.Query(); got != tt.wantQuery {
			t.Errorf("Query of %+v = %q, want %q", tt.in, got, tt.wantQuery)
		}
		back := mustParse(t, Input{Path: r.URLPath(), RawQuery: r.Query()})
		if !sameRequest(back, r) {
			t.Errorf("Parse(URLPath, Query) = %+v, want %+v", back, r)
		}
	}
}

// sameRequest compares requests, filters by their canonical text.
func sameRequest(a, b Request) bool {
	if a.Filter.String() != b.Filter.String() {
		return false
	}
	a.Filter, b.Filter = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestCacheable(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/acme/fetch/en-us/item/1", true},
		{"/acme/FETCH/en-us/list/posts", true},
		{"/acme/preview/en-us/item/1", false},
		{"/acme/Preview/gallery/1", false},
		{"/acme/fetch/gallery/1", true},
		{"/acme/fetch/urlredirection", true},
		{"/acme/fetch/en-us/sync/items", false},
		{"/acme/fetch/en-us/SYNC/Pages", false},
	}
	for _, tt := range tests {
		if got := mustParse(t, Input{Path: tt.path}).Cacheable(); got != tt.want {
			t.Errorf("Cacheable of %s = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func BenchmarkKey(b *testing.B) {
	for _, in := range benchInputs {
		r := mustParse(b, in)
		b.Run(r.Kind.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Key()
			}
		})
	}
}

// TestKeySharedBySpellings: spellings of one list or item request that
// differ in what the renderer cannot tell apart have one key, so that
// readers cannot make the store hold one answer many times.
func TestKeySharedBySpellings(t *testing.T) {
	t.Parallel()
	const list = "/acme/fetch/en-us/list/posts"
	tests := []struct {
		path, a, b string
	}{
		{list, "fields=title,body", "fields=fields.Body,fields.title"},
		{list, "fields=title,fields.title", "fields=title"},
		{list, "fields=fields.author.name", "fields=fields.a.b,x.y"},
		{list, "sort=title&direction=desc", "sort=fields.title&direction=DESC"},
		{list, "filter=fields.rank[in]5", "filter=fields.rank[eq]5"},
		{list, "filter=fields.rank[range]5,5", "filter=fields.rank[eq]5"},
		{list, `filter=fields.title[eq]"a" AND fields.rank[in]1,1`, `filter=(fields.rank[eq]1)  and  fields.title[eq]a`},
		{list, "contentLinkDepth=0&expandAllContentLinks=true", "contentLinkDepth=0"},
		{"/acme/fetch/en-us/item/7", "contentLinkDepth=0&expandAllContentLinks=true", "contentLinkDepth=0"},
		{"/acme/fetch/en-us/page/3", "contentLinkDepth=1&expandAllContentLinks=true", "contentLinkDepth=1"},
		{"/acme/fetch/en-us/page/website", "path=/a&contentLinkDepth=0&expandAllContentLinks=true", "path=/a&contentLinkDepth=0"},
	}
	for _, tt := range tests {
		a := mustParse(t, Input{Path: tt.path, RawQuery: tt.a})
		b := mustParse(t, Input{Path: tt.path, RawQuery: tt.b})
		if a.Key() != b.Key() {
			t.Errorf("%s?%s has key %s, and ?%s %s: want one key", tt.path, tt.a, a.Key(), tt.b, b.Key())
		}
		back := mustParse(t, Input{Path: a.URLPath(), RawQuery: a.Query()})
		if back.Key() != a.Key() {
			t.Errorf("%s?%s: canonical URL %s?%s has key %s, want %s", tt.path, tt.a, a.URLPath(), a.Query(), back.Key(), a.Key())
		}
	}
	// Different answers keep different keys.
	for _, q := range [][2]string{
		{"fields=title", "fields=fields.author.name"},
		{"fields=title", ""},
		{"sort=contentID", "sort=fields.contentid"},
		{"filter=fields.rank[range]1,2", "filter=fields.rank[eq]1"},
		{"contentLinkDepth=1&expandAllContentLinks=true", "contentLinkDepth=1"},
	} {
		a := mustParse(t, Input{Path: list, RawQuery: q[0]})
		b := mustParse(t, Input{Path: list, RawQuery: q[1]})
		if a.Key() == b.Key() {
			t.Errorf("?%s and ?%s share key %s", q[0], q[1], a.Key())
		}
	}
}
