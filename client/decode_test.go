package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The types the fixtures decode into.
type (
	testCategory struct {
		ContentID int64
		Name      string
	}
	testTag struct {
		ContentID int64
		Label     string
	}
	testPost struct {
		ContentID   int64
		Properties  Properties
		Modified    time.Time `edgecms:"properties.modified"`
		Version     int       `edgecms:"properties.versionID"`
		Title       string
		Body        string
		Minutes     int     `edgecms:"readingMinutes"`
		Rating      float64 `edgecms:"rating"`
		Featured    bool
		PublishedAt time.Time
		CTA         string
		Hero        *Image
		Photos      Gallery
		PhotosID    int64 `edgecms:"photos"`
		Category    *testCategory
		CategoryID  int64
		Author      *testCategory // an unexpanded reference
		AuthorLink  Link          `edgecms:"author"`
		Related     Link
		Tags        []testTag
		TagIDs      []int64 `edgecms:"tags_ValueField"`
		Subtitle    *string
		EmptyNumber *int
		Missing     string
		Ignored     string `edgecms:"-"`
		unexported  string
	}
)

func fixtureItem(t *testing.T, name string) *Item {
	t.Helper()
	var it Item
	if err := json.Unmarshal(fixture(t, name), &it); err != nil {
		t.Fatal(err)
	}
	return &it
}

func TestDecodeItem(t *testing.T) {
	it := fixtureItem(t, "item.json")
	got := testPost{Ignored: "kept", unexported: "kept", Missing: "kept"}
	if err := it.Decode(&got); err != nil {
		t.Fatal(err)
	}
	modified := time.Date(2024, 3, 5, 14, 26, 1, 177e6, time.UTC)
	want := testPost{
		ContentID: 42,
		Properties: Properties{State: StatePublished, Modified: modified, ModifiedRaw: "2024-03-05T14:26:01.177",
			VersionID: 318, ReferenceName: "posts", DefinitionName: "Post", ItemOrder: 3},
		Modified:    modified,
		Version:     318,
		Title:       "Hello, edge",
		Body:        "<p>First <strong>post</strong></p>",
		Minutes:     7,
		Rating:      4.5,
		Featured:    true,
		PublishedAt: time.Date(2024, 3, 1, 8, 30, 0, 0, time.UTC),
		CTA:         `<a href="/about" target="_self">About us</a>`,
		Hero: &Image{Label: "A lighthouse", URL: "https://cdn.example.com/media/lighthouse.jpg", Filesize: 183042,
			PixelHeight: "800", PixelWidth: "1200", Height: 800, Width: 1200},
		Photos:     Gallery{GalleryID: 9},
		PhotosID:   9,
		Category:   &testCategory{ContentID: 7, Name: "News"},
		CategoryID: 7,
		Author:     &testCategory{ContentID: 15},
		AuthorLink: Link{ContentID: 15},
		Related:    Link{ReferenceName: "posts", FullList: true},
		Tags:       []testTag{{ContentID: 31}, {ContentID: 30}, {ContentID: 32}},
		TagIDs:     []int64{31, 30, 32},
		Missing:    "kept",
		Ignored:    "kept",
		unexported: "kept",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode(item.json) =\n%+v\nwant\n%+v", got, want)
	}
}

