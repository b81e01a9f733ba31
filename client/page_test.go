package client

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestPageDecoding(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "page.json")))
	p, err := c.Page(context.Background(), "en-us", 2, PageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	top := "<script>top()</script>"
	yes := true
	want := Page{
		PageID: 2, Name: "home", Path: nil, Title: "Home", MenuText: "Home Text",
		PageType: PageStatic, TemplateName: "One Column Template", RedirectURL: "",
		SecurePage: false, ExcludeFromOutputCache: true,
		Visible: Visible{Menu: true, Sitemap: true},
		SEO: PageSEO{MetaDescription: "The home page", MetaKeywords: "home,edge",
			MetaHTML: `<meta name="robots" content="index">`, MenuVisible: nil, SitemapVisible: &yes},
		Scripts: Scripts{ExcludedFromGlobal: false, Top: &top, Bottom: nil},
		Properties: Properties{State: StatePublished, Modified: time.Date(2024, 3, 5, 14, 26, 1, 177e6, time.UTC),
			ModifiedRaw: "2024-03-05T14:26:01.177", VersionID: 48},
	}
	zones := p.Zones
	p.Zones = nil
	if !reflect.DeepEqual(*p, want) {
		t.Errorf("Page =\n%+v\nwant\n%+v", *p, want)
	}

	if len(zones) != 2 || zones["SidebarZone"] == nil || len(zones["SidebarZone"]) != 0 {
		t.Fatalf("zones = %v, want MainContentZone and an empty SidebarZone", zones)
	}
	main := zones["MainContentZone"]
	if len(main) != 2 {
		t.Fatalf("MainContentZone has %d entries, want 2", len(main))
	}
	if main[0].Module != "Jumbotron" || main[0].Item.ContentID != 12 || main[0].Item.Properties.ReferenceName != "home_jumbotron" {
		t.Errorf("first entry = %+v", main[0])
	}
	if title, _ := main[0].Item.Fields.String("title"); title != "Welcome" {
		t.Errorf("component title = %q", title)
	}
	img, err := main[0].Item.Fields.Image("image")
	if err != nil || img.Target == nil || *img.Target != "_blank" {
		t.Errorf("component image = %+v, %v; want target _blank", img, err)
	}
	// At depth 0 a zone item is a reference: contentID only.
	ref := main[1]
	if ref.Module != "RichText" || ref.Item.ContentID != 13 || ref.Item.Fields != nil || ref.Item.Properties != (Properties{}) {
		t.Errorf("reference entry = %+v", ref)
	}
}

func TestPageByPath(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "page_by_path.json")))
	r, err := c.PageByPath(context.Background(), "en-us", "website", "/blog/hello-edge", PageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Page.PageID != 6 || r.Page.PageType != PageDynamic || r.Page.DynamicItemContentID != 42 {
		t.Errorf("Page = %+v", r.Page)
	}
	want := SitemapNode{Title: "Hello, edge", Name: "hello-edge", PageID: 6, MenuText: "Hello, edge",
		Visible: Visible{Sitemap: true}, Path: "/blog/hello-edge", ContentID: 42}
	if !reflect.DeepEqual(r.SitemapNode, want) {
		t.Errorf("SitemapNode = %+v, want %+v", r.SitemapNode, want)
	}
}

func TestSitemapFlat(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "sitemap_flat.json")))
	s, err := c.SitemapFlat(context.Background(), "en-us", "website")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range s.Nodes {
		paths = append(paths, n.Path)
	}
	// The document's order, which is neither sorted nor by pageID.
	want := []string{"/home", "/blog", "/blog/zebra-post", "/blog/hello-edge", "/about", "/company", "/docs"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %v, want %v", paths, want)
	}

	n, ok := s.Node("/blog/hello-edge")
	if !ok || n.PageID != 6 || n.ContentID != 42 || n.Redirect != nil || !n.Routable() {
		t.Errorf("Node(/blog/hello-edge) = %+v, %v", n, ok)
	}
	if _, ok := s.Node("/nowhere"); ok {
		t.Error("Node(/nowhere) found something")
	}
	docs, _ := s.Node("/docs")
	if docs.Redirect == nil || *docs.Redirect != (Redirect{URL: "https://docs.example.com/", Target: "_blank"}) || docs.Routable() {
		t.Errorf("Node(/docs) = %+v, want a redirect", docs)
	}
	if company, _ := s.Node("/company"); !company.IsFolder || company.Routable() {
		t.Errorf("Node(/company) = %+v, want a folder", company)
	}
	if n, ok := s.Find(6, 44); !ok || n.Path != "/blog/zebra-post" {
		t.Errorf("Find(6, 44) = %+v, %v", n, ok)
	}
	if n, ok := s.Find(4, 0); !ok || n.Path != "/about" {
		t.Errorf("Find(4, 0) = %+v, %v", n, ok)
	}
	if _, ok := s.Find(6, 0); ok {
		t.Error("Find(6, 0) matched a dynamic node")
	}
}

