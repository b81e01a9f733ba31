package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render/source"
)

func TestAppendString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"tab\tnl\ncr\r", `"tab\tnl\ncr\r"`},
		{"\x00\x1f", `"\u0000\u001f"`},
		{"<p>&amp;</p>", `"<p>&amp;</p>"`},
		{"é→😀", `"é→😀"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{"line\u2028para\u2029", `"line\u2028para\u2029"`},
	}
	for _, tt := range tests {
		got := string(appendString(nil, tt.in))
		if got != tt.want {
			t.Errorf("appendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("appendString(%q) = %s, not a JSON string: %v", tt.in, got, err)
		}
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	var w writer
	w.open('{')
	w.key("a")
	w.int(1)
	w.key("b")
	w.open('[')
	w.str("x")
	w.open('{')
	w.close('}')
	w.null()
	w.close(']')
	w.key("c")
	w.intString(7)
	w.key("d")
	w.bool(false)
	w.close('}')
	if got, want := string(w.b), `{"a":1,"b":["x",{},null],"c":"7","d":false}`; got != want {
		t.Errorf("writer wrote %s, want %s", got, want)
	}
}

// get follows a path of object keys and array indexes through a decoded
// JSON value.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func has(v any, key string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[key]
	return ok
}

func num(v any) int64 {
	n, _ := v.(json.Number).Int64()
	return n
}

func TestRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hello, second, draft := f.item["hello"], f.item["second"], f.item["draft"]

	t.Run("cycle terminates", func(t *testing.T) {
		_, v := f.mustRender("/preview/en-us/item/{hello}?contentLinkDepth=5&expandAllContentLinks=true")
		// hello -> next second -> next hello is not expanded inside itself.
		if got := num(get(v, "fields", "next", "contentID")); got != second {
			t.Errorf("hello.next.contentID = %d, want %d", got, second)
		}
		if got := num(get(v, "fields", "next", "fields", "next", "contentid")); got != hello {
			t.Errorf("hello.next.next = %v, want the reference {contentid: %d}", get(v, "fields", "next", "fields", "next"), hello)
		}
		// hello in its own related list is a reduced reference.
		rel := get(v, "fields", "related").([]any)
		last := rel[len(rel)-1]
		if num(get(last, "contentID")) != hello || len(get(last, "properties").(map[string]any)) != 0 {
			t.Errorf("hello.related[-1] = %v, want the reduced reference of %d", last, hello)
		}
		// draft links to itself.
		_, v = f.mustRender("/preview/en-us/item/{draft}?contentLinkDepth=5")
		if got := num(get(v, "fields", "next", "contentid")); got != draft {
			t.Errorf("draft.next = %v, want {contentid: %d}", get(v, "fields", "next"), draft)
		}
	})

	t.Run("depth counts levels of links", func(t *testing.T) {
		_, v := f.mustRender("/fetch/en-us/item/{hello}?contentLinkDepth=0")
		if got := get(v, "fields", "next"); !has(got, "contentid") || has(got, "fields") {
			t.Errorf("depth 0: next = %v, want a reference", got)
		}
		_, v = f.mustRender("/fetch/en-us/item/{hello}?contentLinkDepth=1")
		if got := get(v, "fields", "next", "fields", "related"); !has(got, "referencename") {
			t.Errorf("depth 1: next.related = %v, want a list reference", got)
		}
		if got := get(v, "fields", "allTopics"); !has(got, "referencename") || get(got, "fulllist") != true {
			t.Errorf("depth 1 without expandAllContentLinks: allTopics = %v, want {referencename, fulllist: true}", got)
		}
		_, v = f.mustRender("/fetch/en-us/item/{hello}?contentLinkDepth=1&expandAllContentLinks=true")
		if got, ok := get(v, "fields", "allTopics").([]any); !ok || len(got) != 2 {
			t.Errorf("expandAllContentLinks: allTopics = %v, want the 2 published categories", get(v, "fields", "allTopics"))
		}
	})

	t.Run("depth 0 zone items are references", func(t *testing.T) {
		_, v := f.mustRender("/fetch/en-us/page/{home}?contentLinkDepth=0")
		entries := get(v, "zones", "MainContentZone").([]any)
		if len(entries) != 2 {
			t.Fatalf("fetch home has %d MainContentZone entries, want the 2 published", len(entries))
		}
		for i, e := range entries {
			item := get(e, "item").(map[string]any)
			if len(item) != 1 || !has(item, "contentid") || get(e, "module") == nil {
				t.Errorf("zone entry %d = %v, want {module, item: {contentid}}", i, e)
			}
		}
		_, v = f.mustRender("/fetch/en-us/page/{home}?contentLinkDepth=1")
		if got := get(v, "zones", "SideZone", 0, "item", "properties", "definitionName"); got != "Feature" {
			t.Errorf("depth 1 zone item definitionName = %v, want Feature", got)
		}
		if got := get(v, "zones", "SideZone", 0, "item", "fields", "post"); !has(got, "contentid") {
			t.Errorf("depth 1: the component's link = %v, want a reference", got)
		}
	})

	t.Run("totalCount counts filter matches", func(t *testing.T) {
		tests := []struct {
			url   string
			ids   []int64
			total int64
		}{
			{"/fetch/en-us/list/posts?filter=fields.featured[eq]true&take=1", []int64{f.item["third"]}, 2},
			{"/fetch/en-us/list/posts?filter=fields.featured[eq]true&take=1&skip=1", []int64{hello}, 2},
			{"/fetch/en-us/list/posts?filter=fields.featured[eq]true&skip=5", nil, 2},
			{"/preview/en-us/list/posts?filter=fields.views[gte]42 and properties.state[eq]1", []int64{hello, draft}, 2},
			{"/fetch/en-us/list/posts?take=2", []int64{f.item["third"], hello}, 3},
			{"/fetch/en-us/list/posts?sort=views&direction=asc", []int64{second, f.item["third"], hello}, 3},
			{"/fetch/en-us/list/posts?sort=contentID&direction=desc&take=1", []int64{f.item["third"]}, 3},
		}
		for _, tt := range tests {
			_, v := f.mustRender(tt.url)
			var ids []int64
			for _, it := range get(v, "items").([]any) {
				ids = append(ids, num(get(it, "contentID")))
			}
			if total := num(get(v, "totalCount")); !slices.Equal(ids, tt.ids) || total != tt.total {
				t.Errorf("%s: items %v, totalCount %d; want %v, %d", tt.url, ids, total, tt.ids, tt.total)
			}
		}
	})

	t.Run("hidden links are left out", func(t *testing.T) {
		res, v := f.mustRender("/fetch/en-us/item/{second}")
		if fs := get(v, "fields"); has(fs, "category") || has(fs, "categoryID") {
			t.Errorf("fetch: second links the unpublished Drafts, but fields = %v", fs)
		}
		if got := get(v, "fields", "topics"); got == nil || len(got.([]any)) != 0 || get(v, "fields", "topics_ValueField") != "" {
			t.Errorf("fetch: topics = %v, topics_ValueField = %v; want [] and \"\"", got, get(v, "fields", "topics_ValueField"))
		}
		if !slices.Contains(res.Tags, ItemTag(f.item["drafts"])) {
			t.Errorf("tags %v lack the hidden item %s, whose publication would change the answer", res.Tags, ItemTag(f.item["drafts"]))
		}
		_, v = f.mustRender("/preview/en-us/item/{second}")
		if got := get(v, "fields", "categoryID"); got != json.Number("3") && got != "3" {
			t.Errorf("preview: categoryID = %v, want \"3\"", got)
		}
		_, v = f.mustRender("/fetch/en-us/item/{hello}?contentLinkDepth=0")
		if got := get(v, "fields", "related", "sortids"); got != "5,4" {
			t.Errorf("fetch: related.sortids = %v, want 5,4 (Draft Post is not published)", got)
		}
	})

	t.Run("fields selects fields", func(t *testing.T) {
		_, v := f.mustRender("/fetch/en-us/list/posts?fields=views,fields.topics&contentLinkDepth=0")
		got := get(v, "items", 1, "fields").(map[string]any)
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"topics", "topics_ValueField", "views"}; !slices.Equal(keys, want) {
			t.Errorf("fields of the second item = %v, want %v", keys, want)
		}
	})

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			url  string
			kind problem.Kind
		}{
			{"/fetch/en-us/item/9999", problem.NotFound},
			{"/fetch/en-us/item/{draft}", problem.NotFound},
			{"/fetch/en-us/item/{gone}", problem.NotFound},
			{"/fetch/fr-ca/item/{second}", problem.NotFound},
			{"/fetch/de-de/item/{hello}", problem.NotFound},
			{"/fetch/en-us/list/nosuch", problem.NotFound},
			{"/fetch/en-us/list/richtext_9", problem.NotFound},
			{"/fetch/en-us/list/posts?sort=fields.nosuch", problem.Invalid},
			{"/fetch/en-us/list/posts?sort=properties.nosuch", problem.Invalid},
			{"/fetch/en-us/page/{team}", problem.NotFound},
			{"/fetch/en-us/page/9999", problem.NotFound},
			{"/fetch/en-us/page/website?path=/nosuch", problem.NotFound},
			{"/fetch/en-us/page/website?path=/blog/draft-post", problem.NotFound},
			{"/fetch/en-us/page/website?path=/about-us/our-team/alumni", problem.NotFound},
			{"/fetch/en-us/sitemap/flat/nosuch", problem.NotFound},
			{"/fetch/en-us/page/nosuch?path=/home", problem.NotFound},
		}
		for _, tt := range tests {
			_, err := f.render(tt.url)
			if !problem.Is(err, tt.kind) {
				t.Errorf("%s: err = %v, want a %s problem", tt.url, err, tt.kind.Title())
			}
		}
		_, err := f.render("/fetch/de-de/item/{hello}")
		var pe *problem.Error
		if !errors.As(err, &pe) || !slices.Equal(pe.Extra["locales"].([]string), []string{"en-us", "fr-ca"}) {
			t.Errorf("unknown locale: err = %#v, want the configured locales listed", err)
		}
		for _, url := range []string{"/preview/en-us/page/{team}", "/preview/en-us/item/{draft}", "/preview/en-us/item/{gone}",
			"/preview/en-us/page/website?path=/about-us/our-team/alumni", "/fetch/en-us/page/WEBSITE?path=/About-Us"} {
			if _, err := f.render(url); err != nil {
				t.Errorf("%s: %v", url, err)
			}
		}
		req := f.request("/fetch/en-us/item/{hello}")
		req.Kind = 0
		if _, err := f.r.Render(f.ctx, f.site, req); err == nil || problem.KindOf(err) != problem.Internal {
			t.Errorf("request of no kind: err = %v, want an internal error (not rendered here)", err)
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		other := New(f.s)
		for _, c := range goldenCases() {
			a, err := f.render(c.url)
			if err != nil {
				t.Fatal(err)
			}
			b, err := other.Render(context.Background(), f.site, f.request(c.url))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Body, b.Body) || !slices.Equal(a.Tags, b.Tags) {
				t.Errorf("%s: two renders differ", c.name)
			}
		}
	})

	t.Run("tags", func(t *testing.T) {
		tests := []struct {
			url  string
			want []string
		}{
			{"/fetch/en-us/item/{news}?contentLinkDepth=0", []string{ItemTag(f.item["news"])}},
			{"/fetch/en-us/list/categories", []string{"c:categories", ItemTag(f.item["news"]), ItemTag(f.item["events"])}},
			{"/fetch/en-us/sitemap/nested/website", []string{"c:posts", "s:website"}},
			{"/fetch/en-us/page/{postDetail}?contentLinkDepth=0", []string{ItemTag(f.item["detailText"]), PageTag(f.page["postDetail"])}},
		}
		for _, tt := range tests {
			res, _ := f.mustRender(tt.url)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(res.Tags, want) {
				t.Errorf("%s: tags %v, want %v", tt.url, res.Tags, want)
			}
		}
	})
}

func TestSortPath(t *testing.T) {
	t.Parallel()
	f := content.Fields{
		{Name: "title", Type: content.TypeText},
		{Name: "image", Type: content.TypeImage},
		{Name: "category", Type: content.TypeItem, Container: "Categories"},
		{Name: "topics", Type: content.TypeList, Container: "Categories"},
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"contentid", "contentid", true},
		{"properties.modified", "properties.modified", true},
		{"properties.itemorder", "properties.itemorder", true},
		{"fields.title", "fields.title", true},
		{"fields.image.url", "fields.image.url", true},
		{"fields.categoryid", "fields.categoryid", true},
		{"title", "fields.title", true},
		{"fields.nosuch", "", false},
		{"properties.nosuch", "", false},
		{"nosuch", "", false},
		{"seo", "", false},
	}
	for _, tt := range tests {
		got, err := sortPath("Post", f, tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("sortPath(%q) = %q, %v; want %q, ok %t", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !problem.Is(err, problem.Invalid) {
			t.Errorf("sortPath(%q) error %v is not Invalid", tt.in, err)
		}
	}
}

// BenchmarkRenderItem renders one published item at depth 1 (the common
// request) through Postgres: two linked items, a list of two, references
// below them.
func BenchmarkRenderItem(b *testing.B) {
	f := newFixture(b)
	req := f.request("/fetch/en-us/item/{hello}?contentLinkDepth=1")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.r.Render(ctx, f.site, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderUnlinked renders at depth 1 an item that links nowhere,
// the uncached item read of scripts/bench/read-origin.sh: one lookup by
// key.
func BenchmarkRenderUnlinked(b *testing.B) {
	f := newFixture(b)
	f.bulk(100)
	var id int64
	f.check("bulk item", f.db.QueryRowContext(f.ctx, `SELECT max(content_id) FROM items WHERE instance_id = $1`, f.inst.ID).Scan(&id))
	req := f.request(fmt.Sprintf("/fetch/en-us/item/%d?contentLinkDepth=1", id))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.r.Render(f.ctx, f.site, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderList renders a page of 10 items that link nowhere, the
// uncached list read of scripts/bench/read-origin.sh.
func BenchmarkRenderList(b *testing.B) {
	f := newFixture(b)
	f.bulk(100)
	req := f.request("/fetch/en-us/list/posts?take=10&skip=20")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.r.Render(f.ctx, f.site, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderItemParallel is BenchmarkRenderItem from GOMAXPROCS
// goroutines, as an origin serves it.
func BenchmarkRenderItemParallel(b *testing.B) {
	f := newFixture(b)
	req := f.request("/fetch/en-us/item/{hello}?contentLinkDepth=1")
	ctx := context.Background()
	f.db.SetMaxIdleConns(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.r.Render(ctx, f.site, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkWriteItem measures the encoder alone: writing an item at depth 1
// whose links are loaded.
func BenchmarkWriteItem(b *testing.B) {
	f := newFixture(b)
	req := f.request("/fetch/en-us/item/{hello}?contentLinkDepth=1")
	j := &job{r: f.r, ctx: context.Background(), inst: f.inst, locale: en, fl: source.FlavourFetch, req: req,
		nodes: map[int64]*node{}, heads: map[int64]string{}, hidden: map[int64]bool{},
		lists: map[string][]int64{}, listDepth: map[string]int{}, tags: map[string]struct{}{}}
	if err := j.item(); err != nil {
		b.Fatal(err)
	}
	n := j.nodes[f.item["hello"]]
	b.ReportAllocs()
	for b.Loop() {
		j.w.b = j.w.b[:0]
		j.w.comma = false
		j.writeItem(n, 1, nil)
	}
	b.SetBytes(int64(len(j.w.b)))
}

func TestSplitObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want map[string]string // member -> raw value
		err  bool
	}{
		{`{}`, map[string]string{}, false},
		{` { } `, map[string]string{}, false},
		{`{"a": 1, "b": "x,}", "c": {"d": [1, {"e": "]"}]}, "f": [], "g": null, "h": true}`,
			map[string]string{"a": `1`, "b": `"x,}"`, "c": `{"d": [1, {"e": "]"}]}`, "f": `[]`, "g": `null`, "h": `true`}, false},
		{`{"q\"k": "v\\\"", "n": -1.5e3}`, map[string]string{`q"k`: `"v\\\""`, "n": `-1.5e3`}, false},
		{`{"a":1,"b":2}`, map[string]string{"a": "1", "b": "2"}, false},
		{`{"a": 1,}`, nil, true},
		{`{"a" 1}`, nil, true},
		{`[1]`, nil, true},
		{`{"a": 1} x`, nil, true},
		{`{"a": "unterminated}`, nil, true},
	}
	for _, tt := range tests {
		got, err := source.SplitObject([]byte(tt.in))
		if (err != nil) != tt.err {
			t.Errorf("SplitObject(%s) error = %v, want error %t", tt.in, err, tt.err)
			continue
		}
		if tt.err {
			continue
		}
		gotRaw := map[string]string{}
		for k, v := range got {
			gotRaw[k] = string(v)
		}
		if len(gotRaw) != len(tt.want) {
			t.Errorf("SplitObject(%s) = %v, want %v", tt.in, gotRaw, tt.want)
			continue
		}
		for k, v := range tt.want {
			if gotRaw[k] != v {
				t.Errorf("SplitObject(%s)[%q] = %s, want %s", tt.in, k, gotRaw[k], v)
			}
		}
	}
}

