package origin_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
)

// mediaHarness is a harness whose origin has an asset store (in memory) and
// renders the Fetch API.
func mediaHarness(t *testing.T) (*harness, *store.Memory) {
	t.Helper()
	h := newHarness(t)
	h.store.PublicURL = "https://cdn.example.com"
	objects := store.NewMemory(nil)
	h.srv = origin.New(origin.Config{Assets: objects, UploadLimit: testUploadLimit, Render: renderFunc(h)},
		h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	return h, objects
}

// renderFunc renders the Fetch API from h's store, as a RenderFunc that
// tests can wrap.
func renderFunc(h *harness) origin.RenderFunc {
	r := render.New(h.store)
	h.t.Cleanup(func() { r.Close() })
	return func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
		site, err := render.LoadSite(ctx, h.store, req.Guid)
		if err != nil {
			return nil, nil, err
		}
		res, err := r.Render(ctx, site, req)
		return res.Body, res.Tags, err
	}
}

// testUploadLimit is the upload limit of the media harness.
const testUploadLimit = 4 << 20

// pngOf encodes a w x h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// multipartBody builds a multipart/form-data body: files maps a part name
// to {file name, bytes}, fields are plain fields.
func multipartBody(t *testing.T, files map[string][2]string, fields map[string]string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for part, f := range files {
		w, err := mw.CreateFormFile(part, f[0])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f[1])
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

// send sends a request with a content type and extra headers.
func (h *harness) send(method, path, token, contentType string, body []byte, headers map[string]string) response {
	h.t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := h.srv.App().Test(req, -1)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return readResponse(h.t, method+" "+path, res)
}

// upload uploads an image with multipart as role and returns the answer.
func (h *harness) upload(role content.Role, name string, body []byte, fields map[string]string) response {
	h.t.Helper()
	ct, b := multipartBody(h.t, map[string][2]string{"file": {name, string(body)}}, fields)
	return h.send("POST", h.base()+"/assets", h.tokens[role], ct, b, nil)
}

// TestAssetUpload uploads an image as multipart and as JSON, serves its
// bytes, and deletes it.
func TestAssetUpload(t *testing.T) {
	t.Parallel()
	h, objects := mediaHarness(t)
	img := pngOf(t, 64, 48)
	r := h.upload(content.RoleEdit, "beans.png", img, map[string]string{"label": "Green beans"})
	if r.status != 201 {
		t.Fatalf("upload = %s", r)
	}
	var a content.Asset
	r.decode(t, &a)
	want := fmt.Sprintf("https://cdn.example.com/%s/assets/%s.png", h.guid, a.SHA256)
	if a.FileName != "beans.png" || a.Label != "Green beans" || a.Width != 64 || a.Height != 48 || a.Size != int64(len(img)) ||
		a.ContentType != "image/png" || a.URL != want || a.Key != h.guid+"/assets/"+a.SHA256+".png" {
		t.Errorf("asset = %+v, want 64x48 at %s", a, want)
	}
	o, err := objects.Get(t.Context(), a.Key)
	if err != nil || !bytes.Equal(o.Body, img) || o.ContentType != "image/png" || o.CacheControl != "public, max-age=31536000, immutable" {
		t.Errorf("stored object = %q, %q, %v", o.ContentType, o.CacheControl, err)
	}

	// Served publicly at its key, cached for good.
	path := "/" + a.Key
	r = h.send("GET", path, "", "", nil, nil)
	if r.status != 200 || !bytes.Equal(r.body, img) || r.header.Get("Content-Type") != "image/png" ||
		r.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET %s = %d %v", path, r.status, r.header)
	}
	// The address of before the move redirects there.
	old := "/api/assets/" + h.guid + "/" + a.SHA256 + ".png"
	if r := h.send("GET", old, "", "", nil, nil); r.status != 301 || r.header.Get("Location") != a.URL {
		t.Errorf("GET %s = %d, Location %q; want 301 to %s", old, r.status, r.header.Get("Location"), a.URL)
	}
	etag := r.header.Get("ETag")
	if r := h.send("GET", path, "", "", nil, map[string]string{"If-None-Match": etag}); r.status != 304 {
		t.Errorf("GET with If-None-Match = %d, want 304", r.status)
	}
	for _, p := range []string{
		"/" + h.guid + "/assets/" + strings.Repeat("0", 64) + ".png",   // no such bytes
		"/other-site/assets/" + a.SHA256 + ".png",                      // another instance
		"/" + h.guid + "/assets/" + a.SHA256 + ".gif",                  // another type
		"/" + h.guid + "/assets/" + strings.ToUpper(a.SHA256) + ".png", // not the canonical name
		"/" + h.guid + "/assets/..%2f..%2f" + a.SHA256 + ".png",        // escape attempt
		"/" + h.guid + "/assets/" + a.SHA256 + ".png.json",             // suffix
		"/BAD_GUID!/assets/" + a.SHA256 + ".png",                       // bad guid
		"/" + h.guid + "/assets/" + a.SHA256[:63] + ".png",             // short hash
		"/" + h.guid + "/assets/" + a.SHA256 + ".PNG",                  // upper-case extension
		"/" + h.guid + "/assets/" + strings.Repeat("g", 64) + ".png",   // not hex
		"/" + h.guid + "/assets/" + a.SHA256 + ".exe",                  // not a type we store
		"/api/assets/" + h.guid + "/" + a.SHA256 + ".exe",              // nor at the old address
	} {
		r := h.send("GET", p, "", "", nil, nil)
		if r.status != 404 {
			t.Errorf("GET %s = %d, want 404", p, r.status)
		}
	}

	// JSON with base64; the URL is the public URL's whatever host the
	// request names.
	b, _ := json.Marshal(map[string]any{"fileName": "dot.png", "data": base64.StdEncoding.EncodeToString(pngOf(t, 1, 1))})
	r = h.send("POST", h.base()+"/assets", h.tokens[content.RoleEdit], "application/json", b,
		map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "cms.example.org"})
	var dot content.Asset
	r.decode(t, &dot)
	if r.status != 201 || !strings.HasPrefix(dot.URL, "https://cdn.example.com/"+h.guid+"/assets/") || dot.Width != 1 {
		t.Errorf("JSON upload = %s", r)
	}

	// The same bytes again are another asset at the same address.
	r = h.upload(content.RoleEdit, "again.png", img, nil)
	var again content.Asset
	r.decode(t, &again)
	if r.status != 201 || again.Key != a.Key || again.ID == a.ID {
		t.Errorf("second upload of the same bytes = %s", r)
	}
	h.must(204, "DELETE", fmt.Sprintf("/assets/%d", a.ID), nil)
	if r := h.send("GET", path, "", "", nil, nil); r.status != 200 {
		t.Errorf("GET after deleting one of two assets with these bytes = %d, want 200", r.status)
	}
	h.must(204, "DELETE", fmt.Sprintf("/assets/%d", again.ID), nil)
	if r := h.send("GET", path, "", "", nil, nil); r.status != 404 {
		t.Errorf("GET after deleting every asset with these bytes = %d, want 404", r.status)
	}
	// Edges serve from the store: the bytes are gone from it.
	if _, err := objects.Stat(t.Context(), a.Key); !problem.Is(err, problem.NotFound) {
		t.Errorf("the bytes of deleted assets are still stored: %v", err)
	}
}