func TestDecodeExpanded(t *testing.T) {
	it := fixtureItem(t, "item_expanded.json")
	var got struct {
		Category   testCategory // an array of one item
		CategoryID string       // the companion as sent
		Tags       []*testTag
		TagLink    Link    `edgecms:"tags"`
		TagIDs     []int64 `edgecms:"tags"`
		Nothing    []testTag
		NothingOne *testTag `edgecms:"nothing"`
		SEO        json.RawMessage
		Fields     Fields
	}
	if err := it.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Category != (testCategory{ContentID: 7, Name: "News"}) || got.CategoryID != "7" {
		t.Errorf("Category = %+v, %q", got.Category, got.CategoryID)
	}
	if len(got.Tags) != 2 || *got.Tags[0] != (testTag{31, "go"}) || *got.Tags[1] != (testTag{30, "cms"}) {
		t.Errorf("Tags = %+v, want 31:go, 30:cms in the order sent", got.Tags)
	}
	if want := (Link{ReferenceName: "tags", SortIDs: []int64{31, 30}}); !reflect.DeepEqual(got.TagLink, want) {
		t.Errorf("TagLink = %+v, want %+v", got.TagLink, want)
	}
	if !reflect.DeepEqual(got.TagIDs, []int64{31, 30}) {
		t.Errorf("TagIDs = %v", got.TagIDs)
	}
	if got.Nothing == nil || len(got.Nothing) != 0 || got.NothingOne != nil {
		t.Errorf("Nothing = %#v, NothingOne = %v; want an empty list and nil", got.Nothing, got.NothingOne)
	}
	if string(got.SEO) != `{"metaDescription": "An expanded post"}` {
		t.Errorf("SEO = %s", got.SEO)
	}
	if title, _ := got.Fields.String("title"); title != "Expanded" || len(got.Fields) != 5 {
		t.Errorf("Fields = %v", got.Fields)
	}
}

// decodeField decodes the JSON value raw of a field "f" into a T.
func decodeField[T any](raw string) (any, error) {
	it := Item{ContentID: 1, Fields: Fields{"f": json.RawMessage(raw)}}
	var v struct {
		F T `edgecms:"f"`
	}
	err := it.Decode(&v)
	return v.F, err
}