func TestParseLink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ  content.FieldType
		in   string
		want link
	}{
		{content.TypeItem, `{"contentID": 12}`, link{set: true, ids: []int64{12}}},
		{content.TypeItem, `{"contentID":12}`, link{set: true, ids: []int64{12}}},
		{content.TypeItem, `{"contentID": 0}`, link{}},
		{content.TypeItem, `{"other": 1}`, link{}},
		{content.TypeList, `{}`, link{set: true, full: true}},
		{content.TypeList, `{"contentIDs": [3, 1, 2]}`, link{set: true, ids: []int64{3, 1, 2}}},
		{content.TypeList, `{"contentIDs":[7]}`, link{set: true, ids: []int64{7}}},
		{content.TypeList, `{"contentIDs": []}`, link{set: true, ids: []int64{}}},
		{content.TypeList, `"junk"`, link{}},
	}
	for _, tt := range tests {
		got := parseLink(tt.typ, []byte(tt.in))
		if got.set != tt.want.set || got.full != tt.want.full || !slices.Equal(got.ids, tt.want.ids) {
			t.Errorf("parseLink(%s, %s) = %+v, want %+v", tt.typ, tt.in, got, tt.want)
		}
	}
}

func TestWriteImage(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 32)
	assetURL := func(key string) string { return "https://cdn.example.com/" + key }
	tests := []struct{ in, want string }{
		{`{"url": "https://x/a.png", "label": "A \"b\" é", "filesize": 12, "width": 3, "height": 4}`,
			`{"label":"A \"b\" é","url":"https://x/a.png","target":null,"filesize":12,"pixelHeight":"4","pixelWidth":"3","height":4,"width":3}`},
		{`{"url": "/a.png"}`,
			`{"label":"","url":"/a.png","target":null,"filesize":0,"pixelHeight":"0","pixelWidth":"0","height":0,"width":0}`},
		{`{"url": "/a.png", "target": "_blank", "width": 1.5}`, // not a stored form: decoded
			`{"url": "/a.png", "target": "_blank", "width": 1.5}`},
		// An asset's image: the url is made from the key.
		{`{"assetID": 7, "key": "acme/assets/` + hash + `.png", "label": "L", "filesize": 5, "width": 2, "height": 1}`,
			`{"label":"L","url":"https://cdn.example.com/acme/assets/` + hash + `.png","target":null,"filesize":5,"pixelHeight":"1","pixelWidth":"2","height":1,"width":2}`},
	}
	for _, tt := range tests {
		var w writer
		writeImage(&w, []byte(tt.in), assetURL)
		if string(w.b) != tt.want {
			t.Errorf("writeImage(%s) = %s, want %s", tt.in, w.b, tt.want)
		}
	}
	// The fast path and the decoding path agree on every stored form.
	for _, in := range []string{
		`{"url": "https://x/a.png", "label": "L", "target": "_self", "filesize": 9, "width": 10, "height": 20}`,
		`{"assetID": 7, "key": "acme/assets/` + hash + `.webp", "label": "L", "target": "_self", "filesize": 9, "width": 10, "height": 20}`,
	} {
		var fast, slow writer
		writeImage(&fast, []byte(in), assetURL)
		writeImageDecoded(&slow, []byte(in), assetURL)
		if string(fast.b) != string(slow.b) {
			t.Errorf("writeImage = %s, writeImageDecoded = %s", fast.b, slow.b)
		}
	}
}

