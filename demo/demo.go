// Package demo fills an instance with a small sample site, so that a new
// user of edgecms (or a front-end developer trying a client library) has
// something real to fetch: Northwind Roasters, a fictional coffee roaster in
// Montréal, written in English and French.
//
// The site is data (site.go): content models and component models that use
// every field type, containers of linked items, page models, and a page tree
// with components in its zones, a dynamic page, a folder and a link page.
// Fill walks that data through content.Store, so everything it writes goes
// through the same validation, workflow and event log as an editor's work,
// and ends published in every locale. The `edgecms demo` command calls it.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/edgecms/edgecms/content"
)

// lang is a language the demo is written in.
type lang int

// The languages of the demo.
const (
	english lang = iota
	french
)

// langOf picks the language a locale's copies are written in: French for
// fr, fr-ca, fr-FR and the like, English for every other locale.
func langOf(code string) lang {
	c := strings.ToLower(code)
	if c == "fr" || strings.HasPrefix(c, "fr-") || strings.HasPrefix(c, "fr_") {
		return french
	}
	return english
}

// tr is a text in each language of the demo: tr{"English", "Français"}.
type tr [2]string

// values are the field values of an item or component, by field name. A
// value is a tr (a translated string), a plain string, number or boolean
// (the same in every language), an image, a gallery, or a link to other
// demo items (ref, refs, wholeContainer).
type values map[string]any

// image is the value of an image field.
type image struct {
	url           string
	width, height int
	filesize      int64
	label         tr
}

// gallery points a gallery field to the demo gallery with that name.
type gallery string

// ref links an item field to the demo item with that key.
type ref string

// refs links a list field to a selection of demo items, in order.
type refs []string

// wholeContainer links a list field to every item of its container.
type wholeContainer struct{}

// item is one content item of a container; key names it for links.
type item struct {
	key    string
	values values
}

// container is a container of the demo and its items.
type container struct {
	referenceName string
	model         string
	items         []item
}

// pageModel is a page model of the demo.
type pageModel struct {
	name  string
	zones []string
}

// component is a component in a zone of a page.
type component struct {
	zone   string
	module string
	values values
}

// page is a page of the demo; parent is the key of its parent page. A page
// with a redirect is a link page.
type page struct {
	key         string
	parent      string
	model       string
	title       tr
	description tr
	redirect    string
	folder      bool
	dynamic     *content.Dynamic
	hidden      bool // not in menus
	components  []component
}

// Fill fills inst with the demo site and publishes it in every locale of
// the instance (read with Store.Locales; each locale whose code starts with
// fr gets the French text, every other one the English text).
//
// Fill leaves an instance that already has content models or page models as
// it is and returns nil, so running it twice is safe. It is not resumable:
// when it fails half way, delete the instance and run it again.
func Fill(ctx context.Context, s *content.Store, inst content.Instance) error {
	used, err := hasContent(ctx, s, inst)
	if err != nil || used {
		return err
	}
	locales, err := s.Locales(ctx, inst)
	if err != nil {
		return err
	}
	if len(locales) == 0 {
		return fmt.Errorf("fill demo: instance %q has no locales", inst.Guid)
	}
	f := &filler{s: s, inst: inst, locales: locales, items: map[string]int64{}, pages: map[string]int64{},
		models: map[string]content.Model{}, galleries: map[string]int64{}}
	for _, step := range []func(context.Context) error{f.createModels, f.createGalleries, f.createItems, f.createPages} {
		if err := step(ctx); err != nil {
			return fmt.Errorf("fill demo: %w", err)
		}
	}
	return nil
}

// hasContent reports whether inst has models or page models already.
func hasContent(ctx context.Context, s *content.Store, inst content.Instance) (bool, error) {
	ms, err := s.Models(ctx, inst)
	if err != nil {
		return false, fmt.Errorf("fill demo: %w", err)
	}
	pms, err := s.PageModels(ctx, inst)
	if err != nil {
		return false, fmt.Errorf("fill demo: %w", err)
	}
	return len(ms) > 0 || len(pms) > 0, nil
}

// filler carries the state of one Fill: the ids of what it created, by key.
type filler struct {
	s       *content.Store
	inst    content.Instance
	locales []content.Locale
	models  map[string]content.Model
	items   map[string]int64
	pages   map[string]int64
	// galleries holds the ids of the demo galleries, by name.
	galleries map[string]int64
}

// createGalleries creates the (empty) demo galleries that gallery fields
// point to.
func (f *filler) createGalleries(ctx context.Context) error {
	for _, g := range galleries {
		created, err := f.s.CreateGallery(ctx, f.inst, content.GalleryInput{Name: &g.name, Description: &g.description})
		if err != nil {
			return fmt.Errorf("gallery %s: %w", g.name, err)
		}
		f.galleries[g.name] = created.ID
	}
	return nil
}

// createModels creates the content models and their containers in an order
// where each container exists before the models that link to it, then the
// component models and the page models.
func (f *filler) createModels(ctx context.Context) error {
	for _, m := range contentModels {
		created, err := f.s.CreateModel(ctx, f.inst, m)
		if err != nil {
			return fmt.Errorf("model %s: %w", m.Name, err)
		}
		f.models[created.Name] = created
		for _, c := range containers {
			if c.model != m.Name {
				continue
			}
			if _, err := f.s.CreateContainer(ctx, f.inst, c.referenceName, c.model); err != nil {
				return fmt.Errorf("container %s: %w", c.referenceName, err)
			}
		}
	}
	for _, m := range componentModels {
		created, err := f.s.CreateModel(ctx, f.inst, m)
		if err != nil {
			return fmt.Errorf("component model %s: %w", m.Name, err)
		}
		f.models[created.Name] = created
	}
	for _, pm := range pageModels {
		if _, err := f.s.CreatePageModel(ctx, f.inst, pm.name, pm.zones); err != nil {
			return fmt.Errorf("page model %s: %w", pm.name, err)
		}
	}
	return nil
}

