package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenCases are the answers kept as testdata/<name>.golden.json: every
// kind of request, in both flavours, at depths 0 to 2, with and without
// expandAllContentLinks where it matters.
func goldenCases() []struct{ name, url string } {
	var cs []struct{ name, url string }
	add := func(name, url string) { cs = append(cs, struct{ name, url string }{name, url}) }
	for _, fl := range []string{"fetch", "preview"} {
		for d := 0; d <= 2; d++ {
			for _, all := range []bool{false, true} {
				suffix := fmt.Sprintf("%s_d%d", fl, d)
				if all {
					suffix += "_all"
				}
				q := fmt.Sprintf("?contentLinkDepth=%d&expandAllContentLinks=%t", d, all)
				add("item_hello_"+suffix, "/"+fl+"/en-us/item/{hello}"+q)
				add("page_home_"+suffix, "/"+fl+"/en-us/page/{home}"+q)
			}
		}
		add("item_second_"+fl+"_d1", "/"+fl+"/en-us/item/{second}")
		add("item_hello_fr_"+fl+"_d1", "/"+fl+"/fr-ca/item/{hello}")
		add("list_posts_"+fl, "/"+fl+"/en-us/list/posts")
		add("list_posts_"+fl+"_d0_all", "/"+fl+"/en-us/list/posts?contentLinkDepth=0&expandAllContentLinks=true")
		add("list_posts_"+fl+"_sort_views_desc_take2_skip1", "/"+fl+"/en-us/list/posts?sort=fields.views&direction=desc&take=2&skip=1&contentLinkDepth=0")
		add("list_posts_"+fl+"_filter_fields", "/"+fl+"/en-us/list/posts?filter=fields.views[gt]5&fields=title,category&take=10&")
		add("list_categories_"+fl+"_d0", "/"+fl+"/en-us/list/categories?contentLinkDepth=0")
		add("page_about_"+fl+"_d1", "/"+fl+"/en-us/page/{about}?contentLinkDepth=1")
		add("page_postdetail_"+fl+"_d1", "/"+fl+"/en-us/page/{postDetail}?contentLinkDepth=1")
		add("page_home_fr_"+fl, "/"+fl+"/fr-ca/page/{home}")
		add("pagepath_about_"+fl, "/"+fl+"/en-us/page/website?path=/about-us")
		add("pagepath_link_"+fl+"_d0", "/"+fl+"/en-us/page/website?path=/external&contentLinkDepth=0")
		add("sitemap_flat_"+fl, "/"+fl+"/en-us/sitemap/flat/website")
		add("sitemap_nested_"+fl, "/"+fl+"/en-us/sitemap/nested/website")
		add("sitemap_flat_fr_"+fl, "/"+fl+"/fr-ca/sitemap/flat/website")
		add("sitemap_flat_footer_"+fl, "/"+fl+"/en-us/sitemap/flat/footer")
	}
	add("pagepath_dynamic_fetch_d1", "/fetch/en-us/page/website?path=/blog/hello-world&contentLinkDepth=1")
	add("pagepath_dynamic_preview_d1", "/preview/en-us/page/website?path=/blog/hello-world-edited&contentLinkDepth=1")
	add("pagepath_dynamic_preview_d2", "/preview/en-us/page/website?path=/blog/draft-post&contentLinkDepth=2")
	return cs
}

// TestGolden compares every rendered answer, indented, with its golden file,
// and the tags of all of them with testdata/tags.golden.txt. Run
// go test ./render -run TestGolden -update to rewrite them after a reviewed
// change.
func TestGolden(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var tags strings.Builder
	for _, c := range goldenCases() {
		res, err := f.render(c.url)
		if err != nil {
			t.Errorf("%s: Render(%s): %v", c.name, c.url, err)
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, res.Body); err != nil {
			t.Errorf("%s: body is not JSON: %v\n%s", c.name, err, res.Body)
			continue
		}
		if !bytes.Equal(compact.Bytes(), res.Body) {
			t.Errorf("%s: body is not compact JSON", c.name)
		}
		var pretty bytes.Buffer
		json.Indent(&pretty, res.Body, "", "  ")
		pretty.WriteByte('\n')
		fmt.Fprintf(&tags, "%s: %s\n", c.name, strings.Join(res.Tags, " "))
		golden(t, c.name+".golden.json", pretty.Bytes())
	}
	golden(t, "tags.golden.txt", []byte(tags.String()))
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (run with -update to create it)", name, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after review):\n%s", name, diff(string(want), string(got)))
	}
}

// diff shows the first differing lines of want and got.
func diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
		}
	}
	return "(no line differs)"
}
