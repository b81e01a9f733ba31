package origin_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
)

// routeCase is one request to a management route, the weakest role that may
// make it, and the status it answers when allowed (in a fresh world, with the
// cases before it run in order).
type routeCase struct {
	pattern string // the route as registered under /api/v1/instance/:guid
	req     request
	role    content.Role
	want    int
}

const instancePrefix = "/api/v1/instance/:guid"

// matrix lists a request to every management route, in an order where each
// one can succeed after the ones before it.
func matrix(w world) []routeCase {
	const (
		edit    = content.RoleEdit
		publish = content.RolePublish
		manage  = content.RoleManage
		full    = content.RoleFull
	)
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	item := fmt.Sprintf("/en-us/items/%d", w.article)
	page := fmt.Sprintf("/en-us/pages/%d", w.parent)
	lone := fmt.Sprintf("/en-us/pages/%d", w.lone)
	hook := "/webhook/" + w.webhook
	asset, spare := fmt.Sprintf("/assets/%d", w.asset), fmt.Sprintf("/assets/%d", w.spare)
	gallery := fmt.Sprintf("/galleries/%d", w.gallery)
	redirect := fmt.Sprintf("/redirections/%d", w.redirect)
	type m = map[string]any
	return []routeCase{
		{"/locales", request{"GET", "/locales", nil}, edit, 200},
		{"/locales", request{"POST", "/locales", m{"code": "de-de", "name": "Deutsch"}}, manage, 201},
		{"/locales/:code", request{"PATCH", "/locales/fr-ca", m{"name": "Français"}}, manage, 200},
		{"/locales/:code", request{"DELETE", "/locales/de-de", nil}, manage, 204},

		{"/tokens", request{"GET", "/tokens", nil}, full, 200},
		{"/tokens", request{"POST", "/tokens", m{"name": "ci", "role": "edit"}}, full, 201},
		{"/tokens/:id", request{"DELETE", fmt.Sprintf("/tokens/%d", w.spareToken), nil}, full, 204},

		{"/apikeys", request{"GET", "/apikeys", nil}, manage, 200},
		{"/apikeys", request{"POST", "/apikeys", m{"name": "preview", "type": "preview"}}, manage, 201},
		{"/apikeys/:id", request{"PATCH", fmt.Sprintf("/apikeys/%d", w.apiKey), m{"enabled": false}}, manage, 200},
		{"/apikeys/:id", request{"DELETE", fmt.Sprintf("/apikeys/%d", w.apiKey), nil}, manage, 204},

		{"/models", request{"GET", "/models", nil}, edit, 200},
		{"/models", request{"POST", "/models", m{"name": "Extra", "kind": "content", "fields": []m{{"name": "a", "type": "text"}}}}, manage, 201},
		{"/models/:name", request{"GET", "/models/Article", nil}, edit, 200},
		{"/models/:name", request{"PUT", "/models/Unused", m{"fields": []m{{"name": "x", "type": "html"}, {"name": "y", "type": "text"}}}}, manage, 200},
		{"/models/:name", request{"DELETE", "/models/Unused", nil}, manage, 204},

		{"/containers", request{"GET", "/containers", nil}, edit, 200},
		{"/containers", request{"POST", "/containers", m{"referenceName": "more", "model": "Article"}}, manage, 201},
		{"/containers/:ref", request{"GET", "/containers/articles", nil}, edit, 200},
		{"/containers/:ref", request{"DELETE", "/containers/empty", nil}, manage, 204},
		{"/containers/:ref/order", request{"PUT", "/containers/articles/order", m{"contentIDs": []int64{w.extra, w.article}}}, publish, 204},

		{"/page-models", request{"GET", "/page-models", nil}, edit, 200},
		{"/page-models", request{"POST", "/page-models", m{"name": "Landing", "zones": []string{"Top"}}}, manage, 201},
		{"/page-models/:name", request{"GET", "/page-models/Main", nil}, edit, 200},
		{"/page-models/:name", request{"PUT", "/page-models/Spare", m{"zones": []any{"Zone", "More"}}}, manage, 200},
		{"/page-models/:name", request{"DELETE", "/page-models/Spare", nil}, manage, 204},

		{"/audit", request{"GET", "/audit?take=5", nil}, manage, 200},
		{"/settings", request{"GET", "/settings", nil}, full, 200},
		{"/settings", request{"PATCH", "/settings", m{"versionLimit": 10}}, full, 200},
		{"/channels", request{"GET", "/channels", nil}, edit, 200},
		{"/channels", request{"POST", "/channels", m{"name": "footer"}}, manage, 201},
		{"/channels/:name", request{"PATCH", "/channels/footer", m{"previewUrl": "https://site.example{path}?agilitypreviewkey={previewLink}"}}, manage, 200},
		{"/channels/:name", request{"DELETE", "/channels/footer", nil}, manage, 204},

		{"/webhook", request{"POST", "/webhook", m{"name": "CI", "url": w.hookURL, "contentSaveEvents": true}}, manage, 201},
		{"/webhook", request{"POST", "/webhook", m{"rowKey": w.webhook, "retriesEnabled": true, "retryCount": 5}}, manage, 200},
		{"/webhook/list", request{"GET", "/webhook/list?take=2", nil}, manage, 200},
		{"/webhook/:id", request{"GET", hook, nil}, manage, 200},
		{"/webhook/:id/history", request{"GET", hook + "/history?take=1&token=" + w.historyToken, nil}, manage, 200},
		{"/webhook/:id/test", request{"POST", hook + "/test", nil}, manage, 200},
		{"/webhook/:id/history/:rowKey/redeliver", request{"POST", hook + "/history/" + w.delivery + "/redeliver", nil}, manage, 202},
		{"/webhook/:id/rotate-secret", request{"POST", hook + "/rotate-secret", nil}, full, 200},
		{"/webhook/:id", request{"DELETE", hook, nil}, manage, 204},

		{"/users", request{"GET", "/users", nil}, full, 200},
		{"/users", request{"POST", "/users", m{"email": "new@example.com", "role": "publish", "password": "a long new password"}}, full, 201},
		{"/users/:id", request{"DELETE", fmt.Sprintf("/users/%d", w.member), nil}, full, 204},

		{"/assets", request{"GET", "/assets?take=2&skip=1", nil}, edit, 200},
		{"/assets", request{"POST", "/assets", m{"fileName": "new.png", "label": "New", "data": testPNG(6, 2)}}, edit, 201},
		{"/assets/:id", request{"GET", asset, nil}, edit, 200},
		{"/assets/:id", request{"PATCH", asset, m{"label": "Green beans"}}, edit, 200},
		{"/galleries", request{"GET", "/galleries", nil}, edit, 200},
		{"/galleries", request{"POST", "/galleries", m{"name": "More", "description": "d"}}, edit, 201},
		{"/galleries/:id", request{"GET", gallery, nil}, edit, 200},
		{"/galleries/:id", request{"PATCH", gallery, m{"description": "Beans"}}, edit, 200},
		{"/galleries/:id/assets", request{"POST", gallery + "/assets", m{"assetIDs": []int64{w.spare}}}, edit, 200},
		{"/galleries/:id/assets/order", request{"PUT", gallery + "/assets/order", m{"assetIDs": []int64{w.spare, w.asset}}}, edit, 204},
		{"/galleries/:id/assets/:assetID", request{"DELETE", gallery + spare, nil}, edit, 204},
		{"/assets/:id", request{"DELETE", spare, nil}, publish, 204},
		{"/galleries/:id", request{"DELETE", gallery, nil}, publish, 204},
		{"/redirections", request{"GET", "/redirections", nil}, edit, 200},
		{"/redirections", request{"POST", "/redirections", m{"originUrl": "/a", "destinationUrl": "/b", "statusCode": 302}}, publish, 201},
		{"/redirections/:id", request{"GET", redirect, nil}, edit, 200},
		{"/redirections/:id", request{"PUT", redirect, m{"statusCode": 302}}, publish, 200},
		{"/redirections/:id", request{"DELETE", redirect, nil}, publish, 204},

		{"/items/:id/copies", request{"GET", fmt.Sprintf("/items/%d/copies", w.article), nil}, edit, 200},
		{"/pages/:id/copies", request{"GET", fmt.Sprintf("/pages/%d/copies", w.parent), nil}, edit, 200},
		{"/:locale/items", request{"GET", "/en-us/items?container=articles", nil}, edit, 200},
		{"/:locale/items", request{"POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "New"}}}, edit, 201},
		{"/:locale/items/:id", request{"GET", item, nil}, edit, 200},
		{"/:locale/items/:id", request{"PUT", item, m{"fields": m{"body": "<p>x</p>"}}}, edit, 200},
		{"/:locale/items/:id/schedule", request{"PUT", item + "/schedule", m{"publishAt": future}}, publish, 200},
		{"/:locale/items/:id/:action", request{"POST", item + "/request-approval", nil}, edit, 200},
		{"/:locale/items/:id/:action", request{"POST", item + "/approve", nil}, publish, 200},
		{"/:locale/items/:id/:action", request{"POST", item + "/decline", nil}, publish, 409}, // approved, not awaiting approval
		{"/:locale/items/:id/:action", request{"POST", item + "/publish", nil}, publish, 200},
		{"/:locale/items/:id/versions", request{"GET", item + "/versions?take=2", nil}, edit, 200},
		{"/:locale/items/:id/versions/:version", request{"GET", fmt.Sprintf("%s/versions/%d", item, w.articleVersion), nil}, edit, 200},
		{"/:locale/items/:id/discard", request{"POST", fmt.Sprintf("/en-us/items/%d/discard", w.extra), nil}, edit, 409}, // never published
		{"/:locale/items/:id/versions/:version/restore", request{"POST", fmt.Sprintf("%s/versions/%d/restore", item, w.articleVersion), nil}, edit, 200},
		{"/:locale/items/:id/:action", request{"POST", item + "/unpublish", nil}, publish, 200},
		{"/:locale/batch", request{"POST", "/en-us/batch", m{"action": "request-approval", "items": []int64{w.extra}}}, edit, 200},
		{"/:locale/items/:id", request{"DELETE", fmt.Sprintf("/en-us/items/%d", w.extra), nil}, publish, 204},

		{"/:locale/pages", request{"GET", "/en-us/pages", nil}, edit, 200},
		{"/:locale/pages", request{"POST", "/en-us/pages", m{"title": "News", "pageModel": "Main"}}, edit, 201},
		{"/:locale/pages/:id", request{"GET", page, nil}, edit, 200},
		{"/:locale/pages/:id", request{"PUT", page, m{"menuText": "Start"}}, edit, 200},
		{"/:locale/pages/:id/schedule", request{"PUT", page + "/schedule", m{"publishAt": future}}, publish, 200},
		{"/:locale/pages/:id/position", request{"PUT", lone + "/position", m{"parentPageID": nil, "beforePageID": w.parent}}, edit, 200},
		{"/:locale/pages/:id/zones/:zone", request{"POST", page + "/zones/MainContentZone", m{"module": "Hero", "fields": m{"heading": "Two"}}}, edit, 201},
		{"/:locale/pages/:id/zones/:zone/order", request{"PUT", page + "/zones/Sidebar/order", m{"contentIDs": []int64{}}}, edit, 204},
		{"/:locale/pages/:id/zones/:zone/:contentID", request{"DELETE", fmt.Sprintf("%s/zones/MainContentZone/%d", page, w.component), nil}, edit, 204},
		{"/:locale/pages/:id/preview-link", request{"POST", page + "/preview-link", nil}, edit, 200},
		{"/:locale/pages/:id/versions", request{"GET", page + "/versions", nil}, edit, 200},
		{"/:locale/pages/:id/versions/:version", request{"GET", fmt.Sprintf("%s/versions/%d", page, w.parentVersion), nil}, edit, 200},
		{"/:locale/pages/:id/versions/:version/restore", request{"POST", fmt.Sprintf("%s/versions/%d/restore", page, w.parentVersion), nil}, edit, 200},
		{"/:locale/pages/:id/discard", request{"POST", page + "/discard", nil}, edit, 409}, // never published
		{"/:locale/pages/:id/:action", request{"POST", lone + "/request-approval", nil}, edit, 200},
		{"/:locale/pages/:id/:action", request{"POST", lone + "/approve", nil}, publish, 200},
		{"/:locale/pages/:id/:action", request{"POST", lone + "/decline", nil}, publish, 409},
		{"/:locale/pages/:id/:action", request{"POST", lone + "/publish", nil}, publish, 200},
		{"/:locale/pages/:id/:action", request{"POST", lone + "/unpublish", nil}, publish, 200},
		{"/:locale/pages/:id", request{"DELETE", lone, nil}, publish, 204},
	}
}

// managementRoutes returns "METHOD pattern" of every management route the
// app registers, the pattern relative to the instance prefix.
func managementRoutes(h *harness) []string {
	seen := map[string]bool{}
	for _, r := range h.srv.App().GetRoutes(true) {
		// The catch-all that answers 404 or 405 for the rest is no route.
		if r.Method == "HEAD" || r.Method == "USE" || !strings.HasPrefix(r.Path, instancePrefix+"/") || strings.HasSuffix(r.Path, "/*") {
			continue
		}
		seen[r.Method+" "+strings.TrimPrefix(r.Path, instancePrefix)] = true
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestMatrixCoversEveryRoute(t *testing.T) {
	t.Parallel()
	h := newFullHarness(t)
	covered := map[string]bool{}
	for _, c := range matrix(world{}) {
		covered[c.req.method+" "+c.pattern] = true
	}
	registered := map[string]bool{}
	for _, r := range managementRoutes(h) {
		registered[r] = true
		if !covered[r] {
			t.Errorf("route %s is registered but not in the role matrix", r)
		}
	}
	for r := range covered {
		if !registered[r] {
			t.Errorf("role matrix names %s, which is not registered", r)
		}
	}
}

// TestRoles runs every route with a token of every role, each role on a
// fresh world: a role that includes the route's role gets the route's answer
// (never 401 or 403), a weaker one 403.
func TestRoles(t *testing.T) {
	t.Parallel()
	runMatrix(t, "a token", (*harness).as)
}

// TestRolesSignedIn is TestRoles with signed-in users instead of tokens:
// every management route takes a session, with the user's role on the
// instance.
func TestRolesSignedIn(t *testing.T) {
	t.Parallel()
	runMatrix(t, "a user", (*harness).asUser)
}

// runMatrix sends every request of the matrix with send, as who of each
// role, each role on a fresh world.
func runMatrix(t *testing.T, who string, send func(*harness, content.Role, request) response) {
	for _, role := range content.Roles {
		t.Run(string(role), func(t *testing.T) {
			t.Parallel()
			h := newFullHarness(t)
			w := h.populate()
			for _, c := range matrix(w) {
				r := send(h, role, c.req)
				what := fmt.Sprintf("%s as %s with %s", c.req, who, role)
				if !role.Includes(c.role) {
					checkProblem(t, what, r, 403, "")
					continue
				}
				if r.status != c.want {
					t.Errorf("%s (needs %s) = %s, want %d", what, c.role, r, c.want)
				}
				if r.status == 401 || r.status == 403 || r.status >= 500 {
					t.Errorf("%s: status %d for an allowed role", what, r.status)
				}
			}
		})
	}
}

// TestAuthentication checks that every route refuses a request without a
// valid token of this instance with 401.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	h := newFullHarness(t)
	w := h.populate()
	other, err := h.store.CreateInstance(t.Context(), "other-site", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	_, otherToken, err := h.store.CreateToken(t.Context(), other, "other", content.RoleFull)
	if err != nil {
		t.Fatal(err)
	}
	full := h.tokens[content.RoleFull]
	tests := []struct {
		name, guid, authorization string
	}{
		{"no token", h.guid, ""},
		{"unknown token", h.guid, "Bearer mt_nosuchtoken"},
		{"basic scheme", h.guid, "Basic dXNlcjpwYXNz"},
		{"token without scheme", h.guid, full},
		{"scheme without token", h.guid, "Bearer"},
		{"scheme and blank", h.guid, "Bearer    "},
		{"another instance's token", h.guid, "Bearer " + otherToken},
		{"unknown instance", "no-such-site", "Bearer " + full},
		{"this token on another instance", "other-site", "Bearer " + full},
	}
	before := h.fingerprint()
	for _, tt := range tests {
		for _, c := range matrix(w) {
			what := fmt.Sprintf("%s: %s", tt.name, c.req)
			r := h.raw(c.req.method, "/api/v1/instance/"+tt.guid+c.req.path, tt.authorization, bodyBytes(t, c.req.body))
			doc := checkProblem(t, what, r, 401, "")
			if cc := r.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control = %q, want no-store", what, cc)
			}
			if d, _ := doc["detail"].(string); strings.Contains(d, full) || strings.Contains(d, otherToken) {
				t.Errorf("%s: detail %q echoes the credential", what, d)
			}
		}
	}
	if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
		t.Errorf("unauthenticated requests changed tables %v", ch)
	}
	// The scheme is case-insensitive.
	if r := h.raw("GET", h.base()+"/locales", "bearer "+full, nil); r.status != 200 {
		t.Errorf("GET /locales with scheme \"bearer\" = %s, want 200", r)
	}
}

// TestNoRoute checks the answers under /api/ for paths no route takes: 404
// whatever the method, 405 with Allow for a known path and another method,
// both problem documents that no cache keeps.
func TestNoRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	auth := "Bearer " + h.tokens[content.RoleFull]
	for _, c := range []struct {
		method, path string
		want         int
		allow        string
	}{
		{"GET", h.base() + "/nothing-here", 404, ""},
		{"POST", h.base() + "/nothing-here", 404, ""},
		{"GET", h.base() + "/models/Article/fields/x", 404, ""},
		{"GET", "/api/v2/anything", 404, ""},
		{"DELETE", "/api/nothing", 404, ""},
		{"PATCH", h.base() + "/locales", 405, "GET, HEAD, POST"},
		{"POST", h.base() + "/models/Article", 405, "DELETE, GET, HEAD, PUT"},
		{"PUT", "/api/v1/auth/login", 405, "POST"},
	} {
		r := h.raw(c.method, c.path, auth, nil)
		what := c.method + " " + c.path
		checkProblem(t, what, r, c.want, "")
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s: Cache-Control = %q, want no-store", what, got)
		}
		if got := r.header.Get("Allow"); got != c.allow {
			t.Errorf("%s: Allow = %q, want %q", what, got, c.allow)
		}
	}
}