// TestPlansSettle checks that every statement a render prepares settles on
// Postgres's generic plan after its first five runs, so that it is not
// planned again on every request (see source.Reader).
func TestPlansSettle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.db.SetMaxOpenConns(1) // pg_prepared_statements is per connection
	for range 8 {
		for _, c := range goldenCases() {
			if _, err := f.render(c.url); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows, err := f.db.QueryContext(f.ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var stmt string
		var generic, custom int
		if err := rows.Scan(&stmt, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		n++
		if custom > 5 || generic == 0 {
			t.Errorf("%d custom and %d generic plans for\n%s", custom, generic, stmt)
		}
	}
	if n == 0 {
		t.Error("no prepared statements")
	}
}

// BenchmarkRenderItemLarge is BenchmarkRenderItem in an instance of 50,000
// items, where plans are those of real tables.
func BenchmarkRenderItemLarge(b *testing.B) {
	f := newFixture(b)
	f.bulk(50000)
	req := f.request("/fetch/en-us/item/{hello}?contentLinkDepth=1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.r.Render(f.ctx, f.site, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderListLarge renders a page of 10 deep in a container of
// 50,000 items: counting the visible items dominates.
func BenchmarkRenderListLarge(b *testing.B) {
	f := newFixture(b)
	f.bulk(50000)
	req := f.request("/fetch/en-us/list/posts?take=10&skip=20000")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.r.Render(f.ctx, f.site, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderPageByPathLarge renders the page by path of a post behind
// a dynamic page over 50,000 posts, from Postgres as the origin does on a
// miss, and of a path no node has (a 404, which walks the post's whole
// sibling group too).
func BenchmarkRenderPageByPathLarge(b *testing.B) {
	f := newFixture(b)
	f.bulk(50000)
	var mid int64
	f.check("mid post", f.db.GetContext(f.ctx, &mid, `SELECT content_id FROM items WHERE instance_id = $1 AND item_order = 26000`, f.inst.ID))
	for _, c := range []struct{ name, path string }{{"found", fmt.Sprintf("/blog/bulk-%d", mid)}, {"absent", "/blog/no-such-post"}} {
		b.Run(c.name, func(b *testing.B) {
			req := f.request("/fetch/en-us/page/website?path=" + c.path)
			b.ReportAllocs()
			for b.Loop() {
				_, err := f.r.Render(f.ctx, f.site, req)
				if found := err == nil; found != (c.name == "found") {
					b.Fatalf("%s: %v", c.path, err)
				}
			}
		})
	}
}