func TestDecodeValues(t *testing.T) {
	type (
		withID    struct{ ContentID, N int64 }
		withoutID struct{ Name string }
	)
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	const (
		item    = `{"contentID": 5, "properties": {"state": 2}, "fields": {"n": "12", "name": "x"}}`
		ref     = `{"contentid": 15}`
		listRef = `{"referencename": "tags", "fulllist": false, "sortids": "3,1"}`
		whole   = `{"referencename": "tags", "fulllist": true}`
	)
	tests := []struct {
		name    string
		decode  func(string) (any, error)
		raw     string
		want    any
		wantErr error // matched with errors.Is; errAny for any error
	}{
		{"int from a v1 string", decodeField[int], `"42"`, 42, nil},
		{"int from a number", decodeField[int], `42`, 42, nil},
		{"int from a padded string", decodeField[int], `" 42 "`, 42, nil},
		{"int from an empty string", decodeField[int], `""`, 0, nil},
		{"int from null", decodeField[int], `null`, 0, nil},
		{"int from a decimal", decodeField[int], `"4.5"`, 0, errAny},
		{"int from text", decodeField[int], `"seven"`, 0, errAny},
		{"int8 out of range", decodeField[int8], `"300"`, int8(0), errAny},
		{"uint from a negative", decodeField[uint], `"-1"`, uint(0), errAny},
		{"uint16", decodeField[uint16], `"65535"`, uint16(65535), nil},
		{"float from a v1 string", decodeField[float64], `"4.5"`, 4.5, nil},
		{"float32 from a number", decodeField[float32], `4.5`, float32(4.5), nil},
		{"float from text", decodeField[float64], `"much"`, 0.0, errAny},
		{"bool from a v1 string", decodeField[bool], `"true"`, true, nil},
		{"bool false", decodeField[bool], `"false"`, false, nil},
		{"bool from JSON", decodeField[bool], `true`, true, nil},
		{"bool from text", decodeField[bool], `"yes"`, false, errAny},
		{"date with a zone", decodeField[time.Time], `"2024-03-01T09:30:00+01:00"`, time.Date(2024, 3, 1, 8, 30, 0, 0, time.UTC), nil},
		{"date without a zone", decodeField[time.Time], `"2019-08-01T14:26:01.177"`, time.Date(2019, 8, 1, 14, 26, 1, 177e6, time.UTC), nil},
		{"date from text", decodeField[time.Time], `"yesterday"`, time.Time{}, errAny},
		{"date from a number", decodeField[time.Time], `20240301`, time.Time{}, errAny},
		{"string", decodeField[string], `"x"`, "x", nil},
		{"empty string", decodeField[string], `""`, "", nil},
		{"string with spaces and escapes", decodeField[string], `" <p>\"a\"</p>\n"`, " <p>\"a\"</p>\n", nil},
		{"string with spaces", decodeField[string], `"  a "`, "  a ", nil},
		{"string from a number", decodeField[string], `5`, "5", nil},
		{"string from an object", decodeField[string], `{"a": 1}`, "", errAny},
		{"pointer to string", decodeField[*string], `"x"`, str("x"), nil},
		{"pointer to int from an empty string", decodeField[*int], `""`, (*int)(nil), nil},
		{"pointer to int", decodeField[*int], `"7"`, num(7), nil},
		{"ids from a companion", decodeField[[]int64], `"31, 30,32"`, []int64{31, 30, 32}, nil},
		{"ids from an empty companion", decodeField[[]int64], `""`, []int64(nil), nil},
		{"ids from a bad companion", decodeField[[]int64], `"1,x"`, []int64(nil), errAny},
		{"ids from an array", decodeField[[]int], `[1, "2"]`, []int{1, 2}, nil},
		{"ids from a list reference", decodeField[[]int64], listRef, []int64{3, 1}, nil},
		{"ids from a whole-list reference", decodeField[[]int64], whole, []int64(nil), ErrNotExpanded},
		{"id from a reference", decodeField[int64], ref, int64(15), nil},
		{"id from an item", decodeField[int64], item, int64(5), nil},
		{"id from an array of one item", decodeField[int64], `[` + item + `]`, int64(5), nil},
		{"id from a gallery", decodeField[int64], `{"galleryid": 9}`, int64(9), nil},
		{"id from a list reference", decodeField[int64], listRef, int64(0), errAny},
		{"id from an image", decodeField[int64], `{"url": "/a.png"}`, int64(0), errAny},
		{"item", decodeField[withID], item, withID{5, 12}, nil},
		{"item without an id field", decodeField[withoutID], item, withoutID{"x"}, nil},
		{"reference", decodeField[withID], ref, withID{ContentID: 15}, nil},
		{"reference without an id field", decodeField[withoutID], ref, withoutID{}, ErrNotExpanded},
		{"list reference into a struct", decodeField[withID], listRef, withID{}, ErrNotExpanded},
		{"no item", decodeField[*withID], `[]`, (*withID)(nil), nil},
		{"two items into a struct", decodeField[withID], `[` + item + `,` + item + `]`, withID{}, errAny},
		{"text into a struct", decodeField[withID], `"x"`, withID{}, errAny},
		{"items from a reference list", decodeField[[]withID], listRef, []withID{{ContentID: 3}, {ContentID: 1}}, nil},
		{"items from a whole list", decodeField[[]withID], whole, []withID(nil), ErrNotExpanded},
		{"items from one item", decodeField[[]withID], item, []withID{{5, 12}}, nil},
		{"items from none", decodeField[[]withID], `[]`, []withID{}, nil},
		{"items, one of them bad", decodeField[[]withID], `[` + item + `, {"contentID": 6, "fields": {"n": "x"}}]`, []withID(nil), errAny},
		{"items from text", decodeField[[]withID], `"x"`, []withID(nil), errAny},
		{"strings from text", decodeField[[]string], `"a,b"`, []string(nil), errAny},
		{"link from a reference", decodeField[Link], ref, Link{ContentID: 15}, nil},
		{"link from a list reference", decodeField[Link], listRef, Link{ReferenceName: "tags", SortIDs: []int64{3, 1}}, nil},
		{"link from an item", decodeField[Link], item, Link{ContentID: 5}, nil},
		{"link from text", decodeField[Link], `"x"`, Link{}, errAny},
		{"image", decodeField[Image], `{"label": "A", "url": "/a.png", "height": 2, "width": 3}`, Image{Label: "A", URL: "/a.png", Height: 2, Width: 3}, nil},
		{"image with a bad width", decodeField[Image], `{"url": "/a.png", "width": "wide"}`, Image{}, errAny},
		{"gallery", decodeField[*Gallery], `{"galleryid": 9}`, &Gallery{GalleryID: 9}, nil},
		{"raw JSON", decodeField[json.RawMessage], `{"a": [1]}`, json.RawMessage(`{"a": [1]}`), nil},
		{"map", decodeField[map[string]int], `{"a": 1}`, map[string]int{"a": 1}, nil},
		{"any", decodeField[any], `[1]`, []any{1.0}, nil},
		{"text unmarshaler", decodeField[netip.Addr], `"127.0.0.1"`, netip.MustParseAddr("127.0.0.1"), nil},
		{"text unmarshaler, bad text", decodeField[netip.Addr], `"home"`, netip.Addr{}, errAny},
		{"text unmarshaler from a number", decodeField[netip.Addr], `7`, netip.Addr{}, errAny},
	}
	for _, tt := range tests {
		got, err := tt.decode(tt.raw)
		switch {
		case tt.wantErr == errAny && err == nil:
			t.Errorf("%s: decoding %s = %#v, want an error", tt.name, tt.raw, got)
		case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
			t.Errorf("%s: decoding %s: error %v, want %v", tt.name, tt.raw, err, tt.wantErr)
		case tt.wantErr == nil && err != nil:
			t.Errorf("%s: decoding %s: %v", tt.name, tt.raw, err)
		case tt.wantErr == nil && !reflect.DeepEqual(got, tt.want):
			t.Errorf("%s: decoding %s = %#v, want %#v", tt.name, tt.raw, got, tt.want)
		}
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Errorf("%s: error %v is not a *DecodeError", tt.name, err)
		}
	}
}

