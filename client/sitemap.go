package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// SitemapNode is one page of a sitemap. In a nested sitemap it has Children;
// in a flat one, a dynamic page appears once per item, with that item's
// ContentID.
type SitemapNode struct {
	Title    string  `json:"title"`
	Name     string  `json:"name"`
	PageID   int64   `json:"pageID"`
	MenuText string  `json:"menuText"`
	Visible  Visible `json:"visible"`
	// Path is the URL path of the page, starting with "/".
	Path string `json:"path"`
	// Redirect is where a link page points, or nil.
	Redirect *Redirect `json:"redirect"`
	IsFolder bool      `json:"isFolder"`
	// ContentID is, on a node of a dynamic page, the item the path stands
	// for; 0 otherwise.
	ContentID int64 `json:"contentID,omitempty"`
	// Children are the nodes below this one in a nested sitemap; nil on
	// leaves and in a flat sitemap.
	Children []SitemapNode `json:"children,omitempty"`
}

// Routable reports whether a site should serve a page at this node: starter
// sites skip folders and redirects.
func (n SitemapNode) Routable() bool { return !n.IsFolder && n.Redirect == nil }

// Redirect is the destination of a link page in the sitemap.
type Redirect struct {
	URL    string `json:"url"`
	Target string `json:"target"`
}

// UnmarshalJSON accepts {url, target} and also a bare URL string, the shape
// an older document describes.
func (r *Redirect) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		*r = Redirect{}
		return json.Unmarshal(b, &r.URL)
	}
	type plain Redirect
	return json.Unmarshal(b, (*plain)(r))
}

// FlatSitemap is a flat sitemap: every node in the order the server sent
// them (sitemap order), with a lookup by path.
type FlatSitemap struct {
	// Nodes are the nodes in document order.
	Nodes  []SitemapNode
	byPath map[string]int
}

// Node returns the node at path, as keyed in the sitemap.
func (s *FlatSitemap) Node(path string) (SitemapNode, bool) {
	if s.byPath == nil {
		for _, n := range s.Nodes {
			if n.Path == path {
				return n, true
			}
		}
		return SitemapNode{}, false
	}
	i, ok := s.byPath[path]
	if !ok {
		return SitemapNode{}, false
	}
	return s.Nodes[i], true
}

// Find returns the first node of page pageID and, for a dynamic page, item
// contentID (0 for other pages). Sitemaps of two locales pair up this way,
// since a page's path may differ between locales.
func (s *FlatSitemap) Find(pageID, contentID int64) (SitemapNode, bool) {
	for _, n := range s.Nodes {
		if n.PageID == pageID && n.ContentID == contentID {
			return n, true
		}
	}
	return SitemapNode{}, false
}

// UnmarshalJSON reads the JSON object keyed by path, keeping its key order.
// A node without a path takes its key.
func (s *FlatSitemap) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("a flat sitemap is a JSON object keyed by path")
	}
	s.Nodes = []SitemapNode{}
	s.byPath = map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var n SitemapNode
		if err := dec.Decode(&n); err != nil {
			return fmt.Errorf("node %q: %w", key, err)
		}
		if n.Path == "" {
			n.Path = key
		}
		s.byPath[key] = len(s.Nodes)
		s.Nodes = append(s.Nodes, n)
	}
	_, err := dec.Token() // the closing brace
	return err
}

// MarshalJSON writes the sitemap back in the API's shape: an object keyed by
// path, in the order of Nodes.
func (s *FlatSitemap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range s.Nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(n.Path)
		if err != nil {
			return nil, err
		}
		node, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(node)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// SitemapFlat returns the flat sitemap of channel in locale.
func (c *Client) SitemapFlat(ctx context.Context, locale, channel string) (*FlatSitemap, error) {
	if err := need("locale", locale, "channel", channel); err != nil {
		return nil, err
	}
	var s FlatSitemap
	if _, err := c.get(ctx, &s, nil, locale, "sitemap", "flat", channel); err != nil {
		return nil, err
	}
	return &s, nil
}

// SitemapNested returns the nested sitemap of channel in locale: the root
// nodes, each with its Children.
func (c *Client) SitemapNested(ctx context.Context, locale, channel string) ([]SitemapNode, error) {
	if err := need("locale", locale, "channel", channel); err != nil {
		return nil, err
	}
	var nodes []SitemapNode
	if _, err := c.get(ctx, &nodes, nil, locale, "sitemap", "nested", channel); err != nil {
		return nil, err
	}
	return nodes, nil
}
