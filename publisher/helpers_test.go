package publisher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/store/miniotest"
)

var (
	minio   miniotest.Shared
	bucketN atomic.Int64
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	minio.Stop()
	os.Exit(code)
}

// env is a database, a store and the content of one test instance.
type env struct {
	t     testing.TB
	ctx   context.Context
	db    *sqlx.DB
	dsn   string
	cs    *content.Store
	store store.Store
	inst  content.Instance
	guid  string
	fresh *render.Renderer // renders the answers the store must hold
}

// storeKind names the store of a test.
type storeKind int

const (
	folderStore storeKind = iota
	minioStore
)

func newEnv(t testing.TB, kind storeKind) *env {
	t.Helper()
	db, dsn := pgtest.New(t)
	e := &env{t: t, ctx: context.Background(), db: db, dsn: dsn, cs: content.NewStore(db)}
	e.store = openStore(t, kind)
	e.fresh = render.New(e.cs)
	t.Cleanup(func() { e.fresh.Close() })
	inst, err := e.cs.CreateInstance(e.ctx, "acme", []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-CA", Name: "Français"}})
	if err != nil {
		t.Fatal(err)
	}
	e.inst, e.guid = inst, inst.Guid
	return e
}

func openStore(t testing.TB, kind storeKind) store.Store {
	t.Helper()
	ctx := context.Background()
	var s store.Store
	var err error
	switch kind {
	case folderStore:
		s, err = store.Open(ctx, t.TempDir(), store.Options{})
	case minioStore:
		endpoint, ak, sk := minio.Start(t)
		bucket := fmt.Sprintf("pub-%d", bucketN.Add(1))
		s, err = store.Open(ctx, "s3://"+bucket+"?endpoint="+endpoint+"&secure=false&create=true", store.Options{AccessKey: ak, SecretKey: sk})
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testLog(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// publisher returns a new Publisher of the env, closed when the test ends.
func (e *env) publisher(cfg Config) *Publisher {
	cfg.Store = e.store
	if cfg.Workers == 0 {
		cfg.Workers = 4
	}
	p := New(cfg, e.cs, testLog(e.t))
	e.t.Cleanup(func() { p.Close() })
	return p
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// site is the content model of the tests: tags, authors and posts that
// link to them, components that link to posts, and a page tree with a
// dynamic page over the posts.
type site struct {
	tags, authors, posts []int64
	home, blog, about    int64
}

func (e *env) buildSite() *site {
	e.t.Helper()
	ctx, inst := e.ctx, e.inst
	text := func(n string) content.Field { return content.Field{Name: n, Type: content.TypeText} }
	models := []content.Model{
		{Name: "Tag", Kind: "content", Fields: content.Fields{text("Title")}},
		{Name: "Author", Kind: "content", Fields: content.Fields{text("Name"), {Name: "Bio", Type: content.TypeHTML}}},
		{Name: "Post", Kind: "content", Fields: content.Fields{text("Title"), text("Slug"), {Name: "Body", Type: content.TypeHTML},
			{Name: "Author", Type: content.TypeItem, Container: "authors"},
			{Name: "Tags", Type: content.TypeList, Container: "tags"},
			{Name: "Rank", Type: content.TypeNumber, Shared: true}}},
	}
	containers := map[string]string{"Tag": "tags", "Author": "authors", "Post": "posts"}
	for _, m := range models {
		_, err := e.cs.CreateModel(ctx, inst, m)
		e.must(err)
		_, err = e.cs.CreateContainer(ctx, inst, containers[m.Name], m.Name)
		e.must(err)
	}
	for _, m := range []content.Model{
		{Name: "Teaser", Kind: "component", Fields: content.Fields{text("Heading"), {Name: "Posts", Type: content.TypeList, Container: "posts"}}},
		{Name: "Text", Kind: "component", Fields: content.Fields{{Name: "Body", Type: content.TypeHTML}, {Name: "Author", Type: content.TypeItem, Container: "authors"}}},
	} {
		_, err := e.cs.CreateModel(ctx, inst, m)
		e.must(err)
	}
	_, err := e.cs.CreatePageModel(ctx, inst, "Main", []string{"main", "side"})
	e.must(err)

	s := &site{}
	for i := range 4 {
		s.tags = append(s.tags, e.newItem("tags", map[string]any{"Title": fmt.Sprintf("Tag %d", i)}))
	}
	for i := range 3 {
		s.authors = append(s.authors, e.newItem("authors", map[string]any{"Name": fmt.Sprintf("Author %d", i), "Bio": "<p>bio</p>"}))
	}
	for i := range 14 {
		s.posts = append(s.posts, e.newItem("posts", map[string]any{
			"Title": fmt.Sprintf("Post %d", i), "Slug": fmt.Sprintf("post-%d", i), "Body": "<p>body</p>",
			"Author": content.ItemLink{ContentID: s.authors[i%3]},
			"Tags":   content.ListLink{ContentIDs: []int64{s.tags[i%4], s.tags[(i+1)%4]}},
			"Rank":   i,
		}))
	}
	s.home = e.newPage(nil, "Home", nil)
	s.blog = e.newPage(&s.home, "Blog", &content.Dynamic{ReferenceName: "posts", PathField: "Slug"})
	s.about = e.newPage(&s.home, "About", nil)
	for _, l := range []string{"en-us", "fr-CA"} {
		_, _, err := e.cs.AddComponent(ctx, inst, l, s.home, "main", "Teaser", map[string]json.RawMessage{
			"Heading": raw("Latest"), "Posts": raw(content.ListLink{ContentIDs: s.posts[:3]})})
		e.must(err)
		_, _, err = e.cs.AddComponent(ctx, inst, l, s.home, "side", "Text", map[string]json.RawMessage{
			"Body": raw("<p>hello</p>"), "Author": raw(content.ItemLink{ContentID: s.authors[0]})})
		e.must(err)
		_, _, err = e.cs.AddComponent(ctx, inst, l, s.about, "main", "Teaser", map[string]json.RawMessage{
			"Heading": raw("All posts"), "Posts": raw(content.ListLink{})})
		e.must(err)
		for _, pg := range []int64{s.home, s.blog, s.about} {
			_, err := e.cs.PageAction(ctx, inst, l, pg, content.ActionPublish)
			e.must(err)
		}
	}
	return s
}

// newItem creates an item with the same fields in both locales and
// publishes both copies.
func (e *env) newItem(container string, fields map[string]any) int64 {
	e.t.Helper()
	vals := map[string]json.RawMessage{}
	for k, v := range fields {
		vals[k] = raw(v)
	}
	st, err := e.cs.CreateItem(e.ctx, e.inst, "en-us", container, vals)
	e.must(err)
	_, err = e.cs.SaveItem(e.ctx, e.inst, "fr-CA", st.ContentID, vals)
	e.must(err)
	for _, l := range []string{"en-us", "fr-CA"} {
		_, err = e.cs.ItemAction(e.ctx, e.inst, l, st.ContentID, content.ActionPublish)
		e.must(err)
	}
	return st.ContentID
}

// newPage creates a page in both locales (not published).
func (e *env) newPage(parent *int64, title string, dyn *content.Dynamic) int64 {
	e.t.Helper()
	model := "Main"
	in := content.PageInput{Title: &title, PageModel: &model, Dynamic: dyn}
	if parent != nil {
		in.ParentPageID = raw(*parent)
	}
	pg, err := e.cs.CreatePage(e.ctx, e.inst, "en-us", in)
	e.must(err)
	in.PageModel, in.ParentPageID = nil, nil
	frTitle := title + " (fr)"
	in.Title = &frTitle
	_, err = e.cs.SavePage(e.ctx, e.inst, "fr-CA", pg.PageID, in)
	e.must(err)
	return pg.PageID
}

// check asserts the publisher's promise at a quiescent point: every object
// in the store under the instance's prefix is known to the objects table
// and equals a fresh render of its request (body, tags, metadata); no
// object exists whose request the Fetch API answers with an error; and
// every object the publisher maintains (see requests.go; found here from
// the content tables and fresh renders) is in the store.
func (e *env) check(t testing.TB) {
	t.Helper()
	ctx := e.ctx
	site, err := render.LoadSite(ctx, e.cs, e.guid)
	if err != nil {
		t.Fatal(err)
	}
	inStore := map[string]store.Info{}
	err = e.store.List(ctx, e.guid+"/", func(i store.Info) error { inStore[i.Key] = i; return nil })
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Key     string `db:"key"`
		Request string `db:"request"`
		ETag    string `db:"etag"`
	}
	if err := e.db.SelectContext(ctx, &rows, `SELECT key, request, etag FROM objects WHERE guid = $1 AND etag IS NOT NULL`, e.guid); err != nil {
		t.Fatal(err)
	}
	known := map[string]string{}
	for _, r := range rows {
		known[r.Key] = r.Request
		info, ok := inStore[r.Key]
		if !ok {
			t.Errorf("objects table lists %s, which the store does not hold", r.Key)
			continue
		}
		if info.ETag != r.ETag {
			t.Errorf("%s: ETag %s in the store, %s in the objects table", r.Key, info.ETag, r.ETag)
		}
	}
	renders := &renderCache{e: e, site: site, m: map[string]renderResult{}}
	failures := 0
	for key := range inStore {
		reqStr, ok := known[key]
		if !ok {
			t.Errorf("store holds %s, which the objects table does not know", key)
			continue
		}
		req, err := parseRequestString(reqStr)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if req.Key() != key {
			t.Errorf("objects table: request %s has key %s, not %s", reqStr, req.Key(), key)
		}
		res, err := renders.get(req)
		if err != nil {
			t.Errorf("store holds %s, but the Fetch API answers %v", key, err)
			failures++
			continue
		}
		o, err := e.store.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(o.Body, res.Body) {
			t.Errorf("%s is stale:\n got %s\nwant %s", key, clip(o.Body), clip(res.Body))
			failures++
		}
		if want := qualify(e.guid, req.Locale, res.Tags); !slices.Equal(o.Tags, want) {
			t.Errorf("%s: tags %v, want %v", key, o.Tags, want)
		}
		if o.ContentType != delivery.ContentType || o.CacheControl != delivery.FetchCacheControl {
			t.Errorf("%s: content type %q, cache control %q", key, o.ContentType, o.CacheControl)
		}
		if failures > 10 {
			return
		}
	}
	want := e.expected(t, renders)
	if testing.Verbose() {
		t.Logf("check: %d objects in the store, %d expected", len(inStore), len(want))
	}
	for _, req := range want {
		if _, ok := inStore[req.Key()]; !ok {
			t.Errorf("the store lacks %s (%s)", req.Key(), requestString(req))
		}
	}
}

// expected lists the maintained requests whose answer is 200, found
// without the publisher's code: published copies from the content tables,
// list pages from a fresh render's totalCount, page paths from a fresh
// flat sitemap.
func (e *env) expected(t testing.TB, renders *renderCache) []fetch.Request {
	t.Helper()
	ctx, g, site := e.ctx, e.guid, renders.site
	var out []fetch.Request
	ok := func(req fetch.Request) ([]byte, bool) {
		res, err := renders.get(req)
		if problem.KindOf(err).Status()/100 == 4 {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, req)
		return res.Body, true
	}
	for _, l := range site.Locales {
		var items, pages []int64
		var containers, channels []string
		e.must(e.db.SelectContext(ctx, &items, `SELECT content_id FROM item_copies WHERE instance_id = $1 AND locale = $2 AND published_version_id IS NOT NULL`, e.inst.ID, l.Code))
		e.must(e.db.SelectContext(ctx, &pages, `SELECT page_id FROM page_copies WHERE instance_id = $1 AND locale = $2 AND published_version_id IS NOT NULL`, e.inst.ID, l.Code))
		e.must(e.db.SelectContext(ctx, &containers, `SELECT reference_name FROM containers WHERE instance_id = $1`, e.inst.ID))
		e.must(e.db.SelectContext(ctx, &channels, `SELECT name FROM channels WHERE instance_id = $1`, e.inst.ID))
		base := "/" + g + "/fetch/" + l.Code
		for _, id := range items {
			ok(mustParse(fmt.Sprintf("%s/item/%d", base, id), ""))
		}
		for _, id := range pages {
			ok(mustParse(fmt.Sprintf("%s/page/%d", base, id), ""))
			ok(mustParse(fmt.Sprintf("%s/page/%d", base, id), "expandAllContentLinks=true"))
		}
		for _, c := range containers {
			body, found := ok(mustParse(base+"/list/"+c, ""))
			if !found {
				continue
			}
			var page struct{ TotalCount int }
			e.must(json.Unmarshal(body, &page))
			// The first DefaultListPages pages: deeper ones are kept
			// only once written back.
			for skip := 10; skip < page.TotalCount && skip < 10*DefaultListPages; skip += 10 {
				ok(mustParse(base+"/list/"+c, fmt.Sprintf("skip=%d", skip)))
			}
		}
		for _, ch := range channels {
			ok(mustParse(base+"/sitemap/nested/"+ch, ""))
			body, found := ok(mustParse(base+"/sitemap/flat/"+ch, ""))
			if !found {
				continue
			}
			var flat map[string]json.RawMessage
			e.must(json.Unmarshal(body, &flat))
			for path := range flat {
				ok(mustParse(base+"/page/"+ch, "expandAllContentLinks=true&path="+strings.ReplaceAll(path, "/", "%2F")))
			}
		}
	}
	return out
}

// clip shortens a body for a failure message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// renderCache renders each request of a check once.
type renderCache struct {
	e    *env
	site render.Site
	m    map[string]renderResult
}

type renderResult struct {
	res render.Result
	err error
}

func (c *renderCache) get(req fetch.Request) (render.Result, error) {
	k := req.Key()
	r, ok := c.m[k]
	if !ok {
		r.res, r.err = c.e.fresh.Render(c.e.ctx, c.site, req)
		c.m[k] = r
	}
	return r.res, r.err
}

// republishLoop republishes guid with p over and over until ctx ends, in a
// goroutine counted by wg (which the caller has added it to), and returns
// where it counts the republishes done: read it after wg.Wait.
func republishLoop(ctx context.Context, t *testing.T, wg *sync.WaitGroup, p *Publisher, guid string) *int {
	n := new(int)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := p.Republish(ctx, guid, nil); err != nil && ctx.Err() == nil {
				t.Errorf("Republish: %v", err)
				return
			}
			*n++
		}
	}()
	return n
}
