package origin_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/origin"
)

// previewHarness is a harness whose origin signs preview links with a
// stopped clock, on an instance with a page in two locales, a dynamic page
// of articles, and a preview key and a fetch key.
type previewHarness struct {
	*harness
	now                  time.Time
	page, dynamic, item  int64
	previewKey, fetchKey string
}

func newPreviewHarness(t *testing.T) *previewHarness {
	t.Helper()
	h := &previewHarness{harness: newHarness(t), now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	h.srv = h.origin(testSecret)
	w := h.populate()
	h.page, h.item = w.parent, w.article
	ctx := context.Background()
	if _, err := h.store.SavePage(ctx, h.inst, "fr-ca", h.page, content.PageInput{Title: ptr("Accueil")}); err != nil {
		t.Fatal(err)
	}
	p, err := h.store.CreatePage(ctx, h.inst, "en-us", content.PageInput{Title: ptr("Articles"), PageModel: ptr("Main"),
		Dynamic: &content.Dynamic{ReferenceName: "articles", PathField: "slug"}})
	if err != nil {
		t.Fatal(err)
	}
	h.dynamic = p.PageID
	for _, typ := range []string{"preview", "fetch"} {
		_, key, err := h.store.CreateAPIKey(ctx, h.inst, content.APIKeyInput{Name: ptr("site"), Type: typ})
		if err != nil {
			t.Fatal(err)
		}
		if typ == "preview" {
			h.previewKey = key
		} else {
			h.fetchKey = key
		}
	}
	return h
}

// origin is an origin on the harness's database signing with secret, on
// the harness's clock.
func (h *previewHarness) origin(secret []byte) *origin.Server {
	return origin.New(origin.Config{SecretKey: secret, Now: func() time.Time { return h.now }}, h.store,
		slog.New(slog.NewTextHandler(testWriter{h.t}, nil)))
}

// link asks for the preview link of page in locale (with body, when not
// nil) and returns its answer.
func (h *previewHarness) link(locale string, page int64, body any) response {
	h.t.Helper()
	return h.as(content.RoleEdit, request{"POST", fmt.Sprintf("/%s/pages/%d/preview-link", locale, page), body})
}

// verify sends token to the exchange with the APIKey header key (none when
// empty), on srv.
func (h *previewHarness) verify(srv *origin.Server, key, token string) response {
	h.t.Helper()
	hdr := http.Header{}
	if key != "" {
		hdr.Set("APIKey", key)
	}
	saved := h.srv
	h.srv = srv
	defer func() { h.srv = saved }()
	return h.sendHeaders("POST", "/api/v1/preview/verify", hdr, "application/json", bodyBytes(h.t, map[string]string{"token": token}))
}

// TestPreviewLink: an editor's preview link fills in the channel's
// template with the page's path and a signed token, and a site exchanges
// the token with its preview key for what the link opens.
func TestPreviewLink(t *testing.T) {
	t.Parallel()
	h := newPreviewHarness(t)
	tmpl := "https://site.example/api/preview?slug={path}&key={previewLink}"

	r := h.link("en-us", h.page, nil)
	if r.status != 200 {
		t.Fatalf("preview link = %s", r)
	}
	var got struct {
		URL, Token, Path, Locale, Channel string
		ExpiresAt                         time.Time
		PageID                            int64
	}
	r.decode(t, &got)
	u, err := url.Parse(got.URL)
	if err != nil || !strings.HasPrefix(got.URL, "https://site.example/api/preview?slug=%2Fhome&key=pv1.") ||
		u.Query().Get("key") != got.Token || u.Query().Get("slug") != "/home" {
		t.Errorf("url = %q (token %q), want the template %q filled in", got.URL, got.Token, tmpl)
	}
	if !got.ExpiresAt.Equal(h.now.Add(origin.DefaultPreviewLinkTTL)) || got.Path != "/home" || got.PageID != h.page {
		t.Errorf("link = %+v, want /home, page %d, expiring %s", got, h.page, h.now.Add(origin.DefaultPreviewLinkTTL))
	}

	// The site's exchange.
	v := h.verify(h.srv, h.previewKey, got.Token)
	if v.status != 200 || v.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("verify = %s (Cache-Control %q), want 200 no-store", v, v.header.Get("Cache-Control"))
	}
	want := fmt.Sprintf(`{"guid":%q,"locale":"en-us","channel":"website","pageID":%d,"contentID":0,"path":"/home","expiresAt":%q}`,
		h.guid, h.page, h.now.Add(origin.DefaultPreviewLinkTTL).Format(time.RFC3339))
	if string(v.body) != want {
		t.Errorf("verify = %s, want %s", v.body, want)
	}
	// Another origin with the same secret (another process) takes it too.
	if v := h.verify(h.origin(testSecret), h.previewKey, got.Token); v.status != 200 {
		t.Errorf("verify on another origin with the same secret = %s", v)
	}

	// The French copy's path; a template with {path} in the URL's path.
	agility := "https://site.example{path}?agilitypreviewkey={previewLink}&lang={locale}&ContentID={contentID}"
	if r := h.as(content.RoleManage, request{"PATCH", "/channels/WEBSITE", map[string]any{"previewUrl": " " + agility + " "}}); r.status != 200 ||
		!strings.Contains(string(r.body), `"previewUrl":"https://site.example{path}?agilitypreviewkey`) {
		t.Fatalf("PATCH /channels/WEBSITE = %s", r)
	}
	r = h.link("fr-ca", h.page, nil)
	r.decode(t, &got)
	if !strings.HasPrefix(got.URL, "https://site.example/accueil?agilitypreviewkey=pv1.") || !strings.HasSuffix(got.URL, "&lang=fr-ca&ContentID=") {
		t.Errorf("fr-ca url = %s", got.URL)
	}
	v = h.verify(h.srv, h.previewKey, got.Token)
	if v.status != 200 || !strings.Contains(string(v.body), `"locale":"fr-ca"`) || !strings.Contains(string(v.body), `"path":"/accueil"`) {
		t.Errorf("verify fr-ca = %s", v)
	}

	// An item of a dynamic page.
	r = h.link("en-us", h.dynamic, map[string]any{"contentID": h.item})
	r.decode(t, &got)
	if r.status != 200 || !strings.HasSuffix(got.URL, fmt.Sprintf("&lang=en-us&ContentID=%d", h.item)) {
		t.Errorf("dynamic page link = %s", r)
	}
	if v := h.verify(h.srv, h.previewKey, got.Token); !strings.Contains(string(v.body), fmt.Sprintf(`"contentID":%d`, h.item)) {
		t.Errorf("verify of a dynamic page's item = %s", v)
	}
	if r := h.link("en-us", h.dynamic, map[string]any{"contentID": 999999}); r.status != 404 {
		t.Errorf("an unknown item = %s, want 404", r)
	}

	// The channel's template listed, and cleared: no link without one.
	if r := h.as(content.RoleEdit, request{"GET", "/channels", nil}); !strings.Contains(string(r.body), `"previewUrl":"https://site.example{path}`) {
		t.Errorf("GET /channels = %s, want the preview URL", r)
	}
	if r := h.as(content.RoleManage, request{"PATCH", "/channels/website", map[string]any{"previewUrl": ""}}); r.status != 200 ||
		!strings.Contains(string(r.body), `"previewUrl":null`) {
		t.Fatalf("clearing the preview URL = %s", r)
	}
	checkProblem(t, "a link without a preview URL", h.link("en-us", h.page, nil), 409, "")
}

