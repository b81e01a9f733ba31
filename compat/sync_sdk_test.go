package compat

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/edge"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/testcert"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
)

// startSync serves the demo with an asset store and without the origin's
// render cache, so that every answer (the sitemaps the sync client reads
// after a change, too) is rendered from the committed content.
func startSync(t *testing.T) *service {
	return startWith(t, origin.Config{Assets: store.NewMemory(nil), RenderCacheBytes: 1})
}

// received is what the sync client's store was handed by one run.
type received struct {
	LanguageCode string `json:"languageCode"`
	Kind         string `json:"kind"`
	ID           int64  `json:"id"`
	State        int    `json:"state"`
}

func (r received) String() string {
	return fmt.Sprintf("%s %s %d (state %d)", r.LanguageCode, r.Kind, r.ID, r.State)
}

// runSyncClient runs the real @agility/content-sync client once, in dir
// (its files go to dir/.agility-files), and returns what it received.
func (s *service) runSyncClient(t *testing.T, dir, flavour string, locales []string) []received {
	t.Helper()
	key := s.fetchKey
	if flavour == "preview" {
		key = s.previewKey
	}
	in, _ := json.Marshal(map[string]any{
		"baseUrl": s.base + "/" + s.inst.Guid, "guid": s.inst.Guid, "apiKey": key, "isPreview": flavour == "preview",
		"languages": locales, "channels": []string{"website"},
	})
	cmd := exec.Command("node", filepath.Join(compatDir(t), "sync-sdk.js"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+s.caFile, "TMPDIR="+dir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sync-sdk.js: %v\n%s", err, stderr.String())
	}
	_, result, ok := strings.Cut(string(out), "@@RESULT@@\n")
	var res struct {
		OK       bool       `json:"ok"`
		Error    string     `json:"error"`
		Received []received `json:"received"`
	}
	if !ok || json.Unmarshal([]byte(result), &res) != nil {
		t.Fatalf("sync-sdk.js printed no result:\n%s\n%s", out, stderr.String())
	}
	if !res.OK {
		t.Fatalf("runSync failed: %s\n%s", res.Error, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("the sync client logged errors (a request it made failed):\n%s", stderr.String())
	}
	return res.Received
}

// fetchAPI renders Fetch API answers straight from the store: what the
// origin answers, without its caches.
type fetchAPI struct {
	s    *service
	r    *render.Renderer
	site render.Site
}

func newFetchAPI(t *testing.T, s *service) *fetchAPI {
	t.Helper()
	site, err := render.LoadSite(t.Context(), s.store, s.inst.Guid)
	if err != nil {
		t.Fatal(err)
	}
	r := render.New(s.store)
	t.Cleanup(func() { r.Close() })
	return &fetchAPI{s: s, r: r, site: site}
}

// get renders a Fetch API path (after /{guid}) and decodes it; nil for 404.
func (f *fetchAPI) get(t *testing.T, path string) any {
	t.Helper()
	p, q, _ := strings.Cut(path, "?")
	req, err := fetch.Parse(fetch.Input{Path: "/" + f.s.inst.Guid + p, RawQuery: q})
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	res, err := f.r.Render(t.Context(), f.site, req)
	if err != nil {
		if strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "not published") {
			return nil
		}
		t.Fatalf("render %s: %v", path, err)
	}
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// snapshot is every item and page a flavour shows in a locale, at depth 0,
// keyed "<locale> item <id>" or "<locale> page <id>".
func (f *fetchAPI) snapshot(t *testing.T, flavour string, locales []string) map[string]any {
	t.Helper()
	visible := `published_version_id IS NOT NULL`
	if flavour == "preview" {
		visible = `state <> 3`
	}
	out := map[string]any{}
	for _, loc := range locales {
		for _, kind := range []string{"item", "page"} {
			table, id := "item_copies", "content_id"
			if kind == "page" {
				table, id = "page_copies", "page_id"
			}
			var ids []int64
			q := fmt.Sprintf(`SELECT %s FROM %s WHERE instance_id = $1 AND locale = $2 AND %s ORDER BY 1`, id, table, visible)
			if err := f.s.store.DB().SelectContext(t.Context(), &ids, q, f.s.inst.ID, loc); err != nil {
				t.Fatal(err)
			}
			for _, n := range ids {
				out[fmt.Sprintf("%s %s %d", loc, kind, n)] = f.get(t, fmt.Sprintf("/%s/%s/%s/%d?contentLinkDepth=0", flavour, loc, kind, n))
			}
		}
	}
	return out
}

// readJSON decodes a file the sync client wrote; nil when it does not exist.
func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// checkMirror checks that the sync client's files in dir hold exactly what
// the Fetch API shows: every item and page (and no other), the lists of
// the containers in container order by itemOrder, the sitemaps and the
// URL redirections.
func (f *fetchAPI) checkMirror(t *testing.T, dir, flavour string, locales []string) {
	t.Helper()
	root := filepath.Join(dir, ".agility-files")
	want := f.snapshot(t, flavour, locales)
	got := map[string]any{}
	for _, loc := range locales {
		for _, kind := range []string{"item", "page"} {
			files, _ := filepath.Glob(filepath.Join(root, loc, kind, "*.json"))
			for _, file := range files {
				got[fmt.Sprintf("%s %s %s", loc, kind, strings.TrimSuffix(filepath.Base(file), ".json"))] = readJSON(t, file)
			}
		}
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s mirror: %s is missing", flavour, k)
		} else if !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("%s mirror: %s differs\nmirror %.400s\nfetch  %.400s", flavour, k, gb, wb)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s mirror: %s is there, but the Fetch API does not show it", flavour, k)
		}
	}
	containers, err := f.s.store.Containers(t.Context(), f.s.inst)
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range locales {
		for _, c := range containers {
			list := f.get(t, fmt.Sprintf("/%s/%s/list/%s?take=250&contentLinkDepth=0", flavour, loc, c.ReferenceName))
			wantItems, _ := dig(list, "items").([]any)
			mirror, _ := readJSON(t, filepath.Join(root, loc, "list", c.ReferenceName+".json")).([]any)
			// The client appends new items to its lists: its order is the
			// container's once sorted by itemOrder.
			sort.SliceStable(mirror, func(i, j int) bool {
				a, b := dig(mirror[i], "properties", "itemOrder").(float64), dig(mirror[j], "properties", "itemOrder").(float64)
				if a != b {
					return a < b
				}
				return dig(mirror[i], "contentID").(float64) < dig(mirror[j], "contentID").(float64)
			})
			if len(wantItems) == 0 && len(mirror) == 0 {
				continue
			}
			if !reflect.DeepEqual(mirror, wantItems) {
				t.Errorf("%s mirror: list %s (%s) = %v, want %v", flavour, c.ReferenceName, loc, listIDs(mirror), listIDs(wantItems))
			}
		}
		for _, kind := range []string{"flat", "nested"} {
			file := "sitemap"
			if kind == "nested" {
				file = "nestedsitemap"
			}
			w := f.get(t, fmt.Sprintf("/%s/%s/sitemap/%s/website", flavour, loc, kind))
			if g := readJSON(t, filepath.Join(root, loc, file, "website.json")); !reflect.DeepEqual(g, w) {
				t.Errorf("%s mirror: %s sitemap (%s) differs from the Fetch API's", flavour, kind, loc)
			}
		}
		w := f.get(t, fmt.Sprintf("/%s/urlredirection", flavour))
		if g := readJSON(t, filepath.Join(root, loc, "urlredirections", "urlredirections.json")); !reflect.DeepEqual(g, w) {
			t.Errorf("%s mirror: URL redirections (%s) = %v, want %v", flavour, loc, g, w)
		}
	}
}