// TestAssetUploadValidation checks that uploads are refused by content, not
// by name, with a clear problem, and that a refused upload stores nothing.
func TestAssetUploadValidation(t *testing.T) {
	t.Parallel()
	h, objects := mediaHarness(t)
	img := pngOf(t, 4, 4)
	big := append(pngOf(t, 1, 1), make([]byte, testUploadLimit)...)
	tests := []struct {
		name   string
		files  map[string][2]string
		fields map[string]string
		want   int
		field  string
	}{
		{"text named .png", map[string][2]string{"file": {"a.png", "just text"}}, nil, 400, "file"},
		{"html", map[string][2]string{"file": {"a.png", "<html><script>alert(1)</script></html>"}}, nil, 400, "file"},
		{"svg without its namespace", map[string][2]string{"file": {"a.svg", `<svg width="3" height="3"/>`}}, nil, 400, "file"},
		{"pdf signature only", map[string][2]string{"file": {"a.exe", "MZ\x90\x00"}}, nil, 400, "file"},
		{"empty file", map[string][2]string{"file": {"a.png", ""}}, nil, 400, "file"},
		{"broken png", map[string][2]string{"file": {"a.png", "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 40)}}, nil, 400, "file"},
		{"no file part", nil, map[string]string{"label": "x"}, 400, "file"},
		{"two files", map[string][2]string{"file": {"a.png", string(img)}, "other": {"b.png", string(img)}}, nil, 400, "other"},
		{"unknown field", map[string][2]string{"file": {"a.png", string(img)}}, map[string]string{"colour": "red"}, 400, "colour"},
		{"control character in name", map[string][2]string{"file": {"a.png", string(img)}}, map[string]string{"fileName": "a\x01.png"}, 400, "fileName"},
		{"label too long", map[string][2]string{"file": {"a.png", string(img)}}, map[string]string{"label": strings.Repeat("x", 1001)}, 400, "label"},
		{"over the asset limit", map[string][2]string{"file": {"a.png", string(big)}}, nil, 413, ""},
	}
	for _, tt := range tests {
		ct, b := multipartBody(t, tt.files, tt.fields)
		r := h.send("POST", h.base()+"/assets", h.tokens[content.RoleEdit], ct, b, nil)
		checkProblem(t, tt.name, r, tt.want, tt.field)
	}
	jsonCases := []struct {
		name, body string
		field      string
	}{
		{"no data", `{"fileName": "a.png"}`, "data"},
		{"bad base64", `{"fileName": "a.png", "data": "!!!"}`, "data"},
		{"unknown member", `{"fileName": "a.png", "data": "AA==", "zz": 1}`, "zz"},
		{"not an image", `{"fileName": "a.png", "data": "aGVsbG8="}`, "file"},
		{"no file name", fmt.Sprintf(`{"data": %q}`, base64.StdEncoding.EncodeToString(img)), "fileName"},
	}
	for _, tt := range jsonCases {
		r := h.send("POST", h.base()+"/assets", h.tokens[content.RoleEdit], "application/json", []byte(tt.body), nil)
		checkProblem(t, "JSON "+tt.name, r, 400, tt.field)
	}
	n := 0
	objects.List(t.Context(), "", func(store.Info) error { n++; return nil })
	if n != 0 {
		t.Errorf("refused uploads stored %d objects", n)
	}
	// The origin's body limit comes first.
	small := newHarness(t)
	checkProblem(t, "over the body limit", small.oversize("POST", small.base()+"/assets", "Bearer "+small.tokens[content.RoleEdit], 3<<20), 413, "")
	// Without an asset store, after the usual checks.
	ct, b := multipartBody(t, map[string][2]string{"file": {"a.png", string(img)}}, nil)
	checkProblem(t, "no asset store", small.send("POST", small.base()+"/assets", small.tokens[content.RoleEdit], ct, b, nil), 503, "")
	checkProblem(t, "no asset store, bad file", small.upload(content.RoleEdit, "a.png", []byte("text"), nil), 400, "file")
}

// mediaWorld is what the media tests work on.
type mediaWorld struct {
	asset, spare, gallery, redirect int64
}

func (h *harness) mediaWorld() mediaWorld {
	h.t.Helper()
	var w mediaWorld
	for i, p := range []*int64{&w.asset, &w.spare} {
		r := h.upload(content.RoleFull, fmt.Sprintf("%d.png", i), pngOf(h.t, 2+i, 2), nil)
		var a content.Asset
		r.decode(h.t, &a)
		*p = a.ID
	}
	w.gallery = int64(h.must(201, "POST", "/galleries", map[string]any{"name": "Photos"}).object(h.t)["galleryID"].(float64))
	h.must(200, "POST", fmt.Sprintf("/galleries/%d/assets", w.gallery), map[string]any{"assetIDs": []int64{w.asset}})
	w.redirect = int64(h.must(201, "POST", "/redirections", map[string]any{"originUrl": "/old", "destinationUrl": "/new"}).object(h.t)["id"].(float64))
	return w
}

// TestMediaRoles runs every media route with a token of every role, each
// role on a fresh world: edit reads, uploads and arranges; publish deletes
// and changes redirections.
func TestMediaRoles(t *testing.T) {
	t.Parallel()
	const edit, publish = content.RoleEdit, content.RolePublish
	for _, role := range content.Roles {
		t.Run(string(role), func(t *testing.T) {
			h, _ := mediaHarness(t)
			w := h.mediaWorld()
			g := fmt.Sprintf("/galleries/%d", w.gallery)
			cases := []struct {
				req  request
				role content.Role
				want int
			}{
				{request{"GET", "/assets", nil}, edit, 200},
				{request{"GET", fmt.Sprintf("/assets/%d", w.asset), nil}, edit, 200},
				{request{"PATCH", fmt.Sprintf("/assets/%d", w.asset), map[string]any{"label": "L"}}, edit, 200},
				{request{"GET", "/galleries", nil}, edit, 200},
				{request{"POST", "/galleries", map[string]any{"name": "More"}}, edit, 201},
				{request{"GET", g, nil}, edit, 200},
				{request{"PATCH", g, map[string]any{"description": "D"}}, edit, 200},
				{request{"POST", g + "/assets", map[string]any{"assetIDs": []int64{w.spare}}}, edit, 200},
				{request{"PUT", g + "/assets/order", map[string]any{"assetIDs": []int64{w.spare, w.asset}}}, edit, 204},
				{request{"DELETE", fmt.Sprintf("%s/assets/%d", g, w.spare), nil}, edit, 204},
				{request{"DELETE", fmt.Sprintf("/assets/%d", w.spare), nil}, publish, 204},
				{request{"DELETE", g, nil}, publish, 204},
				{request{"GET", "/redirections", nil}, edit, 200},
				{request{"GET", fmt.Sprintf("/redirections/%d", w.redirect), nil}, edit, 200},
				{request{"POST", "/redirections", map[string]any{"originUrl": "/a", "destinationUrl": "/b", "statusCode": 302}}, publish, 201},
				{request{"PUT", fmt.Sprintf("/redirections/%d", w.redirect), map[string]any{"statusCode": 302}}, publish, 200},
				{request{"DELETE", fmt.Sprintf("/redirections/%d", w.redirect), nil}, publish, 204},
			}
			for _, c := range cases {
				r := h.as(role, c.req)
				if !role.Includes(c.role) {
					checkProblem(t, fmt.Sprintf("%s as %s", c.req, role), r, 403, "")
				} else if r.status != c.want {
					t.Errorf("%s as %s = %s, want %d", c.req, role, r, c.want)
				}
			}
			if role == edit {
				// Without a token, every route is a 401.
				for _, c := range cases {
					r := h.raw(c.req.method, h.base()+c.req.path, "", bodyBytes(t, c.req.body))
					checkProblem(t, c.req.String()+" without a token", r, 401, "")
				}
				r := h.upload(content.RoleEdit, "x.png", pngOf(t, 1, 1), nil)
				if r.status != 201 {
					t.Errorf("upload as edit = %s", r)
				}
				ct, b := multipartBody(t, map[string][2]string{"file": {"x.png", string(pngOf(t, 1, 1))}}, nil)
				checkProblem(t, "upload without a token", h.send("POST", h.base()+"/assets", "", ct, b, nil), 401, "")
			}
		})
	}
}

// TestMediaBadInput checks the bad inputs of the media routes: a problem
// document with the status and the field.
func TestMediaBadInput(t *testing.T) {
	t.Parallel()
	h, _ := mediaHarness(t)
	w := h.mediaWorld()
	g := fmt.Sprintf("/galleries/%d", w.gallery)
	redirect := fmt.Sprintf("/redirections/%d", w.redirect)
	type m = map[string]any
	f := h.populate()
	h.must(200, "PUT", fmt.Sprintf("/en-us/items/%d", f.article), m{"fields": m{"title": "T"}}) // the item exists
	cases := []struct {
		name  string
		req   request
		want  int
		field string
	}{
		{"list take 0", request{"GET", "/assets?take=0", nil}, 400, "take"},
		{"asset id text", request{"GET", "/assets/abc", nil}, 400, "id"},
		{"asset unknown", request{"GET", "/assets/999999", nil}, 404, ""},
		{"asset update unknown member", request{"PATCH", fmt.Sprintf("/assets/%d", w.asset), m{"size": 5}}, 400, "size"},
		{"asset update bad name", request{"PATCH", fmt.Sprintf("/assets/%d", w.asset), m{"fileName": ""}}, 400, "fileName"},
		{"asset update unknown", request{"PATCH", "/assets/999999", m{"label": "x"}}, 404, ""},
		{"asset delete in a gallery", request{"DELETE", fmt.Sprintf("/assets/%d", w.asset), nil}, 409, ""},
		{"asset delete unknown", request{"DELETE", "/assets/999999", nil}, 404, ""},
		{"gallery no name", request{"POST", "/galleries", m{"description": "x"}}, 400, "name"},
		{"gallery name too long", request{"POST", "/galleries", m{"name": strings.Repeat("n", 201)}}, 400, "name"},
		{"gallery duplicate name", request{"POST", "/galleries", m{"name": "PHOTOS"}}, 409, ""},
		{"gallery unknown member", request{"POST", "/galleries", m{"name": "x", "media": []int{}}}, 400, "media"},
		{"gallery unknown", request{"GET", "/galleries/999999", nil}, 404, ""},
		{"gallery id zero", request{"GET", "/galleries/0", nil}, 400, "id"},
		{"gallery update empty name", request{"PATCH", g, m{"name": ""}}, 400, "name"},
		{"gallery update unknown", request{"PATCH", "/galleries/999999", m{"name": "x"}}, 404, ""},
		{"gallery add no list", request{"POST", g + "/assets", m{}}, 400, "assetIDs"},
		{"gallery add empty list", request{"POST", g + "/assets", m{"assetIDs": []int64{}}}, 400, "assetIDs"},
		{"gallery add twice", request{"POST", g + "/assets", m{"assetIDs": []int64{w.asset}}}, 400, "assetIDs"},
		{"gallery add unknown asset", request{"POST", g + "/assets", m{"assetIDs": []int64{999999}}}, 400, "assetIDs"},
		{"gallery add to unknown", request{"POST", "/galleries/999999/assets", m{"assetIDs": []int64{w.spare}}}, 404, ""},
		{"gallery add text ids", request{"POST", g + "/assets", m{"assetIDs": []string{"1"}}}, 400, "assetIDs"},
		{"gallery order incomplete", request{"PUT", g + "/assets/order", m{"assetIDs": []int64{}}}, 400, "assetIDs"},
		{"gallery order foreign", request{"PUT", g + "/assets/order", m{"assetIDs": []int64{w.spare}}}, 400, "assetIDs"},
		{"gallery order no list", request{"PUT", g + "/assets/order", m{}}, 400, "assetIDs"},
		{"gallery remove absent", request{"DELETE", fmt.Sprintf("%s/assets/%d", g, w.spare), nil}, 404, ""},
		{"gallery remove bad id", request{"DELETE", g + "/assets/x", nil}, 400, "assetID"},
		{"gallery delete unknown", request{"DELETE", "/galleries/999999", nil}, 404, ""},
		{"redirect no origin", request{"POST", "/redirections", m{"destinationUrl": "/x"}}, 400, "originUrl"},
		{"redirect bad destination", request{"POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "javascript:alert(1)"}}, 400, "destinationUrl"},
		{"redirect status 307", request{"POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "/y", "statusCode": 307}}, 400, "statusCode"},
		{"redirect status text", request{"POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "/y", "statusCode": "301"}}, 400, "statusCode"},
		{"redirect duplicate origin", request{"POST", "/redirections", m{"originUrl": "/OLD", "destinationUrl": "/y"}}, 409, ""},
		{"redirect unknown member", request{"POST", "/redirections", m{"from": "/x"}}, 400, "from"},
		{"redirect update to itself", request{"PUT", redirect, m{"destinationUrl": "/old"}}, 400, "destinationUrl"},
		{"redirect update unknown", request{"PUT", "/redirections/999999", m{"statusCode": 301}}, 404, ""},
		{"redirect get unknown", request{"GET", "/redirections/999999", nil}, 404, ""},
		{"redirect delete unknown", request{"DELETE", "/redirections/999999", nil}, 404, ""},
		{"image field unknown asset", request{"PUT", fmt.Sprintf("/en-us/items/%d", f.article), m{"fields": m{"title": "T", "zz": 1}}}, 400, "fields.zz"},
	}
	for _, c := range cases {
		r := h.as(content.RoleFull, c.req)
		checkProblem(t, c.name+" ("+c.req.String()+")", r, c.want, c.field)
	}
}

// TestMediaFetchAPI reads sync, gallery and URL redirection answers through
// the origin's Fetch API handler: keys, cache policy and the image field
// made from an asset.
func TestMediaFetchAPI(t *testing.T) {
	t.Parallel()
	h, _ := mediaHarness(t)
	w := h.mediaWorld()
	ctx := t.Context()
	_, fetchKey, err := h.store.CreateAPIKey(ctx, h.inst, content.APIKeyInput{Name: ptr("k"), Type: "fetch"})
	if err != nil {
		t.Fatal(err)
	}
	_, previewKey, err := h.store.CreateAPIKey(ctx, h.inst, content.APIKeyInput{Name: ptr("p"), Type: "preview"})
	if err != nil {
		t.Fatal(err)
	}
	type m = map[string]any
	h.must(201, "POST", "/models", m{"name": "Card", "kind": "content", "fields": []m{
		{"name": "title", "type": "text"}, {"name": "photo", "type": "image"}, {"name": "photos", "type": "gallery"}}})
	h.must(201, "POST", "/containers", m{"referenceName": "cards", "model": "Card"})
	item := h.must(201, "POST", "/en-us/items", m{"referenceName": "cards", "fields": m{
		"title": "A", "photo": m{"assetID": w.asset, "label": "Mine"}, "photos": m{"galleryID": w.gallery}}}).object(t)
	id := int64(item["contentID"].(float64))
	checkProblem(t, "a gallery that does not exist", h.as(content.RoleFull, request{"PUT", fmt.Sprintf("/en-us/items/%d", id),
		m{"fields": m{"photos": m{"galleryID": 999999}}}}), 400, "fields.photos")
	h.must(200, "POST", fmt.Sprintf("/en-us/items/%d/publish", id), nil)

	get := func(key, path string) response {
		t.Helper()
		return h.send("GET", path, "", "", nil, map[string]string{"APIKey": key})
	}
	r := get(fetchKey, fmt.Sprintf("/%s/fetch/en-us/item/%d", h.guid, id))
	var it struct {
		Fields struct {
			Photo  map[string]any `json:"photo"`
			Photos map[string]any `json:"photos"`
		} `json:"fields"`
	}
	r.decode(t, &it)
	asset, _ := h.store.Asset(ctx, h.inst, w.asset)
	wantPhoto := m{"label": "Mine", "url": asset.URL, "target": nil, "filesize": float64(asset.Size),
		"pixelHeight": "2", "pixelWidth": "2", "height": float64(2), "width": float64(2)}
	if fmt.Sprint(it.Fields.Photo) != fmt.Sprint(wantPhoto) || fmt.Sprint(it.Fields.Photos) != fmt.Sprint(m{"galleryid": float64(w.gallery)}) {
		t.Errorf("image and gallery fields = %v, %v; want %v", it.Fields.Photo, it.Fields.Photos, wantPhoto)
	}

	r = get(fetchKey, fmt.Sprintf("/%s/fetch/en-us/sync/items?syncToken=0&pageSize=undefined", h.guid))
	var s struct {
		SyncToken int64            `json:"syncToken"`
		Items     []map[string]any `json:"items"`
	}
	r.decode(t, &s)
	if r.status != 200 || len(s.Items) != 1 || s.SyncToken == 0 || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("sync items = %s (Cache-Control %q)", r, r.header.Get("Cache-Control"))
	}
	r = get(previewKey, fmt.Sprintf("/%s/fetch/en-us/sync/items", h.guid))
	checkProblem(t, "sync with a preview key on fetch", r, 403, "")
	r = get(fetchKey, fmt.Sprintf("/%s/fetch/xx-yy/sync/pages", h.guid))
	checkProblem(t, "sync of an unknown locale", r, 404, "")
	r = get(fetchKey, fmt.Sprintf("/%s/fetch/en-us/sync/items?pageSize=501", h.guid))
	checkProblem(t, "sync pageSize 501", r, 400, "pageSize")

	r = get(fetchKey, fmt.Sprintf("/%s/fetch/gallery/%d", h.guid, w.gallery))
	var gal struct {
		GalleryID int64            `json:"galleryID"`
		Count     int              `json:"count"`
		Media     []map[string]any `json:"media"`
	}
	r.decode(t, &gal)
	if r.status != 200 || gal.Count != 1 || gal.Media[0]["url"] != asset.URL {
		t.Errorf("gallery = %s", r)
	}
	checkProblem(t, "unknown gallery", get(fetchKey, fmt.Sprintf("/%s/fetch/gallery/999999", h.guid)), 404, "")

	r = get(previewKey, fmt.Sprintf("/%s/preview/urlredirection/", h.guid))
	var red struct {
		Items          []map[string]any `json:"items"`
		IsUpToDate     bool             `json:"isUpToDate"`
		LastAccessDate string           `json:"lastAccessDate"`
	}
	r.decode(t, &red)
	if r.status != 200 || len(red.Items) != 1 || red.IsUpToDate {
		t.Errorf("urlredirection = %s", r)
	}
	r = get(previewKey, fmt.Sprintf("/%s/preview/urlredirection?lastAccessDate=%s", h.guid, red.LastAccessDate))
	r.decode(t, &red)
	if len(red.Items) != 0 || !red.IsUpToDate {
		t.Errorf("urlredirection since its lastAccessDate = %s", r)
	}
	if _, err := time.Parse(time.RFC3339, red.LastAccessDate); err != nil {
		t.Errorf("lastAccessDate %q: %v", red.LastAccessDate, err)
	}
}
