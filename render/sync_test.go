package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/syncstamp"
)

// syncAnswer is a decoded sync answer.
type syncAnswer struct {
	SyncToken int64             `json:"syncToken"`
	Items     []json.RawMessage `json:"items"`
}

// syncAll reads a sync stream from token 0 with the page size, the way the
// sync client does, and returns the items (the last answer of each
// object wins) and the final token.
func (f *fixture) syncAll(flavour, locale, kind string, pageSize int) (map[int64]json.RawMessage, int64) {
	f.t.Helper()
	out := map[int64]json.RawMessage{}
	var token int64
	for {
		res, err := f.render(fmt.Sprintf("/%s/%s/sync/%s?syncToken=%d&pageSize=%d", flavour, locale, kind, token, pageSize))
		f.check("sync", err)
		var a syncAnswer
		f.check("decode sync", json.Unmarshal(res.Body, &a))
		if len(a.Items) > pageSize {
			f.t.Errorf("sync answered %d items for pageSize %d", len(a.Items), pageSize)
		}
		if (a.SyncToken == 0) != (len(a.Items) == 0) {
			f.t.Errorf("sync after %d: token %d with %d items; want 0 exactly when there are none", token, a.SyncToken, len(a.Items))
		}
		for _, it := range a.Items {
			var id struct{ ContentID, PageID int64 }
			f.check("decode item", json.Unmarshal(it, &id))
			out[id.ContentID+id.PageID] = it
		}
		if a.SyncToken <= token {
			return out, token
		}
		token = a.SyncToken
	}
}

// TestSyncMatchesFetch reads every sync stream of the fixture page by page
// and checks each visible entry against the item or page the Fetch API
// answers at depth 0, and that the streams hold exactly what the flavour
// shows.
func TestSyncMatchesFetch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, fl := range []string{"fetch", "preview"} {
		for _, loc := range []string{en, fr} {
			items, token := f.syncAll(fl, loc, "items", 3)
			if token == 0 {
				t.Fatalf("%s %s: no sync token", fl, loc)
			}
			shown := 0
			for id, got := range items {
				want, err := f.render(fmt.Sprintf("/%s/%s/item/%d?contentLinkDepth=0", fl, loc, id))
				if problem.Is(err, problem.NotFound) {
					t.Errorf("%s %s: sync has item %d, which the Fetch API does not show: %s", fl, loc, id, got)
					continue
				}
				f.check("item", err)
				shown++
				if !bytes.Equal(got, want.Body) {
					t.Errorf("%s %s item %d:\nsync  %s\nfetch %s", fl, loc, id, got, want.Body)
				}
			}
			// Every item the flavour shows is there (components included).
			var n int
			q := `SELECT count(*) FROM item_copies WHERE instance_id = $1 AND locale = $2 AND published_version_id IS NOT NULL`
			if fl == "preview" {
				q = `SELECT count(*) FROM item_copies WHERE instance_id = $1 AND locale = $2 AND state <> 3`
			}
			f.check("count", f.db.GetContext(f.ctx, &n, q, f.inst.ID, loc))
			if shown != n {
				t.Errorf("%s %s: sync shows %d items, the flavour %d", fl, loc, shown, n)
			}

			pages, _ := f.syncAll(fl, loc, "pages", 2)
			for id, got := range pages {
				want, err := f.render(fmt.Sprintf("/%s/%s/page/%d?contentLinkDepth=0", fl, loc, id))
				f.check("page", err)
				if !bytes.Equal(got, want.Body) {
					t.Errorf("%s %s page %d:\nsync  %s\nfetch %s", fl, loc, id, got, want.Body)
				}
			}
		}
	}
}

// TestSyncChanges follows the fetch item stream through an unpublish, an
// edit and a republish, and the page stream through a page unpublish.
func TestSyncChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, token := f.syncAll("fetch", en, "items", 500)
	_, pageToken := f.syncAll("fetch", en, "pages", 500)

	f.act("third", en, content.ActionUnpublish)
	f.save("second", en, "title", "Second, again")
	f.act("second", en, content.ActionPublish)
	f.save("hello", en, "title", "Not published")
	_, err := f.s.PageAction(f.ctx, f.inst, en, f.page["external"], content.ActionUnpublish)
	f.check("unpublish page", err)

	res, v := f.mustRender(fmt.Sprintf("/fetch/en-us/sync/items?syncToken=%d", token))
	items := v.(map[string]any)["items"].([]any)
	var got []string
	for _, it := range items {
		m := it.(map[string]any)
		state := m["properties"].(map[string]any)["state"]
		got = append(got, fmt.Sprintf("%v:%v", m["contentID"], state))
	}
	want := []string{fmt.Sprintf("%d:3", f.item["third"]), fmt.Sprintf("%d:2", f.item["second"])}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("fetch changes after %d = %v, want %v\n%s", token, got, want, res.Body)
	}
	_, v = f.mustRender(fmt.Sprintf("/fetch/en-us/sync/pages?syncToken=%d", pageToken))
	pages := v.(map[string]any)["items"].([]any)
	if len(pages) != 1 || fmt.Sprint(pages[0].(map[string]any)["pageID"]) != fmt.Sprint(f.page["external"]) {
		t.Errorf("fetch page changes = %v, want the unpublished page", pages)
	}
	// The answer's token is the last change's; after it nothing is left.
	var a syncAnswer
	f.check("decode", json.Unmarshal(res.Body, &a))
	res, _ = f.mustRender(fmt.Sprintf("/fetch/en-us/sync/items?syncToken=%d", a.SyncToken))
	if string(res.Body) != `{"syncToken":0,"items":[]}` {
		t.Errorf("after the last token: %s", res.Body)
	}
}