func listIDs(items []any) []any {
	out := []any{}
	for _, it := range items {
		out = append(out, dig(it, "contentID"))
	}
	return out
}

// itemBySlug finds a demo item by its en-us Slug.
func (s *service) itemBySlug(t *testing.T, ref, slug string) int64 {
	t.Helper()
	p, err := s.store.Items(t.Context(), s.inst, "en-us", ref, 250, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range p.Items {
		if str(it.Fields["Slug"]) == slug {
			return it.ContentID
		}
	}
	t.Fatalf("no %s item with slug %q", ref, slug)
	return 0
}

// TestSyncClient mirrors the demo in both locales with the real
// @agility/content-sync client over TLS, in both flavours; then, after
// edits, a reorder, unpublishes and deletes, checks that an incremental run
// receives exactly the items and pages whose Fetch API answer changed, and
// that the mirror again equals what the Fetch API shows.
func TestSyncClient(t *testing.T) {
	s := startSync(t)
	ctx := context.Background()
	api := newFetchAPI(t, s)
	locales := []string{"en-us", "fr-ca"}
	_, err := s.store.CreateRedirection(ctx, s.inst, content.RedirectionInput{OriginURL: ptr("/old-shop"), DestinationURL: ptr("/shop")})
	if err != nil {
		t.Fatal(err)
	}

	dirs := map[string]string{}
	for _, fl := range []string{"fetch", "preview"} {
		dirs[fl] = t.TempDir()
		got := s.runSyncClient(t, dirs[fl], fl, locales)
		if len(got) == 0 {
			t.Fatalf("%s: the first run received nothing", fl)
		}
		api.checkMirror(t, dirs[fl], fl, locales)
		// A run with no change receives nothing.
		if again := s.runSyncClient(t, dirs[fl], fl, locales); len(again) != 0 {
			t.Errorf("%s: a run without changes received %v", fl, again)
		}
	}
	state := readJSON(t, filepath.Join(dirs["fetch"], ".agility-files", "en-us", "state", "sync.json"))
	if tok, _ := dig(state, "itemToken").(float64); tok <= 0 {
		t.Errorf("the client's item token = %v, want > 0", dig(state, "itemToken"))
	}

	before := map[string]map[string]any{}
	for _, fl := range []string{"fetch", "preview"} {
		before[fl] = api.snapshot(t, fl, locales)
	}
	kenya := s.itemBySlug(t, "products", "kenya-nyeri-gatomboya-aa")
	dripper := s.itemBySlug(t, "products", "ceramic-pour-over-dripper")
	recipes := s.itemBySlug(t, "tags", "recipes")
	posts, err := s.store.Items(ctx, s.inst, "en-us", "posts", 250, 0)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := s.store.Pages(ctx, s.inst, "en-us", "website")
	if err != nil {
		t.Fatal(err)
	}
	var contact int64
	for _, p := range pages {
		if p.Name == "contact" {
			contact = p.PageID
		}
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// An edit, published; an edit left unpublished.
	_, err = s.store.SaveItem(ctx, s.inst, "en-us", kenya, map[string]json.RawMessage{"Title": json.RawMessage(`"Kenya Nyeri AA"`)})
	must("edit", err)
	_, err = s.store.ItemAction(ctx, s.inst, "en-us", kenya, content.ActionPublish)
	must("publish", err)
	_, err = s.store.SaveItem(ctx, s.inst, "fr-ca", kenya, map[string]json.RawMessage{"Title": json.RawMessage(`"Kenya (brouillon)"`)})
	must("draft", err)
	// A reorder of the posts: reversed.
	order := ids(posts.Items)
	slices.Reverse(order)
	must("reorder", s.store.ReorderContainer(ctx, s.inst, "posts", order))
	// An unpublish of a tag that posts select, in fr-ca.
	_, err = s.store.ItemAction(ctx, s.inst, "fr-ca", recipes, content.ActionUnpublish)
	must("unpublish", err)
	// A delete of a product that a component on a page selects, in en-us.
	must("delete", s.store.DeleteItem(ctx, s.inst, "en-us", dripper))
	// A page unpublished.
	_, err = s.store.PageAction(ctx, s.inst, "en-us", contact, content.ActionUnpublish)
	must("unpublish page", err)
	// A redirection changed.
	_, err = s.store.CreateRedirection(ctx, s.inst, content.RedirectionInput{OriginURL: ptr("/old-blog"), DestinationURL: ptr("/blog"), StatusCode: ptr(302)})
	must("redirection", err)

	for _, fl := range []string{"fetch", "preview"} {
		after := api.snapshot(t, fl, locales)
		var want []string
		for k, v := range after {
			if !reflect.DeepEqual(before[fl][k], v) {
				want = append(want, k)
			}
		}
		for k := range before[fl] {
			if _, ok := after[k]; !ok {
				want = append(want, k+" (deleted)")
			}
		}
		got := s.runSyncClient(t, dirs[fl], fl, locales)
		var have []string
		for _, r := range got {
			k := fmt.Sprintf("%s %s %d", r.LanguageCode, r.Kind, r.ID)
			if r.State == int(content.Deleted) {
				k += " (deleted)"
			}
			have = append(have, k)
		}
		sort.Strings(want)
		sort.Strings(have)
		if !slices.Equal(have, want) {
			t.Errorf("%s: the incremental run received\n%v\nwant exactly the changes\n%v", fl, have, want)
		}
		if len(want) < 6 {
			t.Errorf("%s: only %d changes; the scenario should change more", fl, len(want))
		}
		api.checkMirror(t, dirs[fl], fl, locales)
	}
}

func ptr[T any](v T) *T { return &v }

// TestFetchSDKSyncMethods drives getSyncContent, getSyncPages,
// getUrlRedirections and getGallery of the real @agility/content-fetch
// SDK and compares each result with the Fetch API answered directly.
func TestFetchSDKSyncMethods(t *testing.T) {
	s := startSync(t)
	ctx := context.Background()
	// An uploaded image in a gallery, through the management API over TLS.
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 30, 20)))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "roaster.png")
	w.Write(img.Bytes())
	mw.WriteField("label", "The roaster")
	mw.Close()
	req, _ := http.NewRequest("POST", s.base+"/api/v1/instance/"+s.inst.Guid+"/assets", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var asset content.Asset
	json.NewDecoder(resp.Body).Decode(&asset)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.HasPrefix(asset.URL, s.base+"/"+s.inst.Guid+"/assets/") {
		t.Fatalf("upload = %d %+v", resp.StatusCode, asset)
	}
	galleries, err := s.store.Galleries(ctx, s.inst)
	if err != nil || len(galleries) == 0 {
		t.Fatalf("the demo has no gallery: %v", err)
	}
	gallery := galleries[0].ID
	if _, err := s.store.AddGalleryAssets(ctx, s.inst, gallery, []int64{asset.ID}); err != nil {
		t.Fatal(err)
	}
	if r, b := s.do(t, strings.TrimPrefix(asset.URL, s.base), nil); r.StatusCode != 200 || !bytes.Equal(b, img.Bytes()) {
		t.Errorf("GET %s = %d", asset.URL, r.StatusCode)
	}
	if _, err := s.store.CreateRedirection(ctx, s.inst, content.RedirectionInput{OriginURL: ptr("/old"), DestinationURL: ptr("/new")}); err != nil {
		t.Fatal(err)
	}

	type check struct {
		call   sdkCall
		direct string
	}
	var checks []check
	for _, fl := range []string{"fetch", "preview"} {
		for _, loc := range []string{"en-us", "fr-ca"} {
			checks = append(checks,
				check{sdkCall{fl, "getSyncContent", map[string]any{"syncToken": 0, "locale": loc}},
					fmt.Sprintf("/%s/%s/%s/sync/items?syncToken=0", s.inst.Guid, fl, loc)},
				check{sdkCall{fl, "getSyncContent", map[string]any{"syncToken": 0, "pageSize": 3, "languageCode": loc}},
					fmt.Sprintf("/%s/%s/%s/sync/items?syncToken=0&pageSize=3", s.inst.Guid, fl, loc)},
				check{sdkCall{fl, "getSyncPages", map[string]any{"syncToken": 0, "pageSize": 4, "locale": loc}},
					fmt.Sprintf("/%s/%s/%s/sync/pages?syncToken=0&pageSize=4", s.inst.Guid, fl, loc)},
			)
		}
		checks = append(checks,
			check{sdkCall{fl, "getUrlRedirections", map[string]any{}}, fmt.Sprintf("/%s/%s/urlredirection", s.inst.Guid, fl)},
			check{sdkCall{fl, "getGallery", map[string]any{"galleryID": gallery}}, fmt.Sprintf("/%s/%s/gallery/%d", s.inst.Guid, fl, gallery)},
		)
	}
	calls := make([]sdkCall, len(checks))
	for i, c := range checks {
		calls[i] = c.call
	}
	key := map[string]string{"fetch": s.fetchKey, "preview": s.previewKey}
	results := s.runSDK(t, s.base+"/"+s.inst.Guid, calls)
	for i, c := range checks {
		name := fmt.Sprintf("%s %s %v", c.call.Flavour, c.call.Method, c.call.Params)
		r := results[i]
		if !r.OK || r.Result == nil {
			t.Errorf("%s: SDK failed or answered undefined: %s", name, r.Error)
			continue
		}
		status, want := s.get(t, key[c.call.Flavour], c.direct)
		if status != 200 || !reflect.DeepEqual(r.Result, want) {
			got, _ := json.Marshal(r.Result)
			w, _ := json.Marshal(want)
			t.Errorf("%s: SDK result differs from GET %s (%d)\n got %.300s\nwant %.300s", name, c.direct, status, got, w)
		}
		switch c.call.Method {
		case "getSyncContent", "getSyncPages":
			if n := len(dig(r.Result, "items").([]any)); n == 0 || dig(r.Result, "syncToken").(float64) <= 0 {
				t.Errorf("%s: %d items, token %v", name, n, dig(r.Result, "syncToken"))
			}
		case "getGallery":
			media, _ := dig(r.Result, "media").([]any)
			if len(media) != 1 || dig(media[0], "url") != asset.URL || dig(media[0], "metaData", "pixelWidth") != "30" {
				t.Errorf("%s: media %v", name, media)
			}
		case "getUrlRedirections":
			if items, _ := dig(r.Result, "items").([]any); len(items) != 1 || dig(r.Result, "isUpToDate") != false {
				t.Errorf("%s: %v", name, r.Result)
			}
		}
	}
	// A second call with the lastAccessDate the first gave (the SDK sends it
	// back through a JavaScript Date) is up to date.
	last := dig(results[len(results)-2].Result, "lastAccessDate")
	again := s.runSDK(t, s.base+"/"+s.inst.Guid, []sdkCall{{"fetch", "getUrlRedirections", map[string]any{"lastAccessDate": last}}})
	if !again[0].OK || dig(again[0].Result, "isUpToDate") != true || len(dig(again[0].Result, "items").([]any)) != 0 {
		t.Errorf("getUrlRedirections(lastAccessDate %v) = %v, %s", last, again[0].Result, again[0].Error)
	}
}

