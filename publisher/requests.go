package publisher

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/edgecms/edgecms/fetch"
)

// The requests the publisher maintains for every instance, built as a
// client would send them and put through fetch.Parse, so that their keys
// are the canonical keys the edge and the origin compute:
//
//   - every published item: /{locale}/item/{id} (depth 1);
//   - every published page: /{locale}/page/{id} (depth 2) and the JS SDK's
//     variant with expandAllContentLinks=true;
//   - every path of every channel's sitemap: /{locale}/page/{channel}?path=
//     with depth 2 and expandAllContentLinks=true, as the SDK asks;
//   - the flat and nested sitemap of every channel;
//   - the first Config.ListPages list pages of every container for take
//     10 (skip 0, 10, ... below totalCount; skip 0 always).
//
// Other variants, deeper list pages included, are rendered by the origin
// on a miss and written back.

// listTake is the page size of the list pages the publisher maintains.
const listTake = fetch.DefaultTake

func parse(path, query string) (fetch.Request, error) {
	r, err := fetch.Parse(fetch.Input{Path: path, RawQuery: query})
	if err != nil {
		return fetch.Request{}, fmt.Errorf("request %s?%s: %w", path, query, err)
	}
	return r, nil
}

// mustParse parses a request the publisher built from names the content
// store validated; an error is a bug.
func mustParse(path, query string) fetch.Request {
	r, err := parse(path, query)
	if err != nil {
		panic(err)
	}
	return r
}

func base(guid, locale string) string {
	return "/" + url.PathEscape(guid) + "/" + fetch.Fetch + "/" + url.PathEscape(locale)
}

func itemRequest(guid, locale string, contentID int64) fetch.Request {
	return mustParse(base(guid, locale)+"/item/"+strconv.FormatInt(contentID, 10), "")
}

func pageRequest(guid, locale string, pageID int64, expandAll bool) fetch.Request {
	q := ""
	if expandAll {
		q = "contentLinkDepth=2&expandAllContentLinks=true"
	}
	return mustParse(base(guid, locale)+"/page/"+strconv.FormatInt(pageID, 10), q)
}

// pagePathRequest may fail: sitemap paths come from content and a strange
// one may not be a valid path parameter.
func pagePathRequest(guid, locale, channel, path string) (fetch.Request, error) {
	return parse(base(guid, locale)+"/page/"+url.PathEscape(channel),
		"path="+url.QueryEscape(path)+"&contentLinkDepth=2&expandAllContentLinks=true")
}

func sitemapRequest(guid, locale, channel string, nested bool) fetch.Request {
	kind := "flat"
	if nested {
		kind = "nested"
	}
	return mustParse(base(guid, locale)+"/sitemap/"+kind+"/"+url.PathEscape(channel), "")
}

func listRequest(guid, locale, referenceName string, skip int) fetch.Request {
	return mustParse(base(guid, locale)+"/list/"+url.PathEscape(referenceName),
		"take="+strconv.Itoa(listTake)+"&skip="+strconv.Itoa(skip))
}

// listPages returns the maintained list pages of a container with total
// visible items: at most max of them.
func listPages(guid, locale, referenceName string, total, max int) []fetch.Request {
	var out []fetch.Request
	for skip := 0; (skip == 0 || skip < total) && len(out) < max; skip += listTake {
		out = append(out, listRequest(guid, locale, referenceName, skip))
	}
	return out
}

// requestString is how the objects table records a request: its canonical
// URL path and query.
func requestString(r fetch.Request) string { return r.URLPath() + "?" + r.Query() }

// parseRequestString reads back a requestString.
func parseRequestString(s string) (fetch.Request, error) {
	path, query, _ := strings.Cut(s, "?")
	return parse(path, query)
}

// maintainable reports whether the publisher can keep an object of req: a
// fetch request the renderer renders.
func maintainable(r fetch.Request) bool {
	if !r.Cacheable() {
		return false
	}
	switch r.Kind {
	case fetch.Item, fetch.List, fetch.Page, fetch.PageByPath, fetch.SitemapFlat, fetch.SitemapNested:
		return true
	}
	return false
}

// listOf is the container of a plain list page (no filter, no sort), whose
// windows the publisher compares with the container's membership; "" for
// any other object.
func listOf(r fetch.Request) string {
	if r.Kind == fetch.List && r.Filter == nil && r.Sort == "" {
		return r.ReferenceName
	}
	return ""
}

// qualify turns a render's tags into the store's tags, unique across
// instances and locales: <guid>.<locale>.<tag>, the locale lower-cased.
func qualify(guid, locale string, tags []string) []string {
	out := make([]string, len(tags))
	prefix := guid + "." + strings.ToLower(locale) + "."
	for i, t := range tags {
		out[i] = prefix + t
	}
	return out
}

// qualified is qualify for one tag.
func qualified(guid, locale, tag string) string {
	return guid + "." + strings.ToLower(locale) + "." + tag
}
