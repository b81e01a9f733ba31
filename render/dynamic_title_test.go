package render

import (
	"encoding/json"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// TestDynamicNodeTitles checks that the sitemap nodes of a dynamic page are
// titled after their item, as Agility names them: the page's titleField,
// else the model's field named title (in any case), else the path value.
func TestDynamicNodeTitles(t *testing.T) {
	t.Parallel()
	f := newFixtureOf(t, []content.Locale{{Code: en, Name: "English"}}, func(f *fixture) {
		f.model("Post", "content",
			content.Field{Name: "slug", Type: content.TypeText},
			content.Field{Name: "Title", Type: content.TypeText},
			content.Field{Name: "headline", Type: content.TypeText})
		f.model("Tag", "content", content.Field{Name: "slug", Type: content.TypeText})
		for _, ref := range []string{"posts", "tags"} {
			model := map[string]string{"posts": "Post", "tags": "Tag"}[ref]
			_, err := f.s.CreateContainer(f.ctx, f.inst, ref, model)
			f.check("CreateContainer", err)
		}
		f.newItem("post", en, "posts", "slug", "hello-edge", "Title", "Hello, edge", "headline", "Edge computing, explained")
		f.act("post", en, content.ActionPublish)
		f.newItem("tag", en, "tags", "slug", "go")
		f.act("tag", en, content.ActionPublish)
		_, err := f.s.CreatePageModel(f.ctx, f.inst, "OneColumn", []string{"Main"})
		f.check("CreatePageModel", err)
		// Dynamic pages have no node of their own: their items' nodes
		// are at the root, the second page's at hello-edge-2.
		for _, p := range []struct {
			name string
			d    *content.Dynamic
		}{
			{"byDefault", &content.Dynamic{ReferenceName: "posts", PathField: "slug"}},
			{"byHeadline", &content.Dynamic{ReferenceName: "posts", PathField: "slug", TitleField: "headline"}},
			{"byPath", &content.Dynamic{ReferenceName: "tags", PathField: "slug"}},
		} {
			f.newPage(p.name, en, content.PageInput{Title: ptr(p.name), PageModel: ptr("OneColumn"), Dynamic: p.d})
			f.publishPage(p.name, en)
		}
	})
	for _, flavour := range []string{"fetch", "preview"} {
		res, err := f.render("/" + flavour + "/en-us/sitemap/flat/website")
		if err != nil {
			t.Fatal(err)
		}
		var sm map[string]struct {
			Title    string `json:"title"`
			MenuText string `json:"menuText"`
		}
		if err := json.Unmarshal(res.Body, &sm); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]string{
			"/hello-edge":   "Hello, edge",
			"/hello-edge-2": "Edge computing, explained",
			"/go":           "go",
		} {
			if n := sm[path]; n.Title != want || n.MenuText != want {
				t.Errorf("%s: node %s = %+v, want title and menuText %q", flavour, path, n, want)
			}
		}
	}
}
