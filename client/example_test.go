package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/edgecms/edgecms/client"
)

// demoServer stands in for an edgecms instance "demo" with a container of
// five posts, one item, a sitemap and a sync feed.
func demoServer() *httptest.Server {
	mux := http.NewServeMux()
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("APIKey") != "live.key" {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"type":"/problems/unauthorized","title":"Unauthorized","status":401,"detail":"unknown API key"}`)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("GET /demo/fetch/en-us/item/42", answer(`{
		"contentID": 42,
		"properties": {"state": 2, "modified": "2024-03-05T14:26:01.177", "versionID": 318,
			"referenceName": "posts", "definitionName": "Post", "itemOrder": 3},
		"fields": {
			"title": "Hello, edge",
			"readingMinutes": "7",
			"category": {"contentID": 7, "properties": {"state": 2, "modified": "2024-02-01T08:00:00",
				"versionID": 2, "referenceName": "categories", "definitionName": "Category", "itemOrder": 1},
				"fields": {"name": "News"}, "seo": null},
			"categoryID": "7",
			"tags": {"referencename": "tags", "sortids": "31,30"}
		},
		"seo": null}`))
	mux.HandleFunc("GET /demo/fetch/en-us/item/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"type":"/problems/not-found","title":"Not found","status":404,"detail":"item %s is not published in en-us"}`, r.PathValue("id"))
	})
	mux.HandleFunc("GET /demo/fetch/en-us/list/posts", func(w http.ResponseWriter, r *http.Request) {
		skip, _ := strconv.Atoi(r.URL.Query().Get("skip"))
		take, _ := strconv.Atoi(r.URL.Query().Get("take"))
		body := `{"items": [`
		for id := skip + 1; id <= 5 && id <= skip+take; id++ {
			if id > skip+1 {
				body += ","
			}
			body += fmt.Sprintf(`{"contentID": %d, "properties": {"state": 2, "versionID": 1, "referenceName": "posts", "definitionName": "Post", "itemOrder": %d}, "fields": {"title": "Post %d"}, "seo": null}`, id, id, id)
		}
		answer(body+`], "totalCount": 5}`)(w, r)
	})
	mux.HandleFunc("GET /demo/fetch/en-us/sitemap/flat/website", answer(`{
		"/home": {"title": "Home", "name": "home", "pageID": 2, "menuText": "Home", "visible": {"menu": true, "sitemap": true}, "path": "/home", "redirect": null, "isFolder": false},
		"/blog": {"title": "Blog", "name": "blog", "pageID": 3, "menuText": "Blog", "visible": {"menu": true, "sitemap": true}, "path": "/blog", "redirect": null, "isFolder": true},
		"/blog/hello-edge": {"title": "Hello, edge", "name": "hello-edge", "pageID": 6, "menuText": "Hello, edge", "visible": {"menu": false, "sitemap": true}, "path": "/blog/hello-edge", "redirect": null, "isFolder": false, "contentID": 42},
		"/docs": {"title": "Docs", "name": "docs", "pageID": 8, "menuText": "Docs", "visible": {"menu": true, "sitemap": false}, "path": "/docs", "redirect": {"url": "https://docs.example.com/", "target": "_blank"}, "isFolder": false}
	}`))
	mux.HandleFunc("GET /demo/fetch/en-us/sync/items", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("syncToken") {
		case "0":
			answer(`{"syncToken": 10, "items": [
				{"contentID": 7, "properties": {"state": 2, "versionID": 2, "referenceName": "categories", "definitionName": "Category"},
					"fields": {"name": "News"}},
				{"contentID": 42, "properties": {"state": 2, "versionID": 318, "referenceName": "posts", "definitionName": "Post"},
					"fields": {"title": "Hello, edge", "readingMinutes": "7", "category": {"contentid": 7}, "categoryID": "7",
						"tags": {"referencename": "tags", "fulllist": false, "sortids": "31,30"}, "tags_ValueField": "31,30"}}]}`)(w, r)
		default:
			answer(`{"syncToken": 0, "items": [{"contentID": 40, "properties": {"state": 3, "versionID": 319, "referenceName": "posts", "definitionName": "Post"}, "fields": {}}]}`)(w, r)
		}
	})
	return httptest.NewServer(mux)
}

