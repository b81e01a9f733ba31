package render

import (
	"slices"
	"sort"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render/source"
)

// page renders GET /{locale}/page/{pageID}.
func (j *job) page() error {
	p, err := j.src.PageVersion(j.ctx, j.inst, j.locale, j.fl, j.req.PageID)
	if err != nil {
		return err
	}
	if err := j.loadZones(&p); err != nil {
		return err
	}
	j.writePage(&p, 0)
	return nil
}

// pageByPath renders GET /{locale}/page/{channel}?path=/a/b: the page at
// that path of the channel's sitemap and its flat sitemap node.
func (j *job) pageByPath() error {
	hit, channel, err := j.findNode(j.req.Channel, j.req.Path)
	if err != nil {
		return err
	}
	if hit == nil {
		return problem.NotFoundf("channel %q has no page at path %q in locale %q", channel, j.req.Path, j.locale)
	}
	if hit.path == j.req.Path {
		j.nodeTags = map[string]struct{}{}
		for t := range j.tags {
			j.nodeTags[t] = struct{}{} // so far, only the sitemap tagged
		}
	}
	p := hit.page
	j.nodeItem = hit.contentID
	if hit.contentID != 0 {
		j.tag(ItemTag(hit.contentID))
	}
	if err := j.loadZones(p); err != nil {
		return err
	}
	w := &j.w
	w.open('{')
	w.key("page")
	j.writePage(p, hit.contentID)
	w.key("sitemapNode")
	j.writeNode(hit)
	w.close('}')
	w.close('}')
	return nil
}

// zoneOrder lists the zones of p: those of its page model in the model's
// order, then any others the copy holds, sorted.
func zoneOrder(p *source.PageVersion) []string {
	out := slices.Clone(p.ModelZones)
	var extra []string
	for z := range p.Zones {
		if !slices.Contains(out, z) {
			extra = append(extra, z)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// loadZones loads the components in the zones of p: their visibility and
// model at depth 0, else in full with what their links need.
func (j *job) loadZones(p *source.PageVersion) error {
	var ids []int64
	for _, z := range zoneOrder(p) {
		ids = append(ids, p.Zones[z]...)
	}
	d := j.req.Depth
	if d == 0 {
		return j.loadHeads(ids)
	}
	_, err := j.loadGraph(ids, d-1)
	return err
}

// writePage writes a page object. dynamicItem, when not 0, is the item a
// dynamic page was reached for (by path).
func (j *job) writePage(p *source.PageVersion, dynamicItem int64) {
	j.tag(PageTag(p.PageID))
	d := &p.Doc
	w := &j.w
	w.open('{')
	w.key("pageID")
	w.int(p.PageID)
	w.key("name")
	w.str(p.Name)
	w.key("path")
	w.null()
	w.key("title")
	w.str(d.Title)
	w.key("menuText")
	w.str(d.MenuText)
	w.key("pageType")
	w.str(p.PageType)
	w.key("templateName")
	w.str(p.Model)
	w.key("redirectUrl")
	w.str(d.RedirectURL)
	w.key("securePage")
	w.bool(d.SecurePage)
	w.key("excludeFromOutputCache")
	w.bool(d.ExcludeFromOutputCache)
	w.key("visible")
	writeVisible(w, d.Visible)
	w.key("seo")
	w.open('{')
	w.key("metaDescription")
	w.str(d.SEO.MetaDescription)
	w.key("metaKeywords")
	w.str(d.SEO.MetaKeywords)
	w.key("metaHTML")
	w.str(d.SEO.MetaHTML)
	w.key("menuVisible")
	writeOptBool(w, d.SEO.MenuVisible)
	w.key("sitemapVisible")
	writeOptBool(w, d.SEO.SitemapVisible)
	w.close('}')
	w.key("scripts")
	w.open('{')
	w.key("excludedFromGlobal")
	w.bool(d.Scripts.ExcludedFromGlobal)
	w.key("top")
	writeOptString(w, d.Scripts.Top)
	w.key("bottom")
	writeOptString(w, d.Scripts.Bottom)
	w.close('}')
	w.key("properties")
	w.open('{')
	w.key("state")
	w.int(int64(p.State))
	w.key("modified")
	w.modified(p.Modified)
	w.key("versionID")
	w.int(p.VersionID)
	w.close('}')
	w.key("zones")
	w.open('{')
	for _, z := range zoneOrder(p) {
		w.key(z)
		w.open('[')
		for _, id := range p.Zones[z] {
			j.writeZoneEntry(id)
		}
		w.close(']')
	}
	w.close('}')
	if dynamicItem != 0 {
		w.key("dynamicItemContentID")
		w.int(dynamicItem)
	}
	w.close('}')
}

// writeZoneEntry writes {module, item} for the component id; a component
// the flavour does not show is left out.
func (j *job) writeZoneEntry(id int64) {
	j.tag(ItemTag(id))
	w := &j.w
	if d := j.req.Depth; d == 0 {
		module, ok := j.heads[id]
		if n, loaded := j.nodes[id]; loaded {
			module, ok = n.v.Model, true
		}
		if !ok {
			return
		}
		w.open('{')
		w.key("module")
		w.str(module)
		w.key("item")
		j.writeRef(id)
		w.close('}')
		return
	}
	n, ok := j.nodes[id]
	if !ok {
		return
	}
	w.open('{')
	w.key("module")
	w.str(n.v.Model)
	w.key("item")
	j.writeItem(n, j.req.Depth-1, nil)
	w.close('}')
}

func writeVisible(w *writer, v content.Visible) {
	w.open('{')
	w.key("menu")
	w.bool(v.Menu)
	w.key("sitemap")
	w.bool(v.Sitemap)
	w.close('}')
}

func writeOptBool(w *writer, b *bool) {
	if b == nil {
		w.null()
		return
	}
	w.bool(*b)
}

func writeOptString(w *writer, s *string) {
	if s == nil {
		w.null()
		return
	}
	w.str(*s)
}