func TestFlatSitemapDetails(t *testing.T) {
	var s FlatSitemap
	if err := json.Unmarshal([]byte(`{"/b": {"pageID": 2}, "/a": {"pageID": 1, "redirect": "https://x.example/"}}`), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 2 || s.Nodes[0].Path != "/b" || s.Nodes[1].Path != "/a" {
		t.Errorf("nodes = %+v; want /b then /a with paths taken from the keys", s.Nodes)
	}
	if r := s.Nodes[1].Redirect; r == nil || r.URL != "https://x.example/" {
		t.Errorf("a string redirect decodes as %+v", r)
	}
	if err := json.Unmarshal([]byte(`{}`), &s); err != nil || len(s.Nodes) != 0 {
		t.Errorf("empty sitemap: %v, %d nodes", err, len(s.Nodes))
	}
	// It writes back in the same order.
	var round FlatSitemap
	if err := json.Unmarshal(fixture(t, "sitemap_flat.json"), &round); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&round)
	if err != nil {
		t.Fatal(err)
	}
	var again FlatSitemap
	if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, round) {
		t.Errorf("round trip through %s changed the sitemap (%v)", b, err)
	}
	// A FlatSitemap built by hand still finds nodes.
	hand := FlatSitemap{Nodes: []SitemapNode{{Path: "/x", PageID: 9}}}
	if n, ok := hand.Node("/x"); !ok || n.PageID != 9 {
		t.Errorf("Node on a hand-made sitemap = %+v, %v", n, ok)
	}
}

func TestSitemapNested(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "sitemap_nested.json")))
	roots, err := c.SitemapNested(context.Background(), "en-us", "website")
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) != 3 {
		t.Fatalf("%d roots, want 3", len(roots))
	}
	if roots[0].Children != nil {
		t.Errorf("leaf children = %v, want nil", roots[0].Children)
	}
	blog := roots[1]
	if len(blog.Children) != 2 || blog.Children[0].Path != "/blog/zebra-post" || blog.Children[1].ContentID != 42 {
		t.Errorf("blog children = %+v", blog.Children)
	}
	if roots[2].Redirect == nil || roots[2].Redirect.Target != "_blank" {
		t.Errorf("docs redirect = %+v", roots[2].Redirect)
	}
}

func TestSync(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "sync_items.json")))
	s, err := c.SyncItems(context.Background(), "en-us", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.SyncToken != 1207 || len(s.Items) != 2 {
		t.Fatalf("SyncItems = token %d, %d items", s.SyncToken, len(s.Items))
	}
	if l, err := s.Items[0].Fields.Link("category"); err != nil || l.ContentID != 7 {
		t.Errorf("sync link = %+v, %v", l, err)
	}
	if s.Items[1].Properties.State != StateDeleted {
		t.Errorf("second item state = %v, want deleted", s.Items[1].Properties.State)
	}

	c, _, _ = serve(t, Options{}, jsonBody(fixture(t, "sync_pages.json")))
	ps, err := c.SyncPages(context.Background(), "en-us", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ps.SyncToken != 88 || len(ps.Items) != 2 {
		t.Fatalf("SyncPages = token %d, %d pages", ps.SyncToken, len(ps.Items))
	}
	if z := ps.Items[0].Zones["MainContentZone"]; len(z) != 1 || z[0].Item.ContentID != 12 {
		t.Errorf("sync page zone = %+v", z)
	}
	if ps.Items[1].Properties.State != StateDeleted || ps.Items[1].Properties.Modified.IsZero() {
		t.Errorf("deleted page properties = %+v", ps.Items[1].Properties)
	}

	c, _, _ = serve(t, Options{}, jsonBody([]byte(`{"syncToken": 0, "items": []}`)))
	if s, err := c.SyncItems(context.Background(), "en-us", 1207, 0); err != nil || s.SyncToken != 0 || len(s.Items) != 0 {
		t.Errorf("SyncItems at the end = %+v, %v", s, err)
	}
}

func TestGallery(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "gallery.json")))
	g, err := c.Gallery(context.Background(), 9)
	if err != nil {
		t.Fatal(err)
	}
	if g.GalleryID != 9 || g.Name != "Lighthouses" || g.Description != "Coastal lights" || g.Count != 2 || len(g.Media) != 2 {
		t.Fatalf("Gallery = %+v", g)
	}
	m := g.Media[0]
	if m.MediaID != 100 || m.FileName != "north.jpg" || m.Size != 52311 ||
		!m.ModifiedOn.Equal(time.Date(2024, 2, 10, 11, 12, 13, 45e7, time.UTC)) {
		t.Errorf("Media[0] = %+v", m)
	}
	if title, _ := m.MetaData.String("title"); title != "North light" {
		t.Errorf("metadata title = %q", title)
	}
	if h, _ := m.MetaData.Int("pixelHeight"); h != 600 {
		t.Errorf("metadata pixelHeight = %d", h)
	}
	if !g.Media[1].ModifiedOn.Equal(time.Date(2024, 2, 11, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("Media[1].ModifiedOn = %v", g.Media[1].ModifiedOn)
	}
}

func TestURLRedirections(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "urlredirection.json")))
	r, err := c.URLRedirections(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []URLRedirection{
		{ID: 1, OriginURL: "/old-blog", DestinationURL: "/blog", StatusCode: 301},
		{ID: 2, OriginURL: "/promo", DestinationURL: "https://shop.example.com/spring", StatusCode: 302},
	}
	if !reflect.DeepEqual(r.Items, want) || r.IsUpToDate || r.LastAccessDate != "2024-03-05T14:26:01.177Z" {
		t.Errorf("URLRedirections = %+v", r)
	}

	c, _, _ = serve(t, Options{}, jsonBody([]byte(`{"items": [], "isUpToDate": true, "lastAccessDate": "x"}`)))
	r, err = c.URLRedirections(context.Background(), "x")
	if err != nil || !r.IsUpToDate || len(r.Items) != 0 {
		t.Errorf("up-to-date URLRedirections = %+v, %v", r, err)
	}
}