func TestDecodeError(t *testing.T) {
	type tag struct {
		Rank int
	}
	var v struct {
		Minutes int `edgecms:"readingMinutes"`
		Author  struct {
			ContentID int64
			Age       uint8
		}
		Tags []tag
	}
	tests := []struct {
		fields  string
		path    string
		value   string
		goField string
		goType  string
		text    string
	}{
		{`{"readingMinutes": "4.5"}`, "readingMinutes", `"4.5"`, "Minutes", "int",
			`edgecms: item 42: field "readingMinutes" = "4.5" does not fit Minutes (int): not a whole number`},
		{`{"author": {"contentID": 3, "fields": {"age": "300"}}}`, "author.age", `"300"`, "Age", "uint8",
			`edgecms: item 42: field "author.age" = "300" does not fit Age (uint8): out of range for uint8`},
		{`{"tags": [{"contentID": 3, "fields": {"rank": "1"}}, {"contentID": 4, "fields": {"rank": "first"}}]}`, "tags[1].rank", `"first"`, "tag.Rank", "int", ""},
		{`{"readingMinutes": "` + strings.Repeat("9", 100) + `"}`, "readingMinutes", `"` + strings.Repeat("9", 79) + `…`, "Minutes", "int", ""},
	}
	for _, tt := range tests {
		it := Item{ContentID: 42}
		if err := json.Unmarshal([]byte(tt.fields), &it.Fields); err != nil {
			t.Fatal(err)
		}
		err := it.Decode(&v)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("Decode(%s) = %v, want a *DecodeError", tt.fields, err)
			continue
		}
		if de.ContentID != 42 || de.Path != tt.path || de.Value != tt.value || de.GoField != tt.goField || de.GoType.String() != tt.goType {
			t.Errorf("Decode(%s) = %+v, want path %q, value %s, Go field %s (%s)", tt.fields, de, tt.path, tt.value, tt.goField, tt.goType)
		}
		if tt.text != "" && err.Error() != tt.text {
			t.Errorf("Decode(%s) error reads\n%s\nwant\n%s", tt.fields, err, tt.text)
		}
	}
}

