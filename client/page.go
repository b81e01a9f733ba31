package client

import (
	"context"
	"net/url"
	"strconv"
)

// Page is a page of a site: its metadata and the components placed in its
// zones.
type Page struct {
	PageID int64  `json:"pageID"`
	Name   string `json:"name"`
	// Path is null in page responses; the sitemap holds the paths.
	Path     *string  `json:"path"`
	Title    string   `json:"title"`
	MenuText string   `json:"menuText"`
	PageType PageType `json:"pageType"`
	// TemplateName is the page model of the page.
	TemplateName string `json:"templateName"`
	// RedirectURL is the destination of a link page, or empty.
	RedirectURL            string                 `json:"redirectUrl"`
	SecurePage             bool                   `json:"securePage"`
	ExcludeFromOutputCache bool                   `json:"excludeFromOutputCache"`
	Visible                Visible                `json:"visible"`
	SEO                    PageSEO                `json:"seo"`
	Scripts                Scripts                `json:"scripts"`
	Properties             Properties             `json:"properties"`
	Zones                  map[string][]ZoneEntry `json:"zones"`
	// DynamicItemContentID is, on a dynamic page, the item the requested
	// path stands for; 0 otherwise.
	DynamicItemContentID int64 `json:"dynamicItemContentID,omitempty"`
}

// PageType says what kind of page a Page is.
type PageType string

// The page types.
const (
	PageStatic      PageType = "static"
	PageDynamic     PageType = "dynamic"
	PageDynamicNode PageType = "dynamic_node"
	PageLink        PageType = "link"
	PageFolder      PageType = "folder"
)

// Visible says where a page is shown.
type Visible struct {
	Menu    bool `json:"menu"`
	Sitemap bool `json:"sitemap"`
}

// PageSEO is the search-engine metadata of a page.
type PageSEO struct {
	MetaDescription string `json:"metaDescription"`
	MetaKeywords    string `json:"metaKeywords"`
	MetaHTML        string `json:"metaHTML"`
	// MenuVisible and SitemapVisible are nil when unset.
	MenuVisible    *bool `json:"menuVisible"`
	SitemapVisible *bool `json:"sitemapVisible"`
}

// Scripts are the page's extra scripts.
type Scripts struct {
	ExcludedFromGlobal bool `json:"excludedFromGlobal"`
	// Top and Bottom are nil when unset.
	Top    *string `json:"top"`
	Bottom *string `json:"bottom"`
}

// ZoneEntry is one component placed in a zone of a page. At depth 0 the item
// is a reference with only ContentID set.
type ZoneEntry struct {
	// Module is the name of the component model.
	Module string `json:"module"`
	Item   Item   `json:"item"`
}

// PageOptions tune a page request. The zero value asks for the server's
// defaults.
type PageOptions struct {
	// Depth is contentLinkDepth (0..5); nil means the server default for
	// pages, 2; new(0) leaves zone items as references.
	Depth *int
	// ExpandAll sets expandAllContentLinks.
	ExpandAll bool
}

func (o PageOptions) query() url.Values {
	return depthQuery(url.Values{}, o.Depth, o.ExpandAll)
}

// Page returns the page pageID in locale.
func (c *Client) Page(ctx context.Context, locale string, pageID int64, opts PageOptions) (*Page, error) {
	if err := need("locale", locale); err != nil {
		return nil, err
	}
	var p Page
	u, err := c.get(ctx, &p, opts.query(), locale, "page", strconv.FormatInt(pageID, 10))
	if err != nil {
		return nil, err
	}
	if p.PageID == 0 {
		return nil, badResponse(u, "the page has no pageID")
	}
	return &p, nil
}

// PageRoute is the answer of PageByPath: the page at a path and its sitemap
// node (which, for a dynamic page, names the item in ContentID).
type PageRoute struct {
	Page        Page        `json:"page"`
	SitemapNode SitemapNode `json:"sitemapNode"`
}

// PageByPath returns the page of the sitemap channel at path ("/blog/post")
// in locale, with its sitemap node; this is what a site's router needs.
func (c *Client) PageByPath(ctx context.Context, locale, channel, path string, opts PageOptions) (*PageRoute, error) {
	if err := need("locale", locale, "channel", channel, "path", path); err != nil {
		return nil, err
	}
	q := opts.query()
	q.Set("path", path)
	var r PageRoute
	u, err := c.get(ctx, &r, q, locale, "page", channel)
	if err != nil {
		return nil, err
	}
	if r.Page.PageID == 0 {
		return nil, badResponse(u, "the answer has no page with a pageID")
	}
	return &r, nil
}
