package compat

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/edgecms/edgecms/client"
)

// The demo's models as a Go site would declare them.
type (
	demoCategory struct {
		ContentID int64
		Title     string
		Slug      string
	}
	demoAuthor struct {
		ContentID int64
		Name      string
		Role      string
		Photo     *client.Image
	}
	demoTag struct {
		ContentID int64
		Title     string
	}
	demoPost struct {
		ContentID      int64
		Modified       time.Time `edgecms:"properties.modified"`
		Title          string
		Slug           string
		Body           string
		PostDate       time.Time
		ReadingMinutes int
		Featured       bool
		Image          client.Image
		Category       *demoCategory
		CategoryID     int64
		Author         *demoAuthor
		Tags           []demoTag
		TagIDs         []int64 `edgecms:"Tags_ValueField"`
	}
	demoProduct struct {
		ContentID     int64
		Title         string
		SKU           string
		Price         float64
		WeightGrams   int
		InStock       bool
		AvailableFrom time.Time
		Category      demoCategory
	}
)

// TestGoClientDecodesDemo reads the demo site with the Go client (package
// client) from a real origin over TLS and decodes its posts, with their
// linked category, author and tags, and its products into structs, in both
// locales, expanded and not.
func TestGoClientDecodesDemo(t *testing.T) {
	t.Parallel()
	s := start(t)
	c, err := client.New(s.base, s.inst.Guid, client.Options{FetchKey: s.fetchKey, PreviewKey: s.previewKey, HTTPClient: s.client})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	posts, err := client.GetAllItems[demoPost](ctx, c, "en-us", "posts", client.ListOptions{Take: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(posts) != 5 {
		t.Fatalf("%d posts, want the demo's 5", len(posts))
	}
	for _, p := range posts {
		if p.ContentID == 0 || p.Title == "" || p.Slug == "" || p.Body == "" || p.PostDate.IsZero() || p.Modified.IsZero() ||
			p.ReadingMinutes == 0 || p.Image.URL == "" || p.Image.Width == 0 {
			t.Errorf("post %d decoded without some of its values: %+v", p.ContentID, p)
		}
		if p.Category == nil || p.Category.Title == "" || p.Category.ContentID != p.CategoryID {
			t.Errorf("post %d: category %+v, categoryID %d; want the expanded category", p.ContentID, p.Category, p.CategoryID)
		}
		if p.Author == nil || p.Author.Name == "" || p.Author.Photo == nil || p.Author.Photo.URL == "" {
			t.Errorf("post %d: author %+v, want the expanded author", p.ContentID, p.Author)
		}
		var ids []int64
		for _, tag := range p.Tags {
			if tag.Title == "" {
				t.Errorf("post %d: tag %+v not expanded", p.ContentID, tag)
			}
			ids = append(ids, tag.ContentID)
		}
		if len(ids) == 0 || !reflect.DeepEqual(ids, p.TagIDs) {
			t.Errorf("post %d: tags %v, Tags_ValueField %v; want the same ids", p.ContentID, ids, p.TagIDs)
		}
	}
	first := posts[0]
	want := demoPost{
		Title: "How We Roast a Light Roast", Slug: "how-we-roast-a-light-roast",
		PostDate: time.Date(2025, 9, 18, 13, 0, 0, 0, time.UTC), ReadingMinutes: 6, Featured: true,
	}
	if first.Title != want.Title || first.Slug != want.Slug || !first.PostDate.Equal(want.PostDate) ||
		first.ReadingMinutes != want.ReadingMinutes || first.Featured != want.Featured ||
		first.Category.Title != "Single Origin" || first.Author.Name != "Maya Tremblay" || first.Author.Role != "Head Roaster" ||
		len(first.Tags) != 2 || first.Tags[0].Title != "Roasting" || first.Tags[1].Title != "Origins" {
		t.Errorf("first post = %+v\ncategory %+v, author %+v, tags %+v", first, first.Category, first.Author, first.Tags)
	}

	// One item, in French, from the preview flavour.
	fr, err := client.GetItem[demoPost](ctx, c.WithPreview(true), "fr-ca", first.ContentID, client.ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fr.Slug != "comment-nous-torrefions-un-cafe-clair" || fr.Category == nil || fr.Category.Title != "Origine unique" ||
		fr.Author.Role != "Torréfactrice en chef" || fr.ReadingMinutes != 6 {
		t.Errorf("French post = %+v, category %+v, author %+v", fr, fr.Category, fr.Author)
	}

	// At depth 0 links are references: structs hold only their contentID.
	page, err := client.GetList[demoPost](ctx, c, "en-us", "posts", client.ListOptions{Take: 1, Depth: new(0)})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalCount != 5 || len(page.Items) != 1 {
		t.Fatalf("GetList at depth 0 = %d items of %d", len(page.Items), page.TotalCount)
	}
	p := page.Items[0]
	if *p.Category != (demoCategory{ContentID: first.CategoryID}) || *p.Author != (demoAuthor{ContentID: first.Author.ContentID}) ||
		!reflect.DeepEqual(p.Tags, []demoTag{{ContentID: first.TagIDs[0]}, {ContentID: first.TagIDs[1]}}) {
		t.Errorf("post at depth 0: category %+v, author %+v, tags %+v; want references", p.Category, p.Author, p.Tags)
	}

	// Products: a decimal, a number, a boolean and a date, all sent as
	// strings, and the shared values the same in both locales.
	for _, locale := range []string{"en-us", "fr-ca"} {
		products, err := client.GetAllItems[demoProduct](ctx, c, locale, "products", client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(products) == 0 {
			t.Fatalf("%s: no products", locale)
		}
		eth := products[0]
		if eth.SKU != "NWR-ETH-340" || eth.Price != 21.5 || eth.WeightGrams != 340 || !eth.InStock ||
			!eth.AvailableFrom.Equal(time.Date(2025, 9, 2, 4, 0, 0, 0, time.UTC)) || eth.Category.Slug == "" {
			t.Errorf("%s: first product = %+v", locale, eth)
		}
	}
}