func TestDecodeMembers(t *testing.T) {
	type Base struct {
		ContentID int64
		Kind      string `edgecms:"properties.definitionName"`
	}
	type post struct {
		Base
		Item                                  // every member of the item too
		State      State                      `edgecms:"properties.state"`
		Order      *int                       `edgecms:"PROPERTIES.itemOrder"`
		ModRaw     string                     `edgecms:"properties.modified"`
		Field      string                     `edgecms:"fields.contentID"` // a content field named like a member
		Seo        map[string]string          `edgecms:"seo"`
		AllFields  map[string]json.RawMessage `edgecms:"fields"`
		properties string
	}
	it := Item{
		ContentID:  42,
		Properties: Properties{State: StateStaging, ModifiedRaw: "2024-03-05T14:26:01", VersionID: 3, DefinitionName: "Post", ItemOrder: 2},
		Fields:     Fields{"contentID": json.RawMessage(`"a field"`), "title": json.RawMessage(`"T"`)},
		SEO:        json.RawMessage(`{"metaDescription": "d"}`),
	}
	var got post
	if err := it.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Base != (Base{42, "Post"}) || got.State != StateStaging || got.Order == nil || *got.Order != 2 ||
		got.ModRaw != "2024-03-05T14:26:01" || got.Field != "a field" || got.Seo["metaDescription"] != "d" ||
		string(got.AllFields["title"]) != `"T"` {
		t.Errorf("Decode = %+v", got)
	}
	if got.Item.ContentID != 42 || got.Item.Properties.VersionID != 3 || got.Item.Properties.Modified.IsZero() ||
		string(got.Item.SEO) != string(it.SEO) || len(got.Item.Fields) != 2 {
		t.Errorf("embedded Item = %+v, want the whole item", got.Item)
	}

	// A reduced item (written around its own position) has no properties.
	var reduced Item
	json.Unmarshal([]byte(`{"contentID": 4, "properties": {}, "fields": {}, "seo": null}`), &reduced)
	var r post
	if err := reduced.Decode(&r); err != nil || r.Base.ContentID != 4 || r.State != 0 || r.Order != nil || r.Kind != "" {
		t.Errorf("Decode(reduced) = %+v, %v", r, err)
	}
}

func TestDecodeRefusesTargets(t *testing.T) {
	it := &Item{ContentID: 1, Fields: Fields{"title": json.RawMessage(`"x"`)}}
	var s struct{ Title string }
	var n int
	var nilPtr *struct{ Title string }
	tests := []struct {
		name string
		v    any
	}{
		{"a struct, not a pointer", s},
		{"a nil pointer", nilPtr},
		{"a pointer to an int", &n},
		{"nil", nil},
		{"a tag option", &struct {
			Title string `edgecms:"title,omitempty"`
		}{}},
		{"an unknown property", &struct {
			Title string `edgecms:"properties.title"`
		}{}},
		{"a dotted path", &struct {
			Title string `edgecms:"author.title"`
		}{}},
		{"a channel field, absent from the item", &struct{ Events chan int }{}},
		{"an array field", &struct{ Title [4]byte }{}},
		{"a function in a slice", &struct{ Title []func() }{}},
	}
	for _, tt := range tests {
		if err := it.Decode(tt.v); err == nil {
			t.Errorf("Decode(%s) = nil error", tt.name)
		}
	}
	// A linked struct of a type that cannot be filled fails when reached.
	type bad struct {
		ContentID int64
		C         chan int
	}
	var v struct{ Author bad }
	it.Fields["author"] = json.RawMessage(`{"contentid": 3}`)
	if err := it.Decode(&v); err == nil || !strings.Contains(err.Error(), "chan int") {
		t.Errorf("Decode into a linked struct with a channel = %v", err)
	}
}

