package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"
)

func TestItemDecoding(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "item.json")))
	it, err := c.Item(context.Background(), "en-us", 42, ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if it.ContentID != 42 {
		t.Errorf("ContentID = %d, want 42", it.ContentID)
	}
	want := Properties{
		State:          StatePublished,
		Modified:       time.Date(2024, 3, 5, 14, 26, 1, 177e6, time.UTC),
		ModifiedRaw:    "2024-03-05T14:26:01.177",
		VersionID:      318,
		ReferenceName:  "posts",
		DefinitionName: "Post",
		ItemOrder:      3,
	}
	if !reflect.DeepEqual(it.Properties, want) {
		t.Errorf("Properties = %+v, want %+v", it.Properties, want)
	}
	if string(it.SEO) != "null" {
		t.Errorf("SEO = %s, want null", it.SEO)
	}
	if it.Properties.State.String() != "published" {
		t.Errorf("State.String() = %q", it.Properties.State.String())
	}
}

func TestFieldScalars(t *testing.T) {
	var it Item
	if err := json.Unmarshal(fixture(t, "item.json"), &it); err != nil {
		t.Fatal(err)
	}
	f := it.Fields
	str := func(name string) (any, error) { return f.String(name) }
	num := func(name string) (any, error) { return f.Int(name) }
	flt := func(name string) (any, error) { return f.Float(name) }
	bol := func(name string) (any, error) { return f.Bool(name) }
	tim := func(name string) (any, error) { return f.Time(name) }
	tests := []struct {
		get     func(string) (any, error)
		name    string
		want    any
		wantErr error // matched with errors.Is; errAny for any error
	}{
		{str, "title", "Hello, edge", nil},
		{str, "Title", "Hello, edge", nil}, // case-insensitive fallback
		{str, "body", "<p>First <strong>post</strong></p>", nil},
		{str, "cta", `<a href="/about" target="_self">About us</a>`, nil},
		{str, "categoryID", "7", nil},
		{str, "tags_ValueField", "31,30,32", nil},
		{str, "subtitle", "", ErrNoField},
		{str, "missing", "", ErrNoField},
		{str, "hero", "", errAny},
		{num, "readingMinutes", int64(7), nil},
		{num, "categoryID", int64(7), nil},
		{num, "emptyNumber", int64(0), ErrNoField},
		{num, "title", int64(0), errAny},
		{flt, "rating", 4.5, nil},
		{bol, "featured", true, nil},
		{bol, "title", false, errAny},
		{tim, "publishedAt", time.Date(2024, 3, 1, 8, 30, 0, 0, time.UTC), nil},
		{tim, "title", time.Time{}, errAny},
	}
	for _, tt := range tests {
		got, err := tt.get(tt.name)
		switch {
		case tt.wantErr == errAny && err == nil:
			t.Errorf("field %q = %v, want an error", tt.name, got)
		case tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
			t.Errorf("field %q error = %v, want %v", tt.name, err, tt.wantErr)
		case tt.wantErr == nil && !reflect.DeepEqual(got, tt.want):
			t.Errorf("field %q = %#v, want %#v", tt.name, got, tt.want)
		}
	}
	if !f.Has("title") || f.Has("subtitle") || f.Has("missing") {
		t.Error("Has disagrees with the fixture")
	}
}

// errAny stands for "some error" in tables.
var errAny = errors.New("any error")

func TestFieldMedia(t *testing.T) {
	var it Item
	if err := json.Unmarshal(fixture(t, "item.json"), &it); err != nil {
		t.Fatal(err)
	}
	img, err := it.Fields.Image("hero")
	if err != nil {
		t.Fatal(err)
	}
	want := Image{Label: "A lighthouse", URL: "https://cdn.example.com/media/lighthouse.jpg", Filesize: 183042,
		PixelHeight: "800", PixelWidth: "1200", Height: 800, Width: 1200}
	if *img != want {
		t.Errorf("Image = %+v, want %+v", *img, want)
	}
	if _, err := it.Fields.Image("title"); err == nil {
		t.Error("Image(title) = nil error")
	}
	if _, err := it.Fields.Image("subtitle"); !errors.Is(err, ErrNoField) {
		t.Errorf("Image(subtitle) = %v, want ErrNoField", err)
	}
	id, err := it.Fields.GalleryID("photos")
	if err != nil || id != 9 {
		t.Errorf("GalleryID(photos) = %d, %v; want 9", id, err)
	}
	if _, err := it.Fields.GalleryID("hero"); err == nil {
		t.Error("GalleryID(hero) = nil error")
	}
}