func Example() {
	srv := demoServer()
	defer srv.Close()

	c, err := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	post, err := c.Item(ctx, "en-us", 42, client.ItemOptions{})
	if err != nil {
		log.Fatal(err)
	}
	title, _ := post.Fields.String("title")
	minutes, _ := post.Fields.Int("readingMinutes")
	fmt.Printf("%q, %d min, %s, modified %s\n", title, minutes, post.Properties.State,
		post.Properties.Modified.Format(time.RFC3339Nano))

	// The category is expanded at the default depth; the tags list is a
	// reference to items of the "tags" container.
	category, err := post.Fields.Item("category")
	if err != nil {
		log.Fatal(err)
	}
	name, _ := category.Fields.String("name")
	fmt.Println("category:", name)

	if _, err := post.Fields.Items("tags"); errors.Is(err, client.ErrNotExpanded) {
		tags, _ := post.Fields.Link("tags")
		fmt.Println("tags:", tags.ReferenceName, tags.SortIDs)
	}

	// Failures are errors, never empty values.
	_, err = c.Item(ctx, "en-us", 99, client.ItemOptions{})
	fmt.Println("not found:", client.IsNotFound(err))
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Detail)
	}
	// Output:
	// "Hello, edge", 7 min, published, modified 2024-03-05T14:26:01.177Z
	// category: News
	// tags: tags [31 30]
	// not found: true
	// 404 item 99 is not published in en-us
}

func ExampleNew() {
	c, err := client.New("https://cdn.example.com", "a1b2c3d4", client.Options{
		FetchKey:   "defaultlive.0123",
		PreviewKey: "defaultpreview.4567",
		UserAgent:  "my-site/1.0",
		MaxRetries: 5,
		// Wait at most 30 s between attempts, even if the server asks for
		// longer in Retry-After.
		RetryWaitMax: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	preview := c.WithPreview(true) // reads working content with the preview key
	_ = preview
	// Output:
}

func ExampleClient_AllItems() {
	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})

	// Pages of two: three requests, with skip 0, 2 and 4.
	posts, err := c.AllItems(context.Background(), "en-us", "posts", client.ListOptions{Take: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range posts {
		title, _ := p.Fields.String("title")
		fmt.Println(p.ContentID, title)
	}
	// Output:
	// 1 Post 1
	// 2 Post 2
	// 3 Post 3
	// 4 Post 4
	// 5 Post 5
}

func ExampleClient_SitemapFlat() {
	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})

	sitemap, err := c.SitemapFlat(context.Background(), "en-us", "website")
	if err != nil {
		log.Fatal(err)
	}
	// Nodes come in sitemap order; a site routes the ones that are
	// neither folders nor redirects.
	for _, n := range sitemap.Nodes {
		if n.Routable() {
			fmt.Println(n.Path, n.PageID, n.ContentID)
		}
	}
	if n, ok := sitemap.Node("/docs"); ok {
		fmt.Println("/docs redirects to", n.Redirect.URL)
	}
	// Output:
	// /home 2 0
	// /blog/hello-edge 6 42
	// /docs redirects to https://docs.example.com/
}

func ExampleClient_SyncItems() {
	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})
	ctx := context.Background()

	// Read every change since the beginning, oldest first, while the token
	// grows.
	for token := int64(0); ; {
		batch, err := c.SyncItems(ctx, "en-us", token, 0)
		if err != nil {
			log.Fatal(err)
		}
		for _, it := range batch.Items {
			fmt.Println(it.ContentID, it.Properties.State)
		}
		if batch.SyncToken <= token {
			break
		}
		token = batch.SyncToken
	}
	// Output:
	// 7 published
	// 42 published
	// 40 deleted
}

