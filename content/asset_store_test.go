package content

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
)

// testImage encodes a w x h image in format (png, jpeg or gif).
func testImage(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// asset records a w x h PNG as an asset of inst.
func (f *fixture) asset(inst Instance, w, h int, name, label string) Asset {
	f.t.Helper()
	file, err := InspectAsset(testImage(f.t, "png", w, h))
	if err != nil {
		f.t.Fatal(err)
	}
	a, err := f.s.CreateAsset(f.ctx, inst, NewAsset{File: file, FileName: name, Label: label}, noStoreCheck)
	if err != nil {
		f.t.Fatalf("CreateAsset: %v", err)
	}
	return a
}

// noStoreCheck is the store check of CreateAsset for tests without an
// object store.
func noStoreCheck(context.Context) error { return nil }

// gallery creates a gallery of inst.
func (f *fixture) gallery(inst Instance, name string) MediaGallery {
	f.t.Helper()
	g, err := f.s.CreateGallery(f.ctx, inst, GalleryInput{Name: &name})
	if err != nil {
		f.t.Fatalf("CreateGallery(%q): %v", name, err)
	}
	return g
}

// TestInspectAsset checks the inspection of files held in memory; package
// media tests the types in detail.
func TestInspectAsset(t *testing.T) {
	t.Parallel()
	wide := testImage(t, "png", media.MaxSide+1, 1)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="3"><script>alert(1)</script></svg>`)
	tests := []struct {
		name string
		body []byte
		want AssetFile // ContentType empty: refused
		kind problem.Kind
	}{
		{"png", testImage(t, "png", 40, 30), AssetFile{ContentType: "image/png", Ext: "png", Width: 40, Height: 30}, 0},
		{"jpeg", testImage(t, "jpeg", 7, 5), AssetFile{ContentType: "image/jpeg", Ext: "jpg", Width: 7, Height: 5}, 0},
		{"gif", testImage(t, "gif", 3, 9), AssetFile{ContentType: "image/gif", Ext: "gif", Width: 3, Height: 9}, 0},
		// Served under a policy that runs no script (see media.Headers).
		{"svg", svg, AssetFile{ContentType: "image/svg+xml", Ext: "svg", Width: 4, Height: 3}, 0},
		{"empty", nil, AssetFile{}, problem.Invalid},
		{"text", []byte("hello, I am not a picture"), AssetFile{}, problem.Invalid},
		{"html named png", []byte("<html><script>alert(1)</script></html>"), AssetFile{}, problem.Invalid},
		{"webp, broken header", append([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), make([]byte, 32)...), AssetFile{}, problem.Invalid},
		{"png signature, broken header", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...), AssetFile{}, problem.Invalid},
		{"too wide", wide, AssetFile{}, problem.Invalid},
		{"too large", append(testImage(t, "png", 1, 1), make([]byte, DefaultMaxAssetBytes)...), AssetFile{}, problem.TooLarge},
	}
	for _, tt := range tests {
		got, err := InspectAsset(tt.body)
		if tt.kind != 0 {
			if !problem.Is(err, tt.kind) {
				t.Errorf("InspectAsset(%s) = %+v, %v; want a %v problem", tt.name, got, err, tt.kind)
			}
			continue
		}
		if err != nil {
			t.Errorf("InspectAsset(%s): %v", tt.name, err)
			continue
		}
		sum := sha256.Sum256(tt.body)
		if got.SHA256 != hex.EncodeToString(sum[:]) || got.Size != int64(len(tt.body)) {
			t.Errorf("InspectAsset(%s): sha256 %s size %d", tt.name, got.SHA256, got.Size)
		}
		if _, _, ok := media.ParseName(got.Name()); !ok {
			t.Errorf("InspectAsset(%s): name %q is not valid", tt.name, got.Name())
		}
		got.Size, got.SHA256 = 0, ""
		if got != tt.want {
			t.Errorf("InspectAsset(%s) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.s.PublicURL = "https://cdn.example.com/cms"
	a := f.asset(f.inst, 40, 30, `C:\fakepath\photo.png`, "A photo")
	if a.FileName != "photo.png" || a.Label != "A photo" || a.Width != 40 || a.Height != 30 || a.ContentType != "image/png" {
		t.Errorf("asset = %+v", a)
	}
	if want := "acme/assets/" + a.SHA256 + ".png"; a.Key != want || a.URL != "https://cdn.example.com/cms/"+want {
		t.Errorf("key = %q, url %q; want %q below the public URL", a.Key, a.URL, want)
	}
	if got, err := f.s.Asset(f.ctx, f.inst, a.ID); err != nil || got.URL != a.URL {
		t.Errorf("Asset = %+v, %v; want url %s", got, err, a.URL)
	}
	same := f.asset(f.inst, 40, 30, "again.png", "")
	if same.Key != a.Key || same.ID == a.ID {
		t.Errorf("the same bytes again: asset %d at %q, want a new asset at %q", same.ID, same.Key, a.Key)
	}
	other := f.asset(f.instance("other"), 40, 30, "photo.png", "")
	if other.Key == a.Key {
		t.Errorf("another instance's asset shares the key %q", a.Key)
	}

	file, _ := InspectAsset(testImage(t, "png", 1, 1))
	for _, tt := range []struct {
		in     NewAsset
		fields []string
	}{
		{NewAsset{File: file, FileName: ""}, []string{"fileName"}},
		{NewAsset{File: file, FileName: "a\x01.png"}, []string{"fileName"}},
		{NewAsset{File: file, FileName: strings.Repeat("é", 256)}, []string{"fileName"}},
		{NewAsset{File: file, FileName: "a.png", Label: strings.Repeat("x", 1001)}, []string{"label"}},
	} {
		_, err := f.s.CreateAsset(f.ctx, f.inst, tt.in, noStoreCheck)
		wantFields(t, fmt.Sprintf("CreateAsset(%q, label of %d)", tt.in.FileName, len(tt.in.Label)), err, tt.fields...)
	}

	p, err := f.s.Assets(f.ctx, f.inst, 1, 1)
	if err != nil || p.TotalCount != 2 || len(p.Items) != 1 || p.Items[0].ID != same.ID {
		t.Errorf("Assets(take 1, skip 1) = %+v, %v; want the second of 2", p, err)
	}
	if _, err := f.s.Asset(f.ctx, f.inst, other.ID); !problem.Is(err, problem.NotFound) {
		t.Errorf("Asset(another instance's) = %v, want NotFound", err)
	}
	if got, err := f.s.AssetByKey(f.ctx, a.Key); err != nil || got.ID != a.ID {
		t.Errorf("AssetByKey = %d, %v; want the oldest, %d", got.ID, err, a.ID)
	}

	mark := f.lastEvent()
	label, name := "New label", "renamed.png"
	got, err := f.s.UpdateAsset(f.ctx, f.inst, a.ID, AssetUpdate{Label: &label, FileName: &name})
	if err != nil || got.Label != label || got.FileName != name {
		t.Errorf("UpdateAsset = %+v, %v", got, err)
	}
	f.checkEvents("update of an asset in no gallery", mark)
	bad := "a\x7f.png"
	_, err = f.s.UpdateAsset(f.ctx, f.inst, a.ID, AssetUpdate{FileName: &bad})
	wantFields(t, "UpdateAsset(fileName with DEL)", err, "fileName")

	// An asset in a gallery or in an image field stays.
	g := f.gallery(f.inst, "Photos")
	if _, err := f.s.AddGalleryAssets(f.ctx, f.inst, g.ID, []int64{a.ID}); err != nil {
		t.Fatal(err)
	}
	mark = f.lastEvent()
	if _, err := f.s.UpdateAsset(f.ctx, f.inst, a.ID, AssetUpdate{Label: &label}); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("update of an asset in a gallery", mark, ev{State: eventlog.Deleted, Subject: eventlog.SubjectList, ChangeDate: t0})
	var released []string
	release := func(_ context.Context, key string) error {
		released = append(released, key)
		return nil
	}
	wantKind(t, "DeleteAsset(in a gallery)", f.s.DeleteAsset(f.ctx, f.inst, a.ID, release), problem.Conflict)
	if err := f.s.RemoveGalleryAsset(f.ctx, f.inst, g.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	f.model("Card", "content", Field{Name: "image", Type: TypeImage})
	f.container("Cards", "Card")
	card := f.createItem("en-us", "Cards", map[string]any{"image": map[string]any{"assetID": a.ID}}).ContentID
	f.itemAction("en-us", card, ActionPublish)
	f.saveItem("en-us", card, map[string]any{"image": nil})
	wantKind(t, "DeleteAsset(in a published image field)", f.s.DeleteAsset(f.ctx, f.inst, a.ID, release), problem.Conflict)
	f.itemAction("en-us", card, ActionPublish)
	if err := f.s.DeleteAsset(f.ctx, f.inst, a.ID, release); err != nil {
		t.Errorf("DeleteAsset: %v", err)
	}
	wantKind(t, "DeleteAsset again", f.s.DeleteAsset(f.ctx, f.inst, a.ID, release), problem.NotFound)
	if got, err := f.s.AssetByKey(f.ctx, a.Key); err != nil || got.ID != same.ID {
		t.Errorf("AssetByKey after deleting one of two = %d, %v; want %d", got.ID, err, same.ID)
	}
	if released != nil {
		t.Errorf("bytes another asset has were released: %v", released)
	}
	// The last asset with the bytes releases them; a release that fails
	// undoes the deletion.
	failing := func(context.Context, string) error { return errors.New("store down") }
	if err := f.s.DeleteAsset(f.ctx, f.inst, same.ID, failing); err == nil {
		t.Errorf("DeleteAsset with a failing release = nil")
	}
	if _, err := f.s.AssetByKey(f.ctx, a.Key); err != nil {
		t.Errorf("AssetByKey after a failed deletion = %v", err)
	}
	if err := f.s.DeleteAsset(f.ctx, f.inst, same.ID, release); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(released, []string{a.Key}) {
		t.Errorf("released = %v, want [%s]", released, a.Key)
	}
	if _, err := f.s.AssetByKey(f.ctx, a.Key); !problem.Is(err, problem.NotFound) {
		t.Errorf("AssetByKey with no asset left = %v, want NotFound", err)
	}
}

func TestGalleries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.asset(f.inst, 10, 10, "a.png", "A")
	b := f.asset(f.inst, 20, 10, "b.png", "B")
	c := f.asset(f.inst, 30, 10, "c.png", "C")
	foreign := f.asset(f.instance("other"), 10, 10, "x.png", "")

	mark := f.lastEvent()
	g := f.gallery(f.inst, "Roastery")
	changed := ev{State: eventlog.Deleted, Subject: eventlog.SubjectList, ChangeDate: t0}
	f.checkEvents("create", mark, changed)
	_, err := f.s.CreateGallery(f.ctx, f.inst, GalleryInput{Name: ptr("roastery")})
	wantKind(t, "CreateGallery(same name)", err, problem.Conflict)
	_, err = f.s.CreateGallery(f.ctx, f.inst, GalleryInput{Name: ptr("  ")})
	wantFields(t, "CreateGallery(blank name)", err, "name")

	ids := func(g MediaGallery) []int64 {
		var out []int64
		for _, m := range g.Media {
			out = append(out, m.ID)
		}
		return out
	}
	got, err := f.s.AddGalleryAssets(f.ctx, f.inst, g.ID, []int64{b.ID, a.ID})
	if err != nil || !slices.Equal(ids(got), []int64{b.ID, a.ID}) || got.Count != 2 {
		t.Errorf("AddGalleryAssets = %v (count %d), %v", ids(got), got.Count, err)
	}
	got, err = f.s.AddGalleryAssets(f.ctx, f.inst, g.ID, []int64{c.ID})
	if err != nil || !slices.Equal(ids(got), []int64{b.ID, a.ID, c.ID}) {
		t.Errorf("AddGalleryAssets(c) = %v, %v", ids(got), err)
	}
	mark = f.lastEvent()
	for _, bad := range [][]int64{{a.ID}, {999999}, {foreign.ID}, {}} {
		_, err := f.s.AddGalleryAssets(f.ctx, f.inst, g.ID, bad)
		wantFields(t, fmt.Sprintf("AddGalleryAssets(%v)", bad), err, "assetIDs")
	}
	for _, bad := range [][]int64{{a.ID, b.ID}, {a.ID, b.ID, c.ID, c.ID}, {a.ID, b.ID, foreign.ID}} {
		wantFields(t, fmt.Sprintf("ReorderGallery(%v)", bad), f.s.ReorderGallery(f.ctx, f.inst, g.ID, bad), "assetIDs")
	}
	wantKind(t, "RemoveGalleryAsset(not in it)", f.s.RemoveGalleryAsset(f.ctx, f.inst, g.ID, foreign.ID), problem.NotFound)
	_, err = f.s.AddGalleryAssets(f.ctx, f.inst, 999999, []int64{a.ID})
	wantKind(t, "AddGalleryAssets(unknown gallery)", err, problem.NotFound)
	f.checkEvents("refused changes", mark)

	if err := f.s.ReorderGallery(f.ctx, f.inst, g.ID, []int64{c.ID, a.ID, b.ID}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RemoveGalleryAsset(f.ctx, f.inst, g.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("reorder and remove", mark, changed, changed)
	read, err := f.s.Gallery(f.ctx, f.inst, g.ID)
	if err != nil || !slices.Equal(ids(read), []int64{c.ID, b.ID}) || read.Count != 2 || read.Name != "Roastery" {
		t.Errorf("Gallery = %+v, %v; want c, b", read, err)
	}
	if _, err := f.s.Gallery(f.ctx, f.instance("third"), g.ID); !problem.Is(err, problem.NotFound) {
		t.Errorf("Gallery(another instance) = %v, want NotFound", err)
	}

	upd, err := f.s.UpdateGallery(f.ctx, f.inst, g.ID, GalleryInput{Description: ptr("Inside")})
	if err != nil || upd.Description != "Inside" || upd.Name != "Roastery" || upd.Count != 2 {
		t.Errorf("UpdateGallery = %+v, %v", upd, err)
	}
	f.gallery(f.inst, "Second")
	_, err = f.s.UpdateGallery(f.ctx, f.inst, g.ID, GalleryInput{Name: ptr("SECOND")})
	wantKind(t, "UpdateGallery(a taken name)", err, problem.Conflict)
	list, err := f.s.Galleries(f.ctx, f.inst)
	if err != nil || len(list) != 2 || list[0].Count != 2 || len(list[0].Media) != 0 {
		t.Errorf("Galleries = %+v, %v", list, err)
	}

	f.model("Album", "content", Field{Name: "photos", Type: TypeGallery})
	f.container("Albums", "Album")
	album := f.createItem("en-us", "Albums", map[string]any{"photos": map[string]any{"galleryID": g.ID}}).ContentID
	wantKind(t, "DeleteGallery(used by a field)", f.s.DeleteGallery(f.ctx, f.inst, g.ID), problem.Conflict)
	f.saveItem("en-us", album, map[string]any{"photos": nil})
	mark = f.lastEvent()
	if err := f.s.DeleteGallery(f.ctx, f.inst, g.ID); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("delete", mark, changed)
	if _, err := f.s.Gallery(f.ctx, f.inst, g.ID); !problem.Is(err, problem.NotFound) {
		t.Errorf("Gallery after delete = %v, want NotFound", err)
	}
	if _, err := f.s.Asset(f.ctx, f.inst, b.ID); err != nil {
		t.Errorf("an asset of the deleted gallery: %v", err)
	}
}