func TestFieldLinks(t *testing.T) {
	var it Item
	if err := json.Unmarshal(fixture(t, "item.json"), &it); err != nil {
		t.Fatal(err)
	}
	f := it.Fields

	cat, err := f.Item("category")
	if err != nil {
		t.Fatal(err)
	}
	if cat.ContentID != 7 || cat.Properties.ReferenceName != "categories" {
		t.Errorf("Item(category) = %+v", cat)
	}
	if name, _ := cat.Fields.String("name"); name != "News" {
		t.Errorf("category name = %q", name)
	}
	if items, err := f.Items("category"); err != nil || len(items) != 1 || items[0].ContentID != 7 {
		t.Errorf("Items(category) = %v, %v; want the one item", items, err)
	}

	links := []struct {
		name string
		want Link
	}{
		{"author", Link{ContentID: 15}},
		{"related", Link{ReferenceName: "posts", FullList: true}},
		{"tags", Link{ReferenceName: "tags", SortIDs: []int64{31, 30, 32}}},
	}
	for _, tt := range links {
		got, err := f.Link(tt.name)
		if err != nil {
			t.Errorf("Link(%q) = %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("Link(%q) = %+v, want %+v", tt.name, *got, tt.want)
		}
		if _, err := f.Item(tt.name); !errors.Is(err, ErrNotExpanded) {
			t.Errorf("Item(%q) = %v, want ErrNotExpanded", tt.name, err)
		}
		if _, err := f.Items(tt.name); !errors.Is(err, ErrNotExpanded) {
			t.Errorf("Items(%q) = %v, want ErrNotExpanded", tt.name, err)
		}
	}
	if _, err := f.Link("category"); err == nil {
		t.Error("Link(category) on expanded content = nil error")
	}
	if _, err := f.Item("title"); err == nil {
		t.Error("Item(title) = nil error")
	}
}

func TestFieldLinksExpanded(t *testing.T) {
	var it Item
	if err := json.Unmarshal(fixture(t, "item_expanded.json"), &it); err != nil {
		t.Fatal(err)
	}
	f := it.Fields
	cat, err := f.Item("category") // an array of one
	if err != nil || cat.ContentID != 7 {
		t.Errorf("Item(category) = %v, %v; want item 7", cat, err)
	}
	tags, err := f.Items("tags")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tag := range tags {
		label, _ := tag.Fields.String("label")
		got = append(got, strconv.FormatInt(tag.ContentID, 10)+":"+label)
	}
	if want := []string{"31:go", "30:cms"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Items(tags) = %v, want %v (in the order sent)", got, want)
	}
	if _, err := f.Item("tags"); err == nil {
		t.Error("Item on a field of two items = nil error")
	}
	if items, err := f.Items("nothing"); err != nil || items == nil || len(items) != 0 {
		t.Errorf("Items(nothing) = %#v, %v; want an empty list", items, err)
	}
	if _, err := f.Item("nothing"); !errors.Is(err, ErrNoField) {
		t.Errorf("Item(nothing) = %v, want ErrNoField", err)
	}
	if string(it.SEO) != `{"metaDescription": "An expanded post"}` {
		t.Errorf("SEO = %s", it.SEO)
	}
}

func TestLinkSortIDs(t *testing.T) {
	tests := []struct {
		in   string
		want []int64
		err  bool
	}{
		{`{"referencename":"t","sortids":"3, 1,2"}`, []int64{3, 1, 2}, false},
		{`{"referencename":"t","sortids":[3,1,2]}`, []int64{3, 1, 2}, false},
		{`{"referencename":"t","sortids":""}`, nil, false},
		{`{"referencename":"t","sortids":null}`, nil, false},
		{`{"referencename":"t"}`, nil, false},
		{`{"referencename":"t","sortids":"3,x"}`, nil, true},
	}
	for _, tt := range tests {
		var l Link
		err := json.Unmarshal([]byte(tt.in), &l)
		if (err != nil) != tt.err {
			t.Errorf("Unmarshal(%s) error = %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if !tt.err && !reflect.DeepEqual(l.SortIDs, tt.want) {
			t.Errorf("Unmarshal(%s).SortIDs = %v, want %v", tt.in, l.SortIDs, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"2019-08-01T14:26:01.177", time.Date(2019, 8, 1, 14, 26, 1, 177e6, time.UTC), false},
		{"2019-08-01T14:26:01", time.Date(2019, 8, 1, 14, 26, 1, 0, time.UTC), false},
		{"2019-08-01T14:26:01.1234567", time.Date(2019, 8, 1, 14, 26, 1, 123456700, time.UTC), false},
		{"2019-08-01T14:26:01.5Z", time.Date(2019, 8, 1, 14, 26, 1, 5e8, time.UTC), false},
		{"2019-08-01T16:26:01+02:00", time.Date(2019, 8, 1, 14, 26, 1, 0, time.UTC), false},
		{"", time.Time{}, false},
		{"2019-08-01", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := parseTime(tt.in)
		if (err != nil) != tt.err || !got.Equal(tt.want) || (!got.IsZero() && got.Location() != time.UTC) {
			t.Errorf("parseTime(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestListDecoding(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody(fixture(t, "list.json")))
	l, err := c.List(context.Background(), "en-us", "tags", ListOptions{Take: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l.TotalCount != 5 || len(l.Items) != 2 {
		t.Fatalf("List = %d items of %d, want 2 of 5", len(l.Items), l.TotalCount)
	}
	if got := l.Items[1].Properties.Modified; !got.Equal(time.Date(2024, 1, 2, 0, 0, 0, 123456700, time.UTC)) {
		t.Errorf("seven-digit fraction parsed as %v", got)
	}
}

func TestEmptyList(t *testing.T) {
	c, _, _ := serve(t, Options{}, jsonBody([]byte(`{"items": [], "totalCount": 0}`)))
	l, err := c.List(context.Background(), "en-us", "empty", ListOptions{})
	if err != nil || l == nil || l.Items == nil || len(l.Items) != 0 || l.TotalCount != 0 {
		t.Errorf("List(empty) = %+v, %v; want an empty list", l, err)
	}
}

// listServer serves a container of n items (contentIDs 1..n) honouring take
// and skip, but never more than cap items a page.
func listServer(n, cap int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		take, _ := strconv.Atoi(q.Get("take"))
		skip, _ := strconv.Atoi(q.Get("skip"))
		if take == 0 {
			take = 10
		}
		take = min(take, cap)
		items := []Item{}
		for id := skip + 1; id <= n && id <= skip+take; id++ {
			items = append(items, Item{ContentID: int64(id), Fields: Fields{"n": json.RawMessage(strconv.Quote(strconv.Itoa(id)))}})
		}
		b, _ := json.Marshal(map[string]any{"items": items, "totalCount": n})
		w.Write(b)
	}
}

func TestAllItems(t *testing.T) {
	tests := []struct {
		name      string
		n, cap    int
		opts      ListOptions
		wantIDs   int // items 1..wantIDs, after the starting skip
		wantSkips []string
	}{
		{"empty container", 0, 250, ListOptions{}, 0, []string{""}},
		{"one page", 7, 250, ListOptions{}, 7, []string{""}},
		{"three pages", 7, 250, ListOptions{Take: 3}, 7, []string{"", "3", "6"}},
		{"exact pages", 6, 250, ListOptions{Take: 3}, 6, []string{"", "3"}},
		{"server caps the page size", 7, 2, ListOptions{Take: 3}, 7, []string{"", "2", "4", "6"}},
		{"from a skip", 7, 250, ListOptions{Take: 4, Skip: 2}, 7, []string{"2", "6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec, _ := serve(t, Options{}, listServer(tt.n, tt.cap))
			items, err := c.AllItems(context.Background(), "en-us", "posts", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, it := range items {
				ids = append(ids, it.ContentID)
			}
			var want []int64
			for id := tt.opts.Skip + 1; id <= tt.wantIDs; id++ {
				want = append(want, int64(id))
			}
			if items == nil || !reflect.DeepEqual(ids, want) {
				t.Errorf("AllItems = %v, want %v", ids, want)
			}
			var skips []string
			for _, r := range rec.requests() {
				skips = append(skips, r.URL.Query().Get("skip"))
				wantTake := strconv.Itoa(tt.opts.Take)
				if tt.opts.Take == 0 {
					wantTake = strconv.Itoa(MaxTake)
				}
				if got := r.URL.Query().Get("take"); got != wantTake {
					t.Errorf("take = %q, want %q", got, wantTake)
				}
			}
			if !reflect.DeepEqual(skips, tt.wantSkips) {
				t.Errorf("skips = %q, want %q", skips, tt.wantSkips)
			}
		})
	}
}

func TestAllItemsGuards(t *testing.T) {
	tests := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"empty pages forever", jsonBody([]byte(`{"items": [], "totalCount": 10}`))},
		{"the same page forever", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"items": [{"contentID": 1}, {"contentID": 2}], "totalCount": 1000}`)
		}},
		{"a short page then nothing", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("skip") == "" {
				fmt.Fprint(w, `{"items": [{"contentID": 1}], "totalCount": 3}`)
				return
			}
			fmt.Fprint(w, `{"items": [], "totalCount": 3}`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rec, _ := serve(t, Options{}, tt.h)
			items, err := c.AllItems(context.Background(), "en-us", "posts", ListOptions{})
			if !errors.Is(err, ErrBadResponse) || items != nil {
				t.Errorf("AllItems = %d items, %v; want nil and ErrBadResponse", len(items), err)
			}
			if n := len(rec.requests()); n > 2 {
				t.Errorf("%d requests before giving up, want at most 2", n)
			}
		})
	}
}

func TestAllItemsStopsOnError(t *testing.T) {
	c, _, _ := serve(t, Options{MaxRetries: -1}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("skip") == "" {
			listServer(5, 2)(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	items, err := c.AllItems(context.Background(), "en-us", "posts", ListOptions{})
	if StatusCode(err) != http.StatusServiceUnavailable || items != nil {
		t.Errorf("AllItems = %d items, %v; want nil and the 503", len(items), err)
	}
}
