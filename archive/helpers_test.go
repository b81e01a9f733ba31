package archive_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sort"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
)

// publicURL is the public URL of every test site: asset URLs are made
// from it.
const publicURL = media.PublicURL("https://cdn.example")

// site is one deployment: a database, a folder store, an origin answering
// in process and a publisher writing the store.
type site struct {
	t       *testing.T
	db      *sqlx.DB
	dsn     string
	cs      *content.Store
	objects store.Store
	pub     *publisher.Publisher
	srv     *origin.Server
}

func newSite(t *testing.T) *site {
	t.Helper()
	objects, err := store.Open(context.Background(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newSiteOn(t, objects)
}

// newSiteOn is a site whose objects are in the given store.
func newSiteOn(t *testing.T, objects store.Store) *site {
	t.Helper()
	db, dsn := pgtest.New(t)
	cs := content.NewStore(db)
	cs.PublicURL = publicURL
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pub := publisher.New(publisher.Config{Store: objects, DatabaseURL: dsn}, cs, log)
	t.Cleanup(func() { pub.Close() })
	hooks, err := webhooks.NewStore(db, webhooks.Options{Key: bytes.Repeat([]byte{9}, webhooks.KeySize),
		Policy: egress.NewPolicy(netip.MustParsePrefix("127.0.0.0/8"))})
	if err != nil {
		t.Fatal(err)
	}
	r := render.New(cs)
	t.Cleanup(func() { r.Close() })
	srv := origin.New(origin.Config{Renderer: r, RenderCacheBytes: -1, Assets: objects, Webhooks: hooks,
		SecretKey: bytes.Repeat([]byte{5}, 32)}, cs, log)
	return &site{t: t, db: db, dsn: dsn, cs: cs, objects: objects, pub: pub, srv: srv}
}

// do sends one request to the origin.
func (s *site) do(method, path string, header http.Header, body io.Reader) (int, http.Header, []byte) {
	s.t.Helper()
	req := httptest.NewRequest(method, path, body)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := s.srv.App().Test(req, -1)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return res.StatusCode, res.Header, b
}

// manage sends a management request with a token, a JSON body (or a
// multipart one), and wants a 2xx; it decodes the answer into out.
func (s *site) manage(guid, token, method, path string, body any, out any) {
	s.t.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}}
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case *multipart.Writer:
		s.t.Fatal("pass multipartBody")
	case multipartBody:
		h.Set("Content-Type", b.contentType)
		r = bytes.NewReader(b.data)
	default:
		j, _ := json.Marshal(body)
		h.Set("Content-Type", "application/json")
		r = bytes.NewReader(j)
	}
	status, _, got := s.do(method, "/api/v1/instance/"+guid+path, h, r)
	if status/100 != 2 {
		s.t.Fatalf("%s %s = %d %s", method, path, status, got)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			s.t.Fatalf("%s %s: decode %s: %v", method, path, got, err)
		}
	}
}

type multipartBody struct {
	contentType string
	data        []byte
}

// upload is a multipart upload of one file.
func upload(name string, data []byte, label string) multipartBody {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(data)
	mw.WriteField("label", label)
	mw.Close()
	return multipartBody{contentType: mw.FormDataContentType(), data: b.Bytes()}
}

// testPNG encodes a width x height PNG of one colour.
func testPNG(width, height int, c color.Gray) []byte {
	img := image.NewGray(image.Rect(0, 0, width, height))
	for i := range img.Pix {
		img.Pix[i] = c.Y
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// answer is what the origin answered to one request.
type answer struct {
	status      int
	contentType string
	body        string
}

func (a answer) String() string { return fmt.Sprintf("%d %s %s", a.status, a.contentType, a.body) }

// answers asks the origin every path with the header of its flavour.
func (s *site) answers(paths []string, fetchKey, previewKey string) map[string]answer {
	s.t.Helper()
	out := map[string]answer{}
	for _, p := range paths {
		h := http.Header{}
		switch {
		case strings.Contains(p, "/fetch/"):
			h.Set("APIKey", fetchKey)
		case strings.Contains(p, "/preview/"):
			h.Set("APIKey", previewKey)
		}
		status, header, body := s.do("GET", p, h, nil)
		out[p] = answer{status: status, contentType: header.Get("Content-Type"), body: string(body)}
	}
	return out
}

// storeObjects returns the body of every object below prefix.
func (s *site) storeObjects(prefix string) map[string]string {
	s.t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	var keys []string
	if err := s.objects.List(ctx, prefix, func(info store.Info) error {
		keys = append(keys, info.Key)
		return nil
	}); err != nil {
		s.t.Fatal(err)
	}
	for _, k := range keys {
		o, err := s.objects.Get(ctx, k)
		if err != nil {
			s.t.Fatal(err)
		}
		out[k] = o.ContentType + "\n" + o.CacheControl + "\n" + strings.Join(o.Tags, " ") + "\n" + string(o.Body)
	}
	return out
}

// requestPaths lists every Fetch API request of instance guid that the
// publisher maintains, in both flavours, with the sync streams of every
// locale, the galleries and the redirections, and the asset bytes.
func (s *site) requestPaths(guid string) []string {
	s.t.Helper()
	ctx := context.Background()
	var reqs []string
	if err := s.db.SelectContext(ctx, &reqs, `SELECT request FROM objects WHERE guid = $1 AND etag IS NOT NULL ORDER BY request`, guid); err != nil {
		s.t.Fatal(err)
	}
	var paths []string
	for _, r := range reqs {
		paths = append(paths, r, strings.Replace(r, "/fetch/", "/preview/", 1))
	}
	var locales []string
	if err := s.db.SelectContext(ctx, &locales, `SELECT l.code FROM locales l JOIN instances i ON i.id = l.instance_id WHERE i.guid = $1`, guid); err != nil {
		s.t.Fatal(err)
	}
	for _, l := range locales {
		for _, api := range []string{"fetch", "preview"} {
			paths = append(paths, "/"+guid+"/"+api+"/"+l+"/sync/items?syncToken=0", "/"+guid+"/"+api+"/"+l+"/sync/pages?syncToken=0",
				"/"+guid+"/"+api+"/"+l+"/sync/items?syncToken=0&pageSize=3")
		}
	}
	var galleries []int64
	if err := s.db.SelectContext(ctx, &galleries, `SELECT g.id FROM galleries g JOIN instances i ON i.id = g.instance_id WHERE i.guid = $1`, guid); err != nil {
		s.t.Fatal(err)
	}
	for _, g := range galleries {
		paths = append(paths, fmt.Sprintf("/%s/fetch/gallery/%d", guid, g), fmt.Sprintf("/%s/preview/gallery/%d", guid, g))
	}
	paths = append(paths, "/"+guid+"/fetch/urlredirection", "/"+guid+"/preview/urlredirection")
	var keys []string
	if err := s.db.SelectContext(ctx, &keys, `SELECT DISTINCT a.object_key FROM assets a JOIN instances i ON i.id = a.instance_id WHERE i.guid = $1`, guid); err != nil {
		s.t.Fatal(err)
	}
	for _, k := range keys {
		paths = append(paths, "/"+k)
	}
	sort.Strings(paths)
	return paths
}
