// Package render is edgecms's one renderer of the Content Fetch API: it
// turns a fetch.Request and the content in Postgres into the exact JSON
// bytes of the answer, for items, lists, pages, pages by path and sitemaps.
//
// The origin calls it to answer requests, and the publisher calls it to
// pre-render the same answers into the object store, so output is
// deterministic: keys come in a fixed order (written by hand, never through
// a map), and the same content always gives the same bytes. Each Result
// also carries Tags naming every record its bytes were made from, so that
// the publisher can re-render exactly the objects a change touches; see
// README.md for the tag scheme and the rendering rules chosen where the
// spec is silent.
package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render/source"
)

// Renderer renders Fetch API answers from a content.Store. It is safe for
// concurrent use.
type Renderer struct {
	reads *source.Reader

	mu sync.RWMutex
	// schemas caches decoded model field definitions by their JSON, so
	// that an edited model is simply another entry.
	schemas map[string]content.Fields
}

// New returns a Renderer reading from store. Close it when done.
func New(store *content.Store) *Renderer {
	return &Renderer{reads: source.NewReader(store), schemas: map[string]content.Fields{}}
}

// Close releases the Renderer's prepared statements.
func (r *Renderer) Close() error { return r.reads.Close() }

// Site is what a render needs to know of the instance a request is for: the
// instance and its configured locales. Callers may keep it between requests
// (and must refresh it when locales change).
type Site struct {
	Instance content.Instance
	Locales  []content.Locale
}

// LoadSite reads the Site of the instance with the given guid.
func LoadSite(ctx context.Context, store *content.Store, guid string) (Site, error) {
	inst, err := store.Instance(ctx, guid)
	if err != nil {
		return Site{}, err
	}
	ls, err := store.Locales(ctx, inst)
	if err != nil {
		return Site{}, err
	}
	return Site{Instance: inst, Locales: ls}, nil
}

// Result is a rendered answer.
type Result struct {
	// Body is the JSON answer, compact, in UTF-8.
	Body []byte
	// Tags name the records Body was made from, sorted and without
	// duplicates, relative to the request's instance, locale and flavour:
	//
	//	i:<contentID>      an item (rendered, referenced, or linked but not visible)
	//	c:<referencename>  a container's membership and order (lower case)
	//	p:<pageID>         a page
	//	s:<channel>        a channel's page tree (lower case)
	//
	// A change to any of them may change Body.
	Tags []string
	// NodeTags, set for a page by path whose request names its sitemap
	// node's path exactly, are the Tags the answer depends on only through
	// that node: the channel's page tree and the containers of its dynamic
	// pages, which locate the page. As long as the channel's flat sitemap
	// shows the same node at the path, a change to them leaves Body as it
	// was; the publisher compares sitemap nodes instead of rendering every
	// page by path again (publisher/sitemap.go).
	NodeTags []string
	// Item, for a page by path at a node of a dynamic page, is the item the
	// node stands for (0 otherwise).
	Item int64
}

// ItemTag makes the tag of an item.
func ItemTag(contentID int64) string { return "i:" + strconv.FormatInt(contentID, 10) }

// ContainerTag makes the tag of a container.
func ContainerTag(referenceName string) string { return "c:" + strings.ToLower(referenceName) }

// PageTag makes the tag of a page.
func PageTag(pageID int64) string { return "p:" + strconv.FormatInt(pageID, 10) }

// ChannelTag makes the tag of a channel.
func ChannelTag(channel string) string { return "s:" + strings.ToLower(channel) }

// Source is what a render reads content from: the Renderer's
// source.Reader (Postgres), or a source.Snapshot (one instance's
// published content in one locale, in memory). Both answer every read
// alike, so a render gives the same bytes from either.
type Source interface {
	ItemGraph(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, roots []int64, levels int) ([]source.ItemNode, error)
	ItemHeads(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, contentIDs []int64) ([]source.ItemHead, error)
	ContainerIDs(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, referenceNames []string) (map[string][]int64, error)
	ContainerVersions(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, referenceNames []string) ([]source.ItemVersion, error)
	ContainerContents(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, referenceName string, skip, take int) (source.ContainerContents, error)
	PageVersion(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, pageID int64) (source.PageVersion, error)
	ChannelPages(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, channel string) (content.Channel, []source.PageVersion, error)
	DynamicItems(ctx context.Context, inst content.Instance, locale string, fl source.Flavour, b source.DynamicBinding, after *source.DynamicItem, limit int) ([]source.DynamicItem, error)
}

var (
	_ Source = (*source.Reader)(nil)
	_ Source = (*source.Snapshot)(nil)
)

// RenderFrom renders the answer to req as Render does, reading content
// from src. Only items, lists, pages, pages by path and sitemaps read
// everything from a Source; other kinds are refused.
func (r *Renderer) RenderFrom(ctx context.Context, site Site, req fetch.Request, src Source) (Result, error) {
	switch req.Kind {
	case fetch.Item, fetch.List, fetch.Page, fetch.PageByPath, fetch.SitemapFlat, fetch.SitemapNested:
	default:
		return Result{}, fmt.Errorf("render: %s requests are not rendered from a Source", req.Kind)
	}
	return r.render(ctx, site, req, src, nil)
}