// TestSyncGolden keeps the shapes of sync answers (with a tombstone),
// gallery and URL redirection answers as golden files.
func TestSyncGolden(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.check("stamp", stamp(f))
	_, before := f.syncAll("preview", en, "items", 500)
	f.act("gone", en, content.ActionDelete)
	f.check("stamp", stamp(f))
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 64, 48)))
	file, err := content.InspectAsset(buf.Bytes())
	f.check("InspectAsset", err)
	asset, err := f.s.CreateAsset(f.ctx, f.inst, content.NewAsset{File: file, FileName: "beans.png", Label: "Green beans"},
		func(context.Context) error { return nil })
	f.check("CreateAsset", err)
	_, err = f.s.AddGalleryAssets(f.ctx, f.inst, 7, []int64{asset.ID})
	f.check("AddGalleryAssets", err)
	_, err = f.s.CreateRedirection(f.ctx, f.inst, content.RedirectionInput{OriginURL: ptr("/old"), DestinationURL: ptr("/new")})
	f.check("CreateRedirection", err)

	for _, c := range []struct{ name, url string }{
		{"sync_items_fetch", "/fetch/en-us/sync/items?pageSize=4"},
		{"sync_items_preview_fr", "/preview/fr-ca/sync/items"},
		{"sync_pages_fetch", "/fetch/en-us/sync/pages?pageSize=3"},
		{"sync_items_preview_tombstone", fmt.Sprintf("/preview/en-us/sync/items?syncToken=%d", before)},
		{"gallery", "/fetch/gallery/7"},
		{"urlredirection", "/fetch/urlredirection"},
	} {
		res, err := f.render(c.url)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		var pretty bytes.Buffer
		json.Indent(&pretty, res.Body, "", "  ")
		pretty.WriteByte('\n')
		golden(t, c.name+".golden.json", pretty.Bytes())
	}
}

// stamp stamps pending sync changes with the fixture's clock, so that the
// golden files do not depend on the time of the test.
func stamp(f *fixture) error {
	st := syncstamp.New(f.s.DB())
	st.Now = f.s.Now
	_, err := st.Stamp(f.ctx)
	return err
}

func TestGalleryAndRedirections(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, url := range []string{"/fetch/gallery/8", "/preview/gallery/999999"} {
		if _, err := f.render(url); !problem.Is(err, problem.NotFound) {
			t.Errorf("%s: %v, want NotFound", url, err)
		}
	}
	_, fetchGallery := f.mustRender("/fetch/gallery/7")
	_, previewGallery := f.mustRender("/preview/gallery/7")
	if !reflect.DeepEqual(fetchGallery, previewGallery) {
		t.Errorf("fetch and preview galleries differ: %v, %v", fetchGallery, previewGallery)
	}

	_, v := f.mustRender("/fetch/urlredirection")
	first := v.(map[string]any)
	last := first["lastAccessDate"].(string)
	if first["isUpToDate"] != false || len(first["items"].([]any)) != 0 {
		t.Errorf("redirections without lastAccessDate = %v", first)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", last); err != nil {
		t.Errorf("lastAccessDate %q: %v", last, err)
	}
	check := func(since string, upToDate bool, items int) string {
		t.Helper()
		_, v := f.mustRender("/fetch/urlredirection?lastAccessDate=" + since)
		m := v.(map[string]any)
		if m["isUpToDate"] != upToDate || len(m["items"].([]any)) != items {
			t.Errorf("redirections since %s = %v, want isUpToDate %v with %d items", since, m, upToDate, items)
		}
		return m["lastAccessDate"].(string)
	}
	check(last, true, 0)
	_, err := f.s.CreateRedirection(f.ctx, f.inst, content.RedirectionInput{OriginURL: ptr("/a"), DestinationURL: ptr("/b")})
	f.check("CreateRedirection", err)
	next := check(last, false, 1)
	if next <= last {
		t.Errorf("lastAccessDate after a change = %s, not after %s", next, last)
	}
	check(next, true, 0)
	check("2999-01-01T00:00:00Z", true, 0)
}