func ExampleIsUnauthorized() {
	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "wrong"})

	_, err := c.SitemapFlat(context.Background(), "en-us", "website")
	fmt.Println(client.IsUnauthorized(err))
	// Output:
	// true
}

func ExampleItem_Decode() {
	type Category struct {
		ContentID int64
		Name      string // the field "name" (or "Name")
	}
	type Post struct {
		ContentID int64     // the item's contentID
		Modified  time.Time `edgecms:"properties.modified"`
		Title     string
		Minutes   int       `edgecms:"readingMinutes"` // sent as "7"
		Category  *Category // a linked item
		TagIDs    []int64   `edgecms:"tags"` // a linked list, expanded or not
	}

	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})

	it, err := c.Item(context.Background(), "en-us", 42, client.ItemOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var post Post
	if err := it.Decode(&post); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d %q, %d min, in %s, tags %v, modified %s\n", post.ContentID, post.Title, post.Minutes,
		post.Category.Name, post.TagIDs, post.Modified.Format(time.DateOnly))
	// Output:
	// 42 "Hello, edge", 7 min, in News, tags [31 30], modified 2024-03-05
}

func ExampleGetItem() {
	type Post struct {
		Title    string
		Category struct{ Name string }
	}

	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})

	post, err := client.GetItem[Post](context.Background(), c, "en-us", 42, client.ItemOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(post.Title, "/", post.Category.Name)
	// Output:
	// Hello, edge / News
}

func ExampleGetAllItems() {
	type Post struct {
		ContentID int64
		Title     string
	}

	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})

	posts, err := client.GetAllItems[Post](context.Background(), c, "en-us", "posts", client.ListOptions{Take: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range posts {
		fmt.Println(p.ContentID, p.Title)
	}
	// Output:
	// 1 Post 1
	// 2 Post 2
	// 3 Post 3
	// 4 Post 4
	// 5 Post 5
}

// Sync batches mix the items of every container, unexpanded: decode each
// by its model. A linked item comes as a reference, which decodes into a
// struct holding only its contentID.
func ExampleItem_Decode_sync() {
	type Category struct {
		ContentID int64
		Name      string
	}
	type Post struct {
		ContentID int64
		Title     string
		Category  Category
		TagIDs    []int64 `edgecms:"tags_ValueField"`
	}

	srv := demoServer()
	defer srv.Close()
	c, _ := client.New(srv.URL, "demo", client.Options{FetchKey: "live.key"})

	batch, err := c.SyncItems(context.Background(), "en-us", 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range batch.Items {
		switch it.Properties.DefinitionName {
		case "Category":
			var cat Category
			if err := it.Decode(&cat); err != nil {
				log.Fatal(err)
			}
			fmt.Printf("category %d: %s\n", cat.ContentID, cat.Name)
		case "Post":
			var post Post
			if err := it.Decode(&post); err != nil {
				log.Fatal(err)
			}
			fmt.Printf("post %d: %s, category %d (name %q), tags %v\n", post.ContentID, post.Title,
				post.Category.ContentID, post.Category.Name, post.TagIDs)
		}
	}
	// Output:
	// category 7: News
	// post 42: Hello, edge, category 7 (name ""), tags [31 30]
}

// A value that does not fit its Go field is a *DecodeError naming both.
func ExampleDecodeError() {
	type Post struct {
		Minutes int `edgecms:"readingMinutes"`
	}

	it := client.Item{ContentID: 42, Fields: client.Fields{"readingMinutes": json.RawMessage(`"7.5"`)}}
	var post Post
	err := it.Decode(&post)
	fmt.Println(err)
	var de *client.DecodeError
	if errors.As(err, &de) {
		fmt.Println(de.Path, de.Value)
	}
	// Output:
	// edgecms: item 42: field "readingMinutes" = "7.5" does not fit Post.Minutes (int): not a whole number
	// readingMinutes "7.5"
}