// RenderTo renders the answer to req from src as RenderFrom does, but
// writes the body to out as it is made instead of returning it
// (Result.Body is nil): a sitemap goes out some 32 KB at a time, so that
// one of a channel with N dynamic items is never held whole. The other
// kinds are written in one piece at the end. An error of out ends the
// render and is returned; out may then have part of the body.
func (r *Renderer) RenderTo(ctx context.Context, site Site, req fetch.Request, src Source, out io.Writer) (Result, error) {
	if out == nil {
		return Result{}, fmt.Errorf("render: RenderTo needs a writer")
	}
	switch req.Kind {
	case fetch.Item, fetch.List, fetch.Page, fetch.PageByPath, fetch.SitemapFlat, fetch.SitemapNested:
	default:
		return Result{}, fmt.Errorf("render: %s requests are not rendered from a Source", req.Kind)
	}
	return r.render(ctx, site, req, src, out)
}

// Render renders the answer to req, which must come from fetch.Parse. Sync
// answers (SyncItems, SyncPages; sync.go) stamp pending changes first, and
// Gallery and URLRedirection answers have no locale.
//
// An unknown locale is a problem.NotFound listing the configured codes; an
// unknown or invisible item, container, page, path, channel or gallery is
// a problem.NotFound; a sort by a path that names nothing is a
// problem.Invalid. Other errors are internal.
func (r *Renderer) Render(ctx context.Context, site Site, req fetch.Request) (Result, error) {
	return r.render(ctx, site, req, r.reads, nil)
}

// flavours are the source flavours of the API types.
var flavours = map[string]source.Flavour{fetch.Fetch: source.FlavourFetch, fetch.Preview: source.FlavourPreview}

func (r *Renderer) render(ctx context.Context, site Site, req fetch.Request, src Source, out io.Writer) (Result, error) {
	var loc content.Locale
	var err error
	if req.Kind != fetch.Gallery && req.Kind != fetch.URLRedirection {
		if loc, err = content.ResolveLocale(site.Locales, req.Locale); err != nil {
			return Result{}, err
		}
	}
	fl, ok := flavours[req.APIType]
	if !ok {
		return Result{}, problem.Field("apitype", "%q is not fetch or preview", req.APIType)
	}
	j := &job{
		r: r, src: src, ctx: ctx, inst: site.Instance, locale: loc.Code, fl: fl, req: req,
		nodes: map[int64]*node{}, heads: map[int64]string{}, hidden: map[int64]bool{},
		lists: map[string][]int64{}, listDepth: map[string]int{}, tags: map[string]struct{}{},
	}
	// Renders of items grow this to what the items loaded take (graph).
	j.w.b = make([]byte, 0, 512)
	j.w.out = out
	switch req.Kind {
	case fetch.Item:
		err = j.item()
	case fetch.List:
		err = j.list()
	case fetch.Page:
		err = j.page()
	case fetch.PageByPath:
		err = j.pageByPath()
	case fetch.SitemapFlat, fetch.SitemapNested:
		err = j.sitemap(req.Kind == fetch.SitemapNested)
	case fetch.SyncItems, fetch.SyncPages:
		err = j.sync(req.Kind == fetch.SyncPages)
	case fetch.Gallery:
		err = j.gallery()
	case fetch.URLRedirection:
		err = j.redirections()
	default:
		return Result{}, fmt.Errorf("render: %s requests are not rendered here", req.Kind)
	}
	if err == nil && out != nil {
		j.w.drain()
		err = j.w.err
	}
	if err != nil {
		return Result{}, fmt.Errorf("render %s: %w", req.Kind, err)
	}
	res := Result{Body: j.w.b, Tags: j.sortedTags(), Item: j.nodeItem}
	if out != nil {
		res.Body = nil
	}
	for t := range j.nodeTags {
		res.NodeTags = append(res.NodeTags, t)
	}
	slices.Sort(res.NodeTags)
	return res, nil
}

// job is the state of one render: what is loaded, the output and the tags.
type job struct {
	r      *Renderer
	src    Source
	ctx    context.Context
	inst   content.Instance
	locale string // the configured code
	fl     source.Flavour
	req    fetch.Request

	nodes  map[int64]*node    // items loaded in full (visible)
	heads  map[int64]string   // items known visible, not loaded, with their model name
	hidden map[int64]bool     // items known not visible
	lists  map[string][]int64 // lower-case referenceName -> visible contentIDs, for whole-list links
	// listDepth holds, per whole list in lists, the remaining levels of
	// links loaded for its items.
	listDepth map[string]int

	// path holds the contentIDs of the items being written, outermost
	// first: an item is never expanded inside itself.
	path []int64

	w    writer
	tags map[string]struct{}
	// nodeTags, for a page by path, are the tags only the sitemap added
	// (see Result.NodeTags): tag removes what anything else adds.
	nodeTags map[string]struct{}
	// nodeItem is Result.Item.
	nodeItem int64
}

func (j *job) tag(t string) {
	j.tags[t] = struct{}{}
	delete(j.nodeTags, t)
}

func (j *job) sortedTags() []string {
	out := make([]string, 0, len(j.tags))
	for t := range j.tags {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// maxSchemas bounds the cache of decoded field definitions.
const maxSchemas = 4096

// schema decodes the JSON of a model's field definitions, once per distinct
// value.
func (r *Renderer) schema(raw []byte) (content.Fields, error) {
	r.mu.RLock()
	fs, ok := r.schemas[string(raw)]
	r.mu.RUnlock()
	if ok {
		return fs, nil
	}
	if err := json.Unmarshal(raw, &fs); err != nil {
		return nil, fmt.Errorf("decode model fields: %w", err)
	}
	r.mu.Lock()
	if len(r.schemas) >= maxSchemas {
		clear(r.schemas)
	}
	r.schemas[string(raw)] = fs
	r.mu.Unlock()
	return fs, nil
}