func TestGetItem(t *testing.T) {
	c, rec, _ := serve(t, Options{}, jsonBody(fixture(t, "item.json")))
	post, err := GetItem[testPost](context.Background(), c, "en-us", 42, ItemOptions{Depth: new(2)})
	if err != nil {
		t.Fatal(err)
	}
	if post.Title != "Hello, edge" || post.Category == nil || post.Category.Name != "News" {
		t.Errorf("GetItem = %+v", post)
	}
	if got := rec.last(t).URL.String(); got != "/g1/fetch/en-us/item/42?contentLinkDepth=2" {
		t.Errorf("GetItem asked for %s", got)
	}

	c, _, _ = serve(t, Options{}, jsonBody([]byte(`{"contentID": 42, "fields": {"readingMinutes": "many"}}`)))
	if post, err := GetItem[testPost](context.Background(), c, "en-us", 42, ItemOptions{}); post != nil || err == nil {
		t.Errorf("GetItem of a bad value = %v, %v; want nil and the error", post, err)
	}

	c, _, _ = serve(t, Options{MaxRetries: -1}, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) })
	if post, err := GetItem[testPost](context.Background(), c, "en-us", 42, ItemOptions{}); post != nil || !IsNotFound(err) {
		t.Errorf("GetItem of a missing item = %v, %v; want nil and a 404", post, err)
	}
}

func TestGetList(t *testing.T) {
	type numbered struct {
		ContentID int64
		N         int
	}
	c, rec, _ := serve(t, Options{}, listServer(7, 250))
	page, err := GetList[numbered](context.Background(), c, "en-us", "posts", ListOptions{Take: 3, Skip: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []numbered{{2, 2}, {3, 3}, {4, 4}}; page.TotalCount != 7 || !reflect.DeepEqual(page.Items, want) {
		t.Errorf("GetList = %+v, want %v of 7", page, want)
	}
	if q := rec.last(t).URL.Query(); q.Get("take") != "3" || q.Get("skip") != "1" {
		t.Errorf("GetList asked for %v", q)
	}
	all, err := GetAllItems[numbered](context.Background(), c, "en-us", "posts", ListOptions{Take: 2})
	if err != nil || len(all) != 7 || all[6] != (numbered{7, 7}) {
		t.Errorf("GetAllItems = %v, %v", all, err)
	}

	c, _, _ = serve(t, Options{}, jsonBody([]byte(`{"items": [{"contentID": 1, "fields": {"n": "1"}}, {"contentID": 2, "fields": {"n": "two"}}], "totalCount": 2}`)))
	_, err = GetList[numbered](context.Background(), c, "en-us", "posts", ListOptions{})
	var de *DecodeError
	if !errors.As(err, &de) || de.ContentID != 2 || de.Path != "n" {
		t.Errorf("GetList with a bad item = %v, want a *DecodeError about item 2", err)
	}
	if _, err := GetAllItems[numbered](context.Background(), c, "en-us", "posts", ListOptions{}); !errors.As(err, &de) {
		t.Errorf("GetAllItems with a bad item = %v, want a *DecodeError", err)
	}
}

// BenchmarkDecode decodes the item fixture (a post with an expanded
// category, references, an image and a gallery) into testPost, beside the
// same values read with the Fields accessors.
func BenchmarkDecode(b *testing.B) {
	var it Item
	if err := json.Unmarshal(fixture(b, "item.json"), &it); err != nil {
		b.Fatal(err)
	}
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p testPost
			if err := it.Decode(&p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("accessors", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f := it.Fields
			f.String("title")
			f.String("body")
			f.Int("readingMinutes")
			f.Float("rating")
			f.Bool("featured")
			f.Time("publishedAt")
			f.String("cta")
			f.Image("hero")
			f.GalleryID("photos")
			f.Item("category")
			f.Int("categoryID")
			f.Link("author")
			f.Link("related")
			f.Link("tags")
		}
	})
}
