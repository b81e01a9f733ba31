package archive_test

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/archive"
	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/demo"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/store/miniotest"
	"github.com/edgecms/edgecms/syncstamp"
)

// The guids of the tests are unlike any word of the demo's content, so
// that the new guid can replace the old in the original's answers.
const (
	srcGuid = "src-7f3a"
	newGuid = "dst-19c2"
)

// source is an instance with the demo site, uploaded assets (a PNG used in
// an image field and a gallery, an SVG, a PDF), a redirection and a
// webhook that signs, published and stamped for sync.
type source struct {
	*site
	inst                        content.Instance
	token, fetchKey, previewKey string
	photo                       int64 // an item with versions whose image values name assets
}

func newSource(t *testing.T) *source {
	t.Helper()
	ctx := context.Background()
	s := &source{site: newSite(t)}
	var err error
	s.inst, err = s.cs.CreateInstance(ctx, srcGuid, []content.Locale{{Code: "en-us", Name: "English"}, {Code: "fr-ca", Name: "Français"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, s.token, err = s.cs.CreateToken(ctx, s.inst, "test", content.RoleFull); err != nil {
		t.Fatal(err)
	}
	name := "default"
	if _, s.fetchKey, err = s.cs.CreateAPIKey(ctx, s.inst, content.APIKeyInput{Name: &name, Type: "fetch"}); err != nil {
		t.Fatal(err)
	}
	if _, s.previewKey, err = s.cs.CreateAPIKey(ctx, s.inst, content.APIKeyInput{Name: &name, Type: "preview"}); err != nil {
		t.Fatal(err)
	}
	if err := demo.Fill(ctx, s.cs, s.inst); err != nil {
		t.Fatal(err)
	}
	g := srcGuid
	var photo, other struct {
		AssetID int64  `json:"assetID"`
		Key     string `json:"key"`
	}
	s.manage(g, s.token, "POST", "/assets", upload("beans.png", testPNG(40, 30, color.Gray{Y: 90}), "Green beans"), &photo)
	s.manage(g, s.token, "POST", "/assets", upload("beans-again.png", testPNG(40, 30, color.Gray{Y: 90}), "Same bytes"), nil)
	s.manage(g, s.token, "POST", "/assets", upload("dot.svg",
		[]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><circle cx="2" cy="2" r="2"/></svg>`), "Dot"), &other)
	s.manage(g, s.token, "POST", "/assets", upload("menu.pdf", []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"), "Menu"), nil)
	s.manage(g, s.token, "POST", "/models", map[string]any{"name": "Photo", "kind": "content", "fields": []map[string]any{
		{"name": "title", "type": "text"}, {"name": "picture", "type": "image"}, {"name": "icon", "type": "image"}}}, nil)
	s.manage(g, s.token, "POST", "/containers", map[string]any{"referenceName": "photos", "model": "Photo"}, nil)
	var item struct {
		ContentID int64 `json:"contentID"`
	}
	s.manage(g, s.token, "POST", "/en-us/items", map[string]any{"referenceName": "photos", "fields": map[string]any{
		"title": "Beans", "picture": map[string]any{"assetID": photo.AssetID, "label": "Beans"},
		"icon": map[string]any{"assetID": other.AssetID}}}, &item)
	s.manage(g, s.token, "PUT", fmt.Sprintf("/fr-ca/items/%d", item.ContentID), map[string]any{"fields": map[string]any{
		"title": "Haricots", "picture": map[string]any{"assetID": photo.AssetID}}}, nil)
	for _, l := range []string{"en-us", "fr-ca"} {
		s.manage(g, s.token, "POST", fmt.Sprintf("/%s/items/%d/publish", l, item.ContentID), nil, nil)
	}
	// A working copy ahead of the published one: preview shows it.
	s.manage(g, s.token, "PUT", fmt.Sprintf("/en-us/items/%d", item.ContentID), map[string]any{"fields": map[string]any{"title": "Beans, draft"}}, nil)
	s.photo = item.ContentID
	var gallery map[string]any
	s.manage(g, s.token, "POST", "/galleries", map[string]any{"name": "Market", "description": "Stalls"}, &gallery)
	gid := int64(gallery["galleryID"].(float64))
	s.manage(g, s.token, "POST", fmt.Sprintf("/galleries/%d/assets", gid), map[string]any{"assetIDs": []int64{other.AssetID, photo.AssetID}}, nil)
	s.manage(g, s.token, "POST", "/redirections", map[string]any{"originUrl": "/old", "destinationUrl": "/new", "statusCode": 301}, nil)
	s.manage(g, s.token, "POST", "/webhook", map[string]any{"name": "site", "url": "http://127.0.0.1:9/hook",
		"contentPublishEvents": true, "secureDeliveryEnabled": true}, nil)
	if err := s.pub.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := syncstamp.New(s.db).Stamp(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// export writes the source's archive to a file and returns its path.
func (s *source) export(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "site.tar")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := archive.Export(context.Background(), s.db, s.objects, srcGuid, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("exported %+v", sum)
	return path
}

// TestRoundTrip exports the source and imports it into a fresh database
// and store (a folder, and MinIO), with its guid and with a new one: every Fetch API answer,
// both flavours, the sync streams, galleries, redirections and asset
// bytes, and every object the publisher wrote, are the same bytes (with
// the new guid in place of the old).
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	src := newSource(t)
	paths := src.requestPaths(srcGuid)
	if len(paths) < 100 {
		t.Fatalf("only %d requests to compare", len(paths))
	}
	before := src.answers(paths, src.fetchKey, src.previewKey)
	for p, a := range before {
		if a.status != 200 {
			t.Fatalf("before export: %s = %s", p, a)
		}
	}
	objectsBefore := src.storeObjects(srcGuid + "/")
	file := src.export(t)

	var minio miniotest.Shared
	t.Cleanup(minio.Stop)
	for _, tc := range []struct {
		name, guid string
		minio      bool
	}{{"same guid", "", false}, {"new guid", newGuid, false}, {"new guid into MinIO", newGuid, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var dst *site
			if tc.minio {
				endpoint, access, secret := minio.Start(t)
				objects, err := store.Open(ctx, "s3://roundtrip?endpoint="+endpoint+"&secure=false&create=true",
					store.Options{AccessKey: access, SecretKey: secret})
				if err != nil {
					t.Fatal(err)
				}
				dst = newSiteOn(t, objects)
			} else {
				dst = newSite(t)
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sum, err := archive.Import(ctx, dst.db, dst.objects, f, archive.ImportOptions{Guid: tc.guid})
			if err != nil {
				t.Fatal(err)
			}
			guid := srcGuid
			if tc.guid != "" {
				guid = tc.guid
			}
			if sum.Guid != guid || sum.Assets != 3 || len(sum.Notes) != 1 {
				t.Errorf("Import = %+v, want guid %s, 3 assets (4 with 3 distinct bytes), a note on the webhook", sum, guid)
			}
			if err := dst.pub.Republish(ctx, guid, nil); err != nil {
				t.Fatal(err)
			}
			if err := dst.pub.PublishKeys(ctx, guid); err != nil {
				t.Fatal(err)
			}
			if _, err := syncstamp.New(dst.db).Stamp(ctx); err != nil {
				t.Fatal(err)
			}
			moved := func(s string) string { return strings.ReplaceAll(s, srcGuid, guid) }
			after := dst.answers(dst.requestPaths(guid), src.fetchKey, src.previewKey)
			if len(after) != len(before) {
				t.Errorf("%d requests after import, %d before", len(after), len(before))
			}
			for p, want := range before {
				want.body = moved(want.body)
				got, ok := after[moved(p)]
				if !ok {
					t.Errorf("%s: not maintained after import", moved(p))
					continue
				}
				if got != want {
					t.Errorf("%s after import:\n got %.600s\nwant %.600s", moved(p), got, want)
				}
			}
			objectsAfter := dst.storeObjects(guid + "/")
			for k, want := range objectsBefore {
				if got := objectsAfter[moved(k)]; got != moved(want) {
					t.Errorf("object %s after import:\n got %.400q\nwant %.400q", moved(k), got, moved(want))
				}
			}
			if len(objectsAfter) != len(objectsBefore) {
				t.Errorf("%d objects after import, %d before", len(objectsAfter), len(objectsBefore))
			}
			// History moves with the instance: the versions of every copy
			// (asset keys moved to the new guid) and the audit log, row
			// for row; restoring an old version works.
			for _, q := range []string{
				`SELECT coalesce(jsonb_agg(to_jsonb(t) - 'instance_id' ORDER BY content_id, locale, version_id), '[]') FROM item_versions t
					WHERE instance_id = (SELECT id FROM instances WHERE guid = $1)`,
				`SELECT coalesce(jsonb_agg(to_jsonb(t) - 'instance_id' ORDER BY page_id, locale, version_id), '[]') FROM page_versions t
					WHERE instance_id = (SELECT id FROM instances WHERE guid = $1)`,
				`SELECT coalesce(jsonb_agg(to_jsonb(t) - 'instance_id' ORDER BY id), '[]') FROM audit t
					WHERE instance_id = (SELECT id FROM instances WHERE guid = $1)`,
			} {
				var want, got string
				if err := src.db.Get(&want, q, srcGuid); err != nil {
					t.Fatal(err)
				}
				if err := dst.db.Get(&got, q, guid); err != nil {
					t.Fatal(err)
				}
				if want == "[]" {
					t.Errorf("%s: the source has none", q)
				}
				if got != moved(want) {
					t.Errorf("after import, %s:\n got %.800s\nwant %.800s", q, got, moved(want))
				}
			}
			var versions struct {
				Items []struct {
					VersionID int64 `json:"versionID"`
				} `json:"items"`
			}
			photo := fmt.Sprintf("/en-us/items/%d", src.photo)
			dst.manage(guid, src.token, "GET", photo+"/versions", nil, &versions)
			if len(versions.Items) != 2 {
				t.Fatalf("photo versions after import = %+v, want create and save", versions)
			}
			dst.manage(guid, src.token, "POST", fmt.Sprintf("%s/versions/%d/restore", photo, versions.Items[1].VersionID), nil, nil)
			var restored struct {
				Fields map[string]any `json:"fields"`
			}
			dst.manage(guid, src.token, "GET", photo, nil, &restored)
			if pic, _ := restored.Fields["picture"].(map[string]any); restored.Fields["title"] != "Beans" || !strings.HasPrefix(fmt.Sprint(pic["key"]), guid+"/") {
				t.Errorf("photo restored after import = %v, want the first version with keys under %s/", restored.Fields, guid)
			}
			// The management token works too, and the webhook waits for
			// a save with a new secret.
			var hooks struct{ Items []map[string]any }
			dst.manage(guid, src.token, "GET", "/webhook/list", nil, &hooks)
			if len(hooks.Items) != 1 || hooks.Items[0]["enabled"] != false {
				t.Errorf("webhooks after import = %v, want the one, disabled", hooks)
			}
		})
	}
}

// TestImportRefusesTakenIDs imports an archive into the database it came
// from under a new guid: the ids are the original's, so nothing is
// imported and the error says why.
func TestImportRefusesTakenIDs(t *testing.T) {
	t.Parallel()
	src := newSource(t)
	file := src.export(t)
	ctx := context.Background()
	for _, guid := range []string{"", newGuid} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		_, err = archive.Import(ctx, src.db, src.objects, f, archive.ImportOptions{Guid: guid})
		f.Close()
		if err == nil {
			t.Fatalf("Import(guid %q) into the original's database succeeded", guid)
		}
		t.Logf("guid %q: %v", guid, err)
		want := "ids of the archive are taken"
		if guid == "" {
			want = "exists already"
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Import(guid %q) = %v, want an error saying %q", guid, err, want)
		}
	}
	var n int
	if err := src.db.Get(&n, `SELECT count(*) FROM instances`); err != nil || n != 1 {
		t.Errorf("%d instances after the refused imports (%v), want 1", n, err)
	}
	if _, err := src.objects.Stat(ctx, newGuid+"/assets/"); err == nil {
		t.Errorf("bytes left in the store")
	}
	var keys []string
	src.objects.List(ctx, newGuid+"/", func(i store.Info) error { keys = append(keys, i.Key); return nil })
	if len(keys) > 0 {
		t.Errorf("a refused import left %v in the store", keys)
	}
}

// TestExportMissingBytes exports an instance whose store lost an asset's
// bytes: the export fails and names the key, rather than write an archive
// that cannot be restored.
func TestExportMissingBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newSource(t)
	var key string
	if err := src.db.Get(&key, `SELECT object_key FROM assets ORDER BY id LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if err := src.objects.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	_, err := archive.Export(ctx, src.db, src.objects, srcGuid, io.Discard)
	if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Export with %s gone = %v, want an error naming it", key, err)
	}
}