// TestSyncTokensUnderConcurrentPublishing follows the sync stream over
// HTTPS, a few entries at a time, while several writers publish and
// unpublish: tokens only increase, and the reader ends with exactly the
// published items.
func TestSyncTokensUnderConcurrentPublishing(t *testing.T) {
	s := startSync(t)
	ctx := context.Background()
	seen := map[int64]bool{}
	var token float64
	read := func() int {
		status, v := s.get(t, s.fetchKey, fmt.Sprintf("/%s/fetch/en-us/sync/items?syncToken=%d&pageSize=4", s.inst.Guid, int64(token)))
		if status != 200 {
			t.Fatalf("sync = %d", status)
		}
		items := dig(v, "items").([]any)
		next := dig(v, "syncToken").(float64)
		if len(items) > 0 && next <= token {
			t.Errorf("token %v after %v", next, token)
		}
		for _, it := range items {
			seen[int64(dig(it, "contentID").(float64))] = dig(it, "properties", "state") != float64(3)
		}
		if next > 0 {
			token = next
		}
		return len(items)
	}
	for read() > 0 {
	}
	tags, err := s.store.Items(ctx, s.inst, "en-us", "tags", 250, 0)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				st, err := s.store.CreateItem(ctx, s.inst, "en-us", "tags", map[string]json.RawMessage{
					"Title": json.RawMessage(fmt.Sprintf(`"w%d-%d"`, w, i)), "Slug": json.RawMessage(fmt.Sprintf(`"w%d-%d"`, w, i))})
				if err == nil {
					_, err = s.store.ItemAction(ctx, s.inst, "en-us", st.ContentID, content.ActionPublish)
				}
				if err == nil && i%2 == 1 {
					_, err = s.store.ItemAction(ctx, s.inst, "en-us", tags.Items[(w+i)%len(tags.Items)].ContentID, content.ActionUnpublish)
					if err != nil && strings.Contains(err.Error(), "no published version") {
						err = nil // another writer unpublished it first
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			read()
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for read() > 0 {
	}
	var published []int64
	if err := s.store.DB().SelectContext(ctx, &published, `SELECT content_id FROM item_copies
		WHERE instance_id = $1 AND locale = 'en-us' AND published_version_id IS NOT NULL ORDER BY content_id`, s.inst.ID); err != nil {
		t.Fatal(err)
	}
	var have []int64
	for id, visible := range seen {
		if visible {
			have = append(have, id)
		}
	}
	slices.Sort(have)
	if !slices.Equal(have, published) {
		t.Errorf("the reader holds %v\nthe store publishes %v", have, published)
	}
}

// TestSyncThroughEdge puts an edge in front of the origin (the edge
// serving TLS, the origin on loopback HTTP, as edgecms serve does) and runs
// the sync client against the edge: sync, URL redirection and gallery
// reads and asset bytes pass through it.
func TestSyncThroughEdge(t *testing.T) {
	s := startSync(t)
	ctx := context.Background()
	certPEM, keyPEM := testcert.New(t)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	eln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	// Asset URLs are the edge's.
	s.store.PublicURL = media.PublicURL("https://" + eln.Addr().String())
	objects := store.NewMemory(nil)
	r := render.New(s.store)
	t.Cleanup(func() { r.Close() })
	org := origin.New(origin.Config{Assets: objects, RenderCacheBytes: 1,
		Render: func(ctx context.Context, req fetch.Request) ([]byte, []string, error) {
			site, err := render.LoadSite(ctx, s.store, req.Guid)
			if err != nil {
				return nil, nil, err
			}
			res, err := r.Render(ctx, site, req)
			return res.Body, res.Tags, err
		}}, s.store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	oln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go org.App().Listener(oln)
	t.Cleanup(func() { org.Shutdown(context.Background()) })
	front, err := edge.New(edge.Config{Store: store.NewMemory(nil), OriginURL: "http://" + oln.Addr().String()},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	go front.App().Listener(eln)
	t.Cleanup(func() { front.Shutdown(context.Background()) })
	os.WriteFile(s.caFile, certPEM, 0o600) // the node clients trust the edge's certificate
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	s.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	s.base = "https://" + eln.Addr().String()

	if _, err := s.store.CreateRedirection(ctx, s.inst, content.RedirectionInput{OriginURL: ptr("/old"), DestinationURL: ptr("/new")}); err != nil {
		t.Fatal(err)
	}
	api := newFetchAPI(t, s)
	locales := []string{"en-us", "fr-ca"}
	dir := t.TempDir()
	if got := s.runSyncClient(t, dir, "fetch", locales); len(got) == 0 {
		t.Fatal("the first run through the edge received nothing")
	}
	api.checkMirror(t, dir, "fetch", locales)
	kenya := s.itemBySlug(t, "products", "kenya-nyeri-gatomboya-aa")
	if _, err := s.store.ItemAction(ctx, s.inst, "fr-ca", kenya, content.ActionUnpublish); err != nil {
		t.Fatal(err)
	}
	got := s.runSyncClient(t, dir, "fetch", locales)
	if len(got) != 1 || got[0].ID != kenya || got[0].State != int(content.Deleted) || got[0].LanguageCode != "fr-ca" {
		t.Errorf("the incremental run through the edge received %v, want the unpublished item", got)
	}
	api.checkMirror(t, dir, "fetch", locales)

	// Asset bytes and the gallery through the edge.
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 3, 3)))
	b, _ := json.Marshal(map[string]any{"fileName": "a.png", "data": img.Bytes()})
	req, _ := http.NewRequest("POST", s.base+"/api/v1/instance/"+s.inst.Guid+"/assets", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var asset content.Asset
	json.NewDecoder(resp.Body).Decode(&asset)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.HasPrefix(asset.URL, s.base+"/"+s.inst.Guid+"/assets/") {
		t.Fatalf("upload through the edge = %d, url %q (want the edge's address)", resp.StatusCode, asset.URL)
	}
	res, body := s.do(t, strings.TrimPrefix(asset.URL, s.base), nil)
	if res.StatusCode != 200 || !bytes.Equal(body, img.Bytes()) || res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("GET %s through the edge = %d %q", asset.URL, res.StatusCode, res.Header.Get("Cache-Control"))
	}
	galleries, _ := s.store.Galleries(ctx, s.inst)
	if _, err := s.store.AddGalleryAssets(ctx, s.inst, galleries[0].ID, []int64{asset.ID}); err != nil {
		t.Fatal(err)
	}
	status, v := s.get(t, s.fetchKey, fmt.Sprintf("/%s/fetch/gallery/%d", s.inst.Guid, galleries[0].ID))
	if status != 200 || dig(v, "count") != float64(1) {
		t.Errorf("gallery through the edge = %d %v", status, v)
	}
}