// createItems creates every item in the first locale, saves its copy in the
// other locales (without the shared fields, which the first copy carries),
// and publishes every copy.
func (f *filler) createItems(ctx context.Context) error {
	first := f.locales[0].Code
	for _, c := range containers {
		m := f.models[c.model]
		for _, it := range c.items {
			vals, err := f.resolve(it.values, m, langOf(first), true)
			if err != nil {
				return fmt.Errorf("item %s: %w", it.key, err)
			}
			st, err := f.s.CreateItem(ctx, f.inst, first, c.referenceName, vals)
			if err != nil {
				return fmt.Errorf("item %s: %w", it.key, err)
			}
			f.items[it.key] = st.ContentID
			for _, l := range f.locales[1:] {
				vals, err := f.resolve(it.values, m, langOf(l.Code), false)
				if err != nil {
					return fmt.Errorf("item %s: %w", it.key, err)
				}
				if _, err := f.s.SaveItem(ctx, f.inst, l.Code, st.ContentID, vals); err != nil {
					return fmt.Errorf("item %s in %s: %w", it.key, l.Code, err)
				}
			}
			for _, l := range f.locales {
				if _, err := f.s.ItemAction(ctx, f.inst, l.Code, st.ContentID, content.ActionPublish); err != nil {
					return fmt.Errorf("item %s in %s: %w", it.key, l.Code, err)
				}
			}
		}
	}
	return nil
}

// createPages creates every page in the first locale and its copy in the
// others, adds each copy's components, and publishes every copy (which
// publishes its components too). Parents come before their children.
func (f *filler) createPages(ctx context.Context) error {
	for _, p := range pages {
		for i, l := range f.locales {
			in := p.input(langOf(l.Code))
			var got content.Page
			var err error
			if i == 0 {
				in.PageModel = &p.model
				if p.parent != "" {
					parent, ok := f.pages[p.parent]
					if !ok {
						return fmt.Errorf("page %s: parent %s comes later or does not exist", p.key, p.parent)
					}
					in.ParentPageID = json.RawMessage(fmt.Sprint(parent))
				}
				got, err = f.s.CreatePage(ctx, f.inst, l.Code, in)
				f.pages[p.key] = got.PageID
			} else {
				got, err = f.s.SavePage(ctx, f.inst, l.Code, f.pages[p.key], in)
			}
			if err != nil {
				return fmt.Errorf("page %s in %s: %w", p.key, l.Code, err)
			}
			for _, c := range p.components {
				vals, err := f.resolve(c.values, f.models[c.module], langOf(l.Code), true)
				if err != nil {
					return fmt.Errorf("page %s, component %s: %w", p.key, c.module, err)
				}
				if _, _, err := f.s.AddComponent(ctx, f.inst, l.Code, got.PageID, c.zone, c.module, vals); err != nil {
					return fmt.Errorf("page %s in %s, component %s: %w", p.key, l.Code, c.module, err)
				}
			}
			if _, err := f.s.PageAction(ctx, f.inst, l.Code, got.PageID, content.ActionPublish); err != nil {
				return fmt.Errorf("page %s in %s: %w", p.key, l.Code, err)
			}
		}
	}
	return nil
}

// input is what a save of the page's copy in language lg sets.
func (p page) input(lg lang) content.PageInput {
	title := p.title[lg]
	in := content.PageInput{
		Title:   &title,
		Visible: &content.Visible{Menu: !p.hidden, Sitemap: true},
		SEO:     &content.SEO{MetaDescription: p.description[lg]},
		Dynamic: p.dynamic,
	}
	if p.folder {
		in.Folder = &p.folder
	}
	if p.redirect != "" {
		in.RedirectURL = &p.redirect
	}
	return in
}

// resolve turns demo values into the field values of a save in language
// lg, leaving out the fields m shares across languages unless withShared.
func (f *filler) resolve(vs values, m content.Model, lg lang, withShared bool) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for name, v := range vs {
		if fd, ok := m.Field(name); ok && fd.Shared && !withShared {
			continue
		}
		var x any
		switch v := v.(type) {
		case tr:
			x = v[lg]
		case string, int, float64, bool:
			x = v
		case gallery:
			id, ok := f.galleries[string(v)]
			if !ok {
				return nil, fmt.Errorf("field %s: no gallery %q", name, v)
			}
			x = content.Gallery{GalleryID: id}
		case image:
			x = content.Image{URL: v.url, Label: v.label[lg], Width: v.width, Height: v.height, Filesize: v.filesize}
		case ref:
			id, ok := f.items[string(v)]
			if !ok {
				return nil, fmt.Errorf("field %s: no item %q before this one", name, v)
			}
			x = content.ItemLink{ContentID: id}
		case refs:
			ids := make([]int64, len(v))
			for i, key := range v {
				id, ok := f.items[key]
				if !ok {
					return nil, fmt.Errorf("field %s: no item %q before this one", name, key)
				}
				ids[i] = id
			}
			x = content.ListLink{ContentIDs: ids}
		case wholeContainer:
			x = content.ListLink{}
		default:
			return nil, fmt.Errorf("field %s: unsupported demo value %T", name, v)
		}
		raw, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		out[name] = raw
	}
	return out, nil
}
