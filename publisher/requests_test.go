package publisher

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/edgecms/edgecms/fetch"
)

func TestRequestKeys(t *testing.T) {
	t.Parallel()
	pp := func(path string) fetch.Request {
		r, err := pagePathRequest("acme", "fr-CA", "website", path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name string
		req  fetch.Request
		want string
	}{
		{"item", itemRequest("acme", "en-us", 42), "acme/fetch/en-us/item/42/d1.json"},
		{"locale lower-cased", itemRequest("acme", "fr-CA", 7), "acme/fetch/fr-ca/item/7/d1.json"},
		{"page", pageRequest("acme", "en-us", 3, false), "acme/fetch/en-us/page/3/d2.json"},
		{"page for the SDK", pageRequest("acme", "en-us", 3, true), "acme/fetch/en-us/page/3/d2,all.json"},
		{"page path", pp("/home/blog"), "acme/fetch/fr-ca/pagepath/website/~2fhome~2fblog/d2,all.json"},
		{"page path with odd characters", pp("/home/café & co"), "acme/fetch/fr-ca/pagepath/website/~2fhome~2fcaf~c3~a9~20~26~20co/d2,all.json"},
		{"flat sitemap", sitemapRequest("acme", "en-us", "website", false), "acme/fetch/en-us/sitemap/flat/website.json"},
		{"nested sitemap", sitemapRequest("acme", "en-us", "website", true), "acme/fetch/en-us/sitemap/nested/website.json"},
		{"list", listRequest("acme", "en-us", "Posts", 20), "acme/fetch/en-us/list/posts/d1,take10,skip20.json"},
	}
	for _, tc := range tests {
		if got := tc.req.Key(); got != tc.want {
			t.Errorf("%s: Key() = %s, want %s", tc.name, got, tc.want)
		}
		back, err := parseRequestString(requestString(tc.req))
		if err != nil || back.Key() != tc.want {
			t.Errorf("%s: requestString %q reads back as %v, %v", tc.name, requestString(tc.req), back.Key(), err)
		}
	}
}

func TestListPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		total, max int
		want       []int // skips
	}{
		{0, 10, []int{0}},
		{1, 10, []int{0}},
		{10, 10, []int{0}},
		{11, 10, []int{0, 10}},
		{25, 10, []int{0, 10, 20}},
		{25, 2, []int{0, 10}},
		{0, 1, []int{0}},
		{100_000, 3, []int{0, 10, 20}},
	}
	for _, tc := range tests {
		var got []int
		for _, r := range listPages("acme", "en-us", "posts", tc.total, tc.max) {
			got = append(got, r.Skip)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("listPages(total %d, max %d) skips = %v, want %v", tc.total, tc.max, got, tc.want)
		}
	}
}

func TestWindow(t *testing.T) {
	t.Parallel()
	ids := []int64{1, 2, 3, 4, 5}
	tests := []struct {
		skip, take int
		want       []int64
	}{
		{0, 2, []int64{1, 2}},
		{3, 10, []int64{4, 5}},
		{5, 10, nil},
		{9, 1, nil},
	}
	for _, tc := range tests {
		if got := window(ids, tc.skip, tc.take); !slices.Equal(got, tc.want) {
			t.Errorf("window(skip %d, take %d) = %v, want %v", tc.skip, tc.take, got, tc.want)
		}
	}
}

func TestListOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		want  string
	}{
		{"", "posts"},
		{"take=5&skip=15&contentLinkDepth=3&expandAllContentLinks=true&fields=title", "posts"},
		{"sort=fields.title", ""},
		{"filter=fields.rank[gt]5", ""},
	}
	for _, tc := range tests {
		r := mustParse("/acme/fetch/en-us/list/Posts", tc.query)
		if got := listOf(r); got != tc.want {
			t.Errorf("listOf(?%s) = %q, want %q", tc.query, got, tc.want)
		}
	}
	if got := listOf(itemRequest("acme", "en-us", 1)); got != "" {
		t.Errorf("listOf(item) = %q", got)
	}
}

func TestSitemapPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body    string
		want    []string
		wantErr bool
	}{
		{`{}`, nil, false},
		{`{"/home":{"title":"Home","children":null},"/home/blog":{"a":[1,{"b":2}]}}`, []string{"/home", "/home/blog"}, false},
		{`{"/a\"b": {"x":"}]"} , "/c":null}`, []string{`/a"b`, "/c"}, false},
		{`[]`, nil, true},
		{`{"/a":`, nil, true},
		{`{"/a":{"x":1}`, nil, true},
		{`{"/a":"x`, nil, true},
		{`{"/a" 1}`, nil, true},
		{`{"/a":1 "/b":2}`, nil, true},
	}
	for _, tc := range tests {
		got, err := sitemapPaths([]byte(tc.body))
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("sitemapPaths(%s) = %v, %v; want %v, error %v", tc.body, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestSitemapNodes(t *testing.T) {
	paths, nodes, err := sitemapNodes([]byte(`{"/a":{"t":"x,}","v":{"m":true}}, "/b" : [1, 2] }`))
	want := map[string]string{"/a": `{"t":"x,}","v":{"m":true}}`, "/b": `[1, 2]`}
	if err != nil || !slices.Equal(paths, []string{"/a", "/b"}) || len(nodes) != 2 {
		t.Fatalf("sitemapNodes = %v, %v, %v", paths, nodes, err)
	}
	for p, w := range want {
		if string(nodes[p]) != w {
			t.Errorf("node %s = %s, want %s", p, nodes[p], w)
		}
	}
}

// TestScanSitemapStream reads the sitemaps of TestSitemapPaths from a
// reader that gives one byte at a time, and a large one through the
// scanner's buffer, and expects what a read of the whole body finds.
func TestScanSitemapStream(t *testing.T) {
	t.Parallel()
	var big bytes.Buffer
	big.WriteString("{")
	for i := range 5000 {
		if i > 0 {
			big.WriteString(" ,\n")
		}
		fmt.Fprintf(&big, `"/p-%d" : {"title":"T %d","n":%d,"children":null}`, i, i, i)
	}
	big.WriteString("}\n")
	bodies := []string{``, `  `, `{}`, ` { } `, `{"/a":1}`, `{"/a":12345}`, `{"/a":{"x":1}} x`,
		`{"/home":{"title":"Home","children":null},"/home/blog":{"a":[1,{"b":2}]}}`,
		`{"/a\"b": {"x":"}]"} , "/c":null}`, `[]`, `{"/a":`, `{"/a":{"x":1}`, `{"/a":"x`, `{"/a" 1}`,
		`{"/a":1 "/b":2}`, `{,"/a":1}`, `{"/a":1,}`, big.String()}
	for _, body := range bodies {
		wantPaths, wantNodes, wantErr := sitemapNodes([]byte(body))
		for _, r := range []io.Reader{iotest.OneByteReader(strings.NewReader(body)), strings.NewReader(body)} {
			var paths []string
			nodes := map[string]string{}
			err := scanSitemap(r, func(path string, node []byte) error {
				paths = append(paths, path)
				nodes[path] = string(node)
				return nil
			})
			// A stream's nodes before what is wrong are given, then the error.
			if (err != nil) != (wantErr != nil) || err == nil && !slices.Equal(paths, wantPaths) {
				t.Fatalf("scanSitemap(%.60s) = %d paths, %v; want %d, %v", body, len(paths), err, len(wantPaths), wantErr)
			}
			for p, n := range wantNodes {
				if nodes[p] != string(n) {
					t.Fatalf("scanSitemap(%.60s): node %s = %s, want %s", body, p, nodes[p], n)
				}
			}
		}
	}
	if _, _, err := sitemapNodes([]byte(`{"/a":1,}`)); err == nil {
		t.Error(`sitemapNodes({"/a":1,}) = nil error`)
	}
}

func TestQualify(t *testing.T) {
	t.Parallel()
	got := qualify("acme", "fr-CA", []string{"c:posts", "i:12", "p:3", "s:website"})
	want := []string{"acme.fr-ca.c:posts", "acme.fr-ca.i:12", "acme.fr-ca.p:3", "acme.fr-ca.s:website"}
	if !slices.Equal(got, want) {
		t.Errorf("qualify = %v, want %v", got, want)
	}
}

// BenchmarkSitemapNodes reads a flat sitemap of 100,000 nodes, as a batch
// does twice (the one in the store and the new one) when a sitemap of a
// dynamic page over 100,000 items changes.
func BenchmarkSitemapNodes(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i := range 100_000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `"/blog/post-%d":{"title":"Post %d","name":"post-%d","pageID":2,"menuText":"Post %d","visible":{"menu":true,"sitemap":true},"path":"/blog/post-%d","redirect":null,"isFolder":false,"contentID":%d}`,
			i, i, i, i, i, i+10)
	}
	buf.WriteByte('}')
	body := buf.Bytes()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, nodes, err := sitemapNodes(body); err != nil || len(nodes) != 100_000 {
			b.Fatal(len(nodes), err)
		}
	}
}
