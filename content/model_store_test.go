package content

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/problem"
)

func TestCreateModelValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.model("Category", "content", Field{Name: "name", Type: TypeText})
	f.container("Categories", "Category")
	text := Field{Name: "title", Type: TypeText}
	many := make(Fields, 201)
	for i := range many {
		many[i] = Field{Name: "f" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + strings.Repeat("y", i/26), Type: TypeText}
	}
	tests := []struct {
		name   string
		m      Model
		fields []string
	}{
		{"name starting with a digit", Model{Name: "1Blog", Kind: "content", Fields: Fields{text}}, []string{"name"}},
		{"empty name", Model{Name: "", Kind: "content", Fields: Fields{text}}, []string{"name"}},
		{"name with a space", Model{Name: "Blog Post", Kind: "content", Fields: Fields{text}}, []string{"name"}},
		{"name with a hyphen", Model{Name: "Blog-Post", Kind: "content", Fields: Fields{text}}, []string{"name"}},
		{"name too long", Model{Name: "B" + strings.Repeat("x", 64), Kind: "content", Fields: Fields{text}}, []string{"name"}},
		{"unknown kind", Model{Name: "Blog", Kind: "page", Fields: Fields{text}}, []string{"kind"}},
		{"no kind", Model{Name: "Blog", Fields: Fields{text}}, []string{"kind"}},
		{"no fields", Model{Name: "Blog", Kind: "content"}, []string{"fields"}},
		{"too many fields", Model{Name: "Blog", Kind: "content", Fields: many}, []string{"fields"}},
		{"bad field name", Model{Name: "Blog", Kind: "content", Fields: Fields{{Name: "my_field", Type: TypeText}}}, []string{"fields[0].name"}},
		{"field name with a digit first", Model{Name: "Blog", Kind: "content", Fields: Fields{{Name: "1st", Type: TypeText}}}, []string{"fields[0].name"}},
		{"duplicate field name", Model{Name: "Blog", Kind: "content", Fields: Fields{text, {Name: "Title", Type: TypeHTML}}}, []string{"fields[1].name"}},
		{"unknown type", Model{Name: "Blog", Kind: "content", Fields: Fields{{Name: "when", Type: "datetime"}}}, []string{"fields[0].type"}},
		{"no type", Model{Name: "Blog", Kind: "content", Fields: Fields{{Name: "when"}}}, []string{"fields[0].type"}},
		{"item field without container", Model{Name: "Blog", Kind: "content", Fields: Fields{text, {Name: "category", Type: TypeItem}}}, []string{"fields[1].container"}},
		{"list field without container", Model{Name: "Blog", Kind: "content", Fields: Fields{{Name: "tags", Type: TypeList}}}, []string{"fields[0].container"}},
		{"text field with a container", Model{Name: "Blog", Kind: "content", Fields: Fields{{Name: "title", Type: TypeText, Container: "Categories"}}}, []string{"fields[0].container"}},
		{"field named like an item field's companion", Model{Name: "Blog", Kind: "content", Fields: Fields{
			{Name: "category", Type: TypeItem, Container: "Categories"}, {Name: "categoryID", Type: TypeText}}}, []string{"fields[1].name"}},
		{"several errors at once", Model{Name: "", Kind: "x", Fields: Fields{{Name: "a b", Type: "y"}, {Name: "list", Type: TypeList}}},
			[]string{"name", "kind", "fields[0].name", "fields[0].type", "fields[1].container"}},
	}
	for _, tt := range tests {
		_, err := f.s.CreateModel(f.ctx, f.inst, tt.m)
		wantFields(t, tt.name, err, tt.fields...)
	}
	_, err := f.s.CreateModel(f.ctx, f.inst, Model{Name: "Blog", Kind: "content", Fields: Fields{{Name: "category", Type: TypeItem, Container: "no such"}}})
	wantFields(t, "item field on an impossible container name", err, "fields[0].container")
	if ms, _ := f.s.Models(f.ctx, f.inst); len(ms) != 1 {
		t.Errorf("%d models after refusals, want 1", len(ms))
	}
	// A container that does not exist yet: a self or mutual link.
	if _, err := f.s.CreateModel(f.ctx, f.inst, Model{Name: "Post", Kind: "content", Fields: Fields{{Name: "related", Type: TypeList, Container: "posts"}}}); err != nil {
		t.Errorf("a model linking to its container-to-be: %v", err)
	}
}

func TestCreateModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.model("Category", "content", Field{Name: "name", Type: TypeText})
	f.container("Categories", "Category")
	m, err := f.s.CreateModel(f.ctx, f.inst, Model{Name: "BlogPost", Kind: "content", Fields: Fields{
		{Name: "title", Type: TypeText, Required: true},
		{Name: "price", Type: TypeDecimal, Shared: true},
		{Name: "category", Type: TypeItem, Container: "CATEGORIES"},
		{Name: "related", Type: TypeList, Container: "categories"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID == 0 || m.Name != "BlogPost" || m.Kind != "content" || m.CreatedAt.IsZero() {
		t.Errorf("created model = %+v", m)
	}
	// Links name the container in its own spelling.
	if m.Fields[2].Container != "Categories" || m.Fields[3].Container != "Categories" {
		t.Errorf("link containers = %q, %q, want Categories", m.Fields[2].Container, m.Fields[3].Container)
	}
	if !m.Fields[0].Required || !m.Fields[1].Shared {
		t.Errorf("field flags lost: %+v", m.Fields)
	}
	got, err := f.s.Model(f.ctx, f.inst, "blogpost")
	if err != nil || jsonText(got) != jsonText(m) {
		t.Errorf("Model(blogpost) = %s, %v; want %s", jsonText(got), err, jsonText(m))
	}
	if f, ok := got.Field("CATEGORY"); !ok || f.Name != "category" {
		t.Errorf("Field(CATEGORY) = %+v, %v", f, ok)
	}
	if _, ok := got.Field("nope"); ok {
		t.Error("Field(nope) found")
	}
	// Names are unique case-insensitively, per instance.
	_, err = f.s.CreateModel(f.ctx, f.inst, Model{Name: "BLOGPOST", Kind: "component", Fields: Fields{{Name: "x", Type: TypeText}}})
	wantKind(t, "duplicate model name", err, problem.Conflict)
	other := f.instance("other")
	if _, err := f.s.CreateModel(f.ctx, other, Model{Name: "BlogPost", Kind: "content", Fields: Fields{{Name: "x", Type: TypeText}}}); err != nil {
		t.Errorf("same model name in another instance: %v", err)
	}
	_, err = f.s.Model(f.ctx, other, "Category")
	wantKind(t, "model of another instance", err, problem.NotFound)
	ms, err := f.s.Models(f.ctx, f.inst)
	if err != nil || len(ms) != 2 || ms[0].Name != "Category" || ms[1].Name != "BlogPost" {
		t.Errorf("Models = %d models, %v", len(ms), err)
	}
}

func TestDeleteModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	f.model("Unused", "content", Field{Name: "x", Type: TypeText})
	f.model("Widget", "component", Field{Name: "x", Type: TypeText})
	f.model("Orphan", "content", Field{Name: "x", Type: TypeText})
	p := f.createPage("en-us", "Home", 0)
	if _, _, err := f.s.AddComponent(f.ctx, f.inst, "en-us", p.PageID, "Sidebar", "Widget", nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		model string
		kind  problem.Kind // Internal: no error
	}{
		{"unused", "unused", problem.Internal},
		{"used by a container", "Article", problem.Conflict},
		{"used by a component", "Widget", problem.Conflict},
		{"unknown", "Nope", problem.NotFound},
		{"already deleted", "Unused", problem.NotFound},
	}
	for _, tt := range tests {
		err := f.s.DeleteModel(f.ctx, f.inst, tt.model)
		if tt.kind == problem.Internal {
			if err != nil {
				t.Errorf("%s: DeleteModel(%s) = %v", tt.name, tt.model, err)
			}
			continue
		}
		wantKind(t, tt.name, err, tt.kind)
	}
	if _, err := f.s.Model(f.ctx, f.inst, "Article"); err != nil {
		t.Errorf("Article after a refused delete: %v", err)
	}
	wantKind(t, "delete a model of another instance", f.s.DeleteModel(f.ctx, f.instance("other"), "Orphan"), problem.NotFound)
}

func TestContainers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.model("Post", "content", Field{Name: "title", Type: TypeText})
	f.model("Widget", "component", Field{Name: "x", Type: TypeText})
	tests := []struct {
		name   string
		ref    string
		model  string
		kind   problem.Kind
		fields []string
	}{
		{"bad reference name", "my posts", "Post", problem.Invalid, []string{"referenceName"}},
		{"reference name with a digit first", "1posts", "Post", problem.Invalid, []string{"referenceName"}},
		{"empty reference name and model", "", " ", problem.Invalid, []string{"referenceName", "model"}},
		{"unknown model", "Posts", "Nope", problem.NotFound, nil},
		{"component model", "Widgets", "Widget", problem.Invalid, []string{"model"}},
	}
	for _, tt := range tests {
		_, err := f.s.CreateContainer(f.ctx, f.inst, tt.ref, tt.model)
		if tt.kind == problem.Invalid {
			wantFields(t, tt.name, err, tt.fields...)
		} else {
			wantKind(t, tt.name, err, tt.kind)
		}
	}
	c, err := f.s.CreateContainer(f.ctx, f.inst, "Posts", "post")
	if err != nil {
		t.Fatal(err)
	}
	if c.ReferenceName != "Posts" || c.Model != "Post" || c.ItemCount != 0 || c.ID == 0 {
		t.Errorf("created container = %+v", c)
	}
	_, err = f.s.CreateContainer(f.ctx, f.inst, "POSTS", "Post")
	wantKind(t, "duplicate reference name", err, problem.Conflict)
	f.container("Featured", "Post")
	f.createItem("en-us", "posts", map[string]any{"title": "a"})
	f.createItem("fr-ca", "posts", map[string]any{"title": "b"})
	got, err := f.s.Container(f.ctx, f.inst, "pOsTs")
	if err != nil || got.ItemCount != 2 || got.ReferenceName != "Posts" {
		t.Errorf("Container(pOsTs) = %+v, %v; want Posts with 2 items", got, err)
	}
	cs, err := f.s.Containers(f.ctx, f.inst)
	if err != nil || len(cs) != 2 || cs[0].ReferenceName != "Posts" || cs[1].ReferenceName != "Featured" {
		t.Errorf("Containers = %+v, %v", cs, err)
	}
	_, err = f.s.Container(f.ctx, f.instance("other"), "Posts")
	wantKind(t, "container of another instance", err, problem.NotFound)

	// Delete: not while it holds items or a model links to it.
	wantKind(t, "delete a container with items", f.s.DeleteContainer(f.ctx, f.inst, "Posts"), problem.Conflict)
	f.model("Page", "content", Field{Name: "featured", Type: TypeList, Container: "featured"})
	err = f.s.DeleteContainer(f.ctx, f.inst, "Featured")
	wantKind(t, "delete a linked container", err, problem.Conflict)
	wantDetail(t, "delete a linked container", err, `"Page"`)
	if err := f.s.DeleteModel(f.ctx, f.inst, "Page"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteContainer(f.ctx, f.inst, "FEATURED"); err != nil {
		t.Errorf("delete an empty, unlinked container: %v", err)
	}
	wantKind(t, "delete it again", f.s.DeleteContainer(f.ctx, f.inst, "Featured"), problem.NotFound)
}

func TestPageModelsAndChannels(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var manyZones []string
	for i := range 51 {
		manyZones = append(manyZones, fmt.Sprint("Zone", i))
	}
	tests := []struct {
		name   string
		model  string
		zones  []string
		fields []string
	}{
		{"bad name", "My Page", []string{"Main"}, []string{"name"}},
		{"no zones", "Page", nil, []string{"zones"}},
		{"bad zone name", "Page", []string{"Main", "side bar"}, []string{"zones[1]"}},
		{"duplicate zone", "Page", []string{"Main", "main"}, []string{"zones[1]"}},
		{"too many zones", "Page", manyZones, []string{"zones"}},
	}
	for _, tt := range tests {
		_, err := f.s.CreatePageModel(f.ctx, f.inst, tt.model, tt.zones)
		wantFields(t, tt.name, err, tt.fields...)
	}
	pm, err := f.s.CreatePageModel(f.ctx, f.inst, "Standard", []string{"Main", "Sidebar"})
	if err != nil {
		t.Fatal(err)
	}
	if pm.Name != "Standard" || len(pm.Zones) != 2 || pm.Zones[0] != "Main" {
		t.Errorf("page model = %+v", pm)
	}
	_, err = f.s.CreatePageModel(f.ctx, f.inst, "standard", []string{"X"})
	wantKind(t, "duplicate page model", err, problem.Conflict)
	f.s.CreatePageModel(f.ctx, f.inst, "Spare", []string{"X"})
	if pms, err := f.s.PageModels(f.ctx, f.inst); err != nil || len(pms) != 2 {
		t.Errorf("PageModels = %v, %v", pms, err)
	}
	if _, err := f.s.CreatePage(f.ctx, f.inst, "en-us", pageInput("Home", 0)); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "delete a used page model", f.s.DeletePageModel(f.ctx, f.inst, "STANDARD"), problem.Conflict)
	if err := f.s.DeletePageModel(f.ctx, f.inst, "spare"); err != nil {
		t.Errorf("delete an unused page model: %v", err)
	}
	wantKind(t, "delete an unknown page model", f.s.DeletePageModel(f.ctx, f.inst, "spare"), problem.NotFound)

	// Channels: website exists from the start.
	cs, err := f.s.Channels(f.ctx, f.inst)
	if err != nil || len(cs) != 1 || cs[0].Name != "website" {
		t.Errorf("Channels of a new instance = %+v, %v; want website", cs, err)
	}
	_, err = f.s.CreateChannel(f.ctx, f.inst, "Website")
	wantKind(t, "duplicate channel", err, problem.Conflict)
	_, err = f.s.CreateChannel(f.ctx, f.inst, "my channel")
	wantFields(t, "bad channel name", err, "name")
	if c, err := f.s.CreateChannel(f.ctx, f.inst, "Mobile"); err != nil || c.Name != "Mobile" {
		t.Errorf("CreateChannel(Mobile) = %+v, %v", c, err)
	}
	if c, err := f.s.Channel(f.ctx, f.inst, "mobile"); err != nil || c.Name != "Mobile" {
		t.Errorf("Channel(mobile) = %+v, %v", c, err)
	}
	_, err = f.s.Channel(f.ctx, f.inst, "print")
	wantKind(t, "unknown channel", err, problem.NotFound)
}
