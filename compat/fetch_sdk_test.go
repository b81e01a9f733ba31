package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// TestFetchSDK drives every @agility/content-fetch method of the item,
// list, page and sitemap endpoints, in both flavours and locales, and checks
// each result against the Fetch API answered directly and against what the
// management API stored.
func TestFetchSDK(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	locales := []string{"en-us", "fr-ca"}

	posts, err := s.store.Items(ctx, s.inst, "en-us", "posts", 250, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(posts.Items) < 3 {
		t.Fatalf("demo has %d posts, want at least 3", len(posts.Items))
	}
	// An unpublished edit: preview shows it, fetch still the published title.
	edited := posts.Items[0]
	published := map[string]content.Item{}
	for _, loc := range locales {
		it, err := s.store.Item(ctx, s.inst, loc, edited.ContentID)
		if err != nil {
			t.Fatal(err)
		}
		published[loc] = it
		if _, err := s.store.SaveItem(ctx, s.inst, loc, edited.ContentID, map[string]json.RawMessage{"Title": json.RawMessage(`"Draft: ` + loc + `"`)}); err != nil {
			t.Fatal(err)
		}
	}
	pages, err := s.store.Pages(ctx, s.inst, "en-us", "website")
	if err != nil {
		t.Fatal(err)
	}

	// Each check is one SDK call, the direct path it must equal (or ""), and
	// a function that checks it against the store.
	type check struct {
		call   sdkCall
		direct string
		verify func(t *testing.T, got any)
	}
	var checks []check
	key := map[string]string{"fetch": s.fetchKey, "preview": s.previewKey}
	for _, flavour := range []string{"fetch", "preview"} {
		for _, loc := range locales {
			for _, depth := range []int{0, 1, 2} {
				for _, expand := range []bool{false, true} {
					id := posts.Items[0].ContentID
					checks = append(checks, check{
						call:   sdkCall{flavour, "getContentItem", map[string]any{"contentID": id, "locale": loc, "contentLinkDepth": depth, "expandAllContentLinks": expand}},
						direct: fmt.Sprintf("/%s/%s/%s/item/%d?contentLinkDepth=%d&expandAllContentLinks=%t", s.inst.Guid, flavour, loc, id, depth, expand),
						verify: s.verifyItem(ctx, flavour, loc, id, published[loc]),
					})
				}
			}
			for _, depth := range []int{0, 1, 2} {
				checks = append(checks, check{
					call:   sdkCall{flavour, "getPage", map[string]any{"pageID": pages[0].PageID, "locale": loc, "contentLinkDepth": depth}},
					direct: fmt.Sprintf("/%s/%s/%s/page/%d?contentLinkDepth=%d&expandAllContentLinks=true", s.inst.Guid, flavour, loc, pages[0].PageID, depth),
				})
			}
			locPages, err := s.store.Pages(ctx, s.inst, loc, "website")
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range locPages {
				if p.PageType == content.PageFolder || p.PageType == content.PageDynamic {
					continue
				}
				want := p
				checks = append(checks, check{
					call: sdkCall{flavour, "getPageByPath", map[string]any{"pagePath": p.Path, "channelName": "website", "locale": loc}},
					verify: func(t *testing.T, got any) {
						page := dig(got, "page", "pageID")
						if page != float64(want.PageID) {
							t.Errorf("getPageByPath(%s) page.pageID = %v, want %d", want.Path, page, want.PageID)
						}
						if path := dig(got, "sitemapNode", "path"); path != want.Path {
							t.Errorf("getPageByPath(%s) sitemapNode.path = %v", want.Path, path)
						}
					},
				})
			}
			checks = append(checks,
				check{call: sdkCall{flavour, "getSitemapFlat", map[string]any{"channelName": "website", "locale": loc}},
					direct: fmt.Sprintf("/%s/%s/%s/sitemap/flat/website", s.inst.Guid, flavour, loc),
					verify: func(t *testing.T, got any) {
						m, _ := got.(map[string]any)
						for _, p := range locPages {
							if p.PageType != content.PageDynamic && m[p.Path] == nil {
								t.Errorf("flat sitemap (%s) has no node %s", loc, p.Path)
							}
						}
					}},
				check{call: sdkCall{flavour, "getSitemapNested", map[string]any{"channelName": "website", "locale": loc}},
					direct: fmt.Sprintf("/%s/%s/%s/sitemap/nested/website", s.inst.Guid, flavour, loc)},
			)
			// Lists: paging, sort and direction, filters.
			all, err := s.store.Items(ctx, s.inst, loc, "posts", 250, 0)
			if err != nil {
				t.Fatal(err)
			}
			title := func(it content.Item) string {
				if flavour == "fetch" && it.ContentID == edited.ContentID {
					it = published[loc]
				}
				return strings.ToLower(str(it.Fields["Title"]))
			}
			byTitle := append([]content.Item{}, all.Items...)
			sort.SliceStable(byTitle, func(i, j int) bool { return title(byTitle[i]) > title(byTitle[j]) })
			checks = append(checks,
				check{call: sdkCall{flavour, "getContentList", map[string]any{"referenceName": "posts", "locale": loc, "take": 2, "skip": 1}},
					verify: wantIDs(ids(all.Items[1:3]), len(all.Items))},
				check{call: sdkCall{flavour, "getContentList", map[string]any{"referenceName": "Posts", "locale": loc, "take": 250, "sort": "fields.Title", "direction": "desc"}},
					verify: wantIDs(ids(byTitle), len(all.Items))},
				check{call: sdkCall{flavour, "getContentList", map[string]any{"referenceName": "posts", "locale": loc,
					"filters": []map[string]any{{"property": "fields.Slug", "operator": "eq", "value": `"` + str(all.Items[0].Fields["Slug"]) + `"`},
						{"property": "contentID", "operator": "eq", "value": fmt.Sprint(all.Items[1].ContentID)}},
					"filtersLogicOperator": "OR"}},
					verify: wantIDs(ids(all.Items[:2]), 2)},
				check{call: sdkCall{flavour, "getContentList", map[string]any{"referenceName": "posts", "locale": loc, "take": 1, "skip": 0, "contentLinkDepth": 2, "expandAllContentLinks": true}},
					verify: wantIDs(ids(all.Items[:1]), len(all.Items))},
			)
		}
	}

	calls := make([]sdkCall, len(checks))
	for i, c := range checks {
		calls[i] = c.call
	}
	// Users point the SDK at https://host/{guid}; it sends the guid in a Guid header too.
	results := s.runSDK(t, s.base+"/"+s.inst.Guid, calls)
	for i, c := range checks {
		name := fmt.Sprintf("%s %s %v", c.call.Flavour, c.call.Method, c.call.Params)
		r := results[i]
		if !r.OK || r.Result == nil {
			t.Errorf("%s: SDK failed or answered undefined: %s", name, r.Error)
			continue
		}
		if c.direct != "" {
			status, want := s.get(t, key[c.call.Flavour], c.direct)
			if status != 200 {
				t.Errorf("%s: direct GET %s = %d", name, c.direct, status)
			} else if !reflect.DeepEqual(r.Result, want) {
				got, _ := json.Marshal(r.Result)
				w, _ := json.Marshal(want)
				t.Errorf("%s: SDK result differs from GET %s\n got %.300s\nwant %.300s", name, c.direct, got, w)
			}
		}
		if c.verify != nil {
			t.Run(name, func(t *testing.T) { c.verify(t, r.Result) })
		}
	}
}

// verifyItem checks an SDK item against the stored copy: the working copy
// for preview, the published one (as it was before the last edit) for fetch.
func (s *service) verifyItem(ctx context.Context, flavour, locale string, id int64, published content.Item) func(t *testing.T, got any) {
	return func(t *testing.T, got any) {
		it, err := s.store.Item(ctx, s.inst, locale, id)
		if err != nil {
			t.Fatal(err)
		}
		if flavour == "fetch" {
			it = published
		} else if !strings.HasPrefix(str(it.Fields["Title"]), "Draft: ") {
			t.Fatalf("working copy title %q was not edited", str(it.Fields["Title"]))
		}
		if dig(got, "contentID") != float64(id) {
			t.Errorf("contentID = %v, want %d", dig(got, "contentID"), id)
		}
		if title := dig(got, "fields", "Title"); title != str(it.Fields["Title"]) {
			t.Errorf("fields.Title = %v, want %q", title, str(it.Fields["Title"]))
		}
		if v := dig(got, "properties", "versionID"); v != float64(it.VersionID) {
			t.Errorf("properties.versionID = %v, want %d", v, it.VersionID)
		}
	}
}

func wantIDs(want []int64, total int) func(t *testing.T, got any) {
	return func(t *testing.T, got any) {
		items, _ := dig(got, "items").([]any)
		var have []int64
		for _, it := range items {
			have = append(have, int64(dig(it, "contentID").(float64)))
		}
		if !reflect.DeepEqual(have, want) {
			t.Errorf("items = %v, want %v", have, want)
		}
		if tc := dig(got, "totalCount"); tc != float64(total) {
			t.Errorf("totalCount = %v, want %d", tc, total)
		}
	}
}

func ids(items []content.Item) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.ContentID
	}
	return out
}

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// dig walks a decoded JSON value along object members.
func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}