// TestPreviewLinkRefused: the exchange refuses tokens that were changed,
// signed with another secret or expired, and keys that are not a preview
// key of the token's instance; an origin without a secret refuses links.
func TestPreviewLinkRefused(t *testing.T) {
	t.Parallel()
	h := newPreviewHarness(t)
	var got struct{ Token string }
	h.link("en-us", h.page, nil).decode(t, &got)
	token := got.Token
	body, sig, _ := strings.Cut(strings.TrimPrefix(token, "pv1."), ".")
	claims, _ := base64.RawURLEncoding.DecodeString(body)
	forged := "pv1." + base64.RawURLEncoding.EncodeToString(bytes.Replace(claims, []byte(`"p":`), []byte(`"p":9`), 1)) + "." + sig

	other, err := h.store.CreateInstance(context.Background(), "other-site", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := h.store.CreateAPIKey(context.Background(), other, content.APIKeyInput{Name: ptr("site"), Type: "preview"})
	if err != nil {
		t.Fatal(err)
	}
	var signedElsewhere struct{ Token string }
	elsewhere := &previewHarness{harness: h.harness, now: h.now}
	h.srv = elsewhere.origin(bytes.Repeat([]byte{6}, 32))
	h.link("en-us", h.page, nil).decode(t, &signedElsewhere)
	h.srv = h.origin(testSecret)

	for _, tt := range []struct {
		name, key, token string
		want             int
		detail           string
	}{
		{"changed claims", h.previewKey, forged, 401, "not valid"},
		{"signature cut", h.previewKey, token[:len(token)-4], 401, "not valid"},
		{"another secret's token", h.previewKey, signedElsewhere.Token, 401, "not valid"},
		{"not a token", h.previewKey, "hello", 401, "not valid"},
		{"the prefix alone", h.previewKey, "pv1.", 401, "not valid"},
		{"no key", "", token, 401, "APIKey"},
		{"a fetch key", h.fetchKey, token, 403, "preview"},
		{"another instance's preview key", otherKey, token, 401, ""},
		{"an empty token", h.previewKey, " ", 400, ""},
	} {
		r := h.verify(h.srv, tt.key, tt.token)
		doc := checkProblem(t, tt.name, r, tt.want, "")
		if d, _ := doc["detail"].(string); !strings.Contains(d, tt.detail) {
			t.Errorf("%s: detail %q, want it to say %q", tt.name, d, tt.detail)
		}
		if strings.Contains(string(r.body), h.previewKey) {
			t.Errorf("%s: the answer echoes the key", tt.name)
		}
	}
	if r := h.sendHeaders("POST", "/api/v1/preview/verify", http.Header{"Apikey": {h.previewKey}}, "application/json", []byte(`{"token": 1}`)); r.status != 400 {
		t.Errorf("a token as a number = %s, want 400", r)
	}

	// Valid for ten minutes, then expired.
	h.now = h.now.Add(origin.DefaultPreviewLinkTTL - time.Second)
	if r := h.verify(h.srv, h.previewKey, token); r.status != 200 {
		t.Errorf("a second before expiry = %s, want 200", r)
	}
	h.now = h.now.Add(time.Second)
	checkProblem(t, "expired", h.verify(h.srv, h.previewKey, token), 401, "")
	if r := h.verify(h.srv, h.previewKey, token); !strings.Contains(string(r.body), "expired") {
		t.Errorf("expired: %s, want the detail to say so", r)
	}

	// Without a secret, an origin makes and takes no links.
	h.srv = h.origin(nil)
	checkProblem(t, "a link from an origin without a secret", h.link("en-us", h.page, nil), 503, "")
	checkProblem(t, "an exchange at an origin without a secret", h.verify(h.srv, h.previewKey, token), 503, "")
	var doc map[string]any
	json.Unmarshal(h.verify(h.srv, h.previewKey, token).body, &doc)
	if d, _ := doc["detail"].(string); !strings.Contains(d, "EDGECMS_SECRET_KEY") {
		t.Errorf("503 detail %q, want it to name EDGECMS_SECRET_KEY", d)
	}
}

// TestPreviewTemplateEscaping: each placeholder is escaped for where it
// stands, so that no path or token can change the URL's shape.
func TestPreviewTemplateEscaping(t *testing.T) {
	t.Parallel()
	h := newPreviewHarness(t)
	for _, tt := range []struct{ tmpl, want string }{
		{"https://site.example/preview/{locale}{path}?k={previewLink}", "https://site.example/preview/en-us/home?k=pv1."},
		{"https://site.example/p?path={path}&page={pageID}&ch={channel}#k={previewLink}", fmt.Sprintf("https://site.example/p?path=%%2Fhome&page=%d&ch=website#k=pv1.", h.page)},
	} {
		if r := h.as(content.RoleManage, request{"PATCH", "/channels/website", map[string]any{"previewUrl": tt.tmpl}}); r.status != 200 {
			t.Fatalf("PATCH %s = %s", tt.tmpl, r)
		}
		var got struct{ URL string }
		h.link("en-us", h.page, nil).decode(t, &got)
		if !strings.HasPrefix(got.URL, tt.want) {
			t.Errorf("%s gave %s, want it to start %s", tt.tmpl, got.URL, tt.want)
		}
	}
}
