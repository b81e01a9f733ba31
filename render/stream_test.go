package render

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// chunks is an io.Writer that records each write.
type chunks struct {
	bytes.Buffer
	writes int
}

func (c *chunks) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

// failAfter fails every write after the first n.
type failAfter struct{ n int }

var errWrite = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errWrite
	}
	f.n--
	return len(p), nil
}

// TestRenderToSitemap checks that a sitemap rendered to a writer comes
// out in pieces, with the bytes and tags Render gives, contested paths
// (-2 suffixes) and the subtree repeated below each dynamic node
// included; and that an error of the writer ends the render.
func TestRenderToSitemap(t *testing.T) {
	t.Parallel()
	const posts = 300
	f := newFixtureOf(t, []content.Locale{{Code: en, Name: "English"}}, func(f *fixture) {
		f.model("Post", "content", content.Field{Name: "slug", Type: content.TypeText})
		_, err := f.s.CreateContainer(f.ctx, f.inst, "posts", "Post")
		f.check("CreateContainer", err)
		for i := range posts {
			name := fmt.Sprint("post", i)
			f.newItem(name, en, "posts", "slug", fmt.Sprint("post-", i%250)) // 50 contested paths
			f.act(name, en, content.ActionPublish)
		}
		_, err = f.s.CreatePageModel(f.ctx, f.inst, "OneColumn", []string{"Main"})
		f.check("CreatePageModel", err)
		f.newPage("blog", en, content.PageInput{Title: ptr("blog"), PageModel: ptr("OneColumn"),
			Dynamic: &content.Dynamic{ReferenceName: "posts", PathField: "slug"}})
		f.publishPage("blog", en)
		f.newPage("comments", en, content.PageInput{Title: ptr("comments"), PageModel: ptr("OneColumn"), ParentPageID: f.parent("blog")})
		f.publishPage("comments", en)
		f.newPage("post-3", en, content.PageInput{Title: ptr("post-3"), PageModel: ptr("OneColumn")})
		f.publishPage("post-3", en)
	})
	for _, url := range []string{"/fetch/en-us/sitemap/flat/website", "/fetch/en-us/sitemap/nested/website",
		"/preview/en-us/sitemap/flat/website", "/preview/en-us/sitemap/nested/website"} {
		want, err := f.render(url)
		f.check("Render "+url, err)
		var out chunks
		got, err := f.r.RenderTo(f.ctx, f.site, f.request(url), f.r.reads, &out)
		f.check("RenderTo "+url, err)
		if !bytes.Equal(out.Bytes(), want.Body) {
			t.Errorf("%s: RenderTo wrote %d bytes unlike Render's %d", url, out.Len(), len(want.Body))
		}
		if got.Body != nil || !slices.Equal(got.Tags, want.Tags) {
			t.Errorf("%s: RenderTo gave body %d bytes, tags %v; want none, %v", url, len(got.Body), got.Tags, want.Tags)
		}
		if min := len(want.Body) / flushBytes; out.writes < min {
			t.Errorf("%s: %d writes for %d bytes, want at least %d", url, out.writes, len(want.Body), min)
		}
		if !bytes.Contains(want.Body, []byte(`"/post-3-2"`)) || !bytes.Contains(want.Body, []byte(`/post-249/comments`)) {
			t.Errorf("%s: the fixture lacks contested paths or repeated subtrees", url)
		}
		if _, err := f.r.RenderTo(f.ctx, f.site, f.request(url), f.r.reads, &failAfter{n: 1}); !errors.Is(err, errWrite) {
			t.Errorf("%s: RenderTo to a failing writer: %v, want %v", url, err, errWrite)
		}
	}
}
