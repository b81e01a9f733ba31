package origin_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
	"github.com/edgecms/edgecms/webhooks/signature"
)

// webhookHarness is a harness whose origin serves the webhook routes, with
// deliveries allowed to loopback, and a receiver that answers 204.
func webhookHarness(t *testing.T) (*harness, *httptest.Server) {
	t.Helper()
	h := newHarness(t)
	wh, err := webhooks.NewStore(h.db, webhooks.Options{Key: bytes.Repeat([]byte{7}, webhooks.KeySize),
		Policy: egress.NewPolicy(netip.MustParsePrefix("127.0.0.0/8"))})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = origin.New(origin.Config{Webhooks: wh}, h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return h, rc
}

// TestWebhookScenario walks the webhook routes: create with signing (the
// secret in full once), read and list (masked), update, test delivery,
// history, redeliver, rotate, delete.
func TestWebhookScenario(t *testing.T) {
	t.Parallel()
	h, rc := webhookHarness(t)
	type m = map[string]any
	r := h.must(201, "POST", "/webhook", m{"name": "Site", "url": rc.URL + "/hook", "contentSaveEvents": true,
		"secureDeliveryEnabled": true, "signingSecret": "whsec_c3VwcGxpZWQ="})
	w := r.object(t)
	id, secret := w["rowKey"].(string), w["signingSecret"].(string)
	if _, err := signature.ParseSecret(secret); err != nil || secret == "whsec_c3VwcGxpZWQ=" || strings.Contains(secret, "*") {
		t.Fatalf("created webhook shows secret %q, want a generated one in full", secret)
	}
	masked := h.must(200, "GET", "/webhook/"+id, nil).object(t)["signingSecret"].(string)
	if !strings.HasSuffix(masked, "********") || strings.Contains(masked, secret[10:]) {
		t.Errorf("GET shows secret %q, want it masked", masked)
	}
	// A webhook read can be saved back as it is.
	back := h.must(200, "POST", "/webhook", h.must(200, "GET", "/webhook/"+id, nil).body).object(t)
	if back["signingSecret"] != masked || back["rowKey"] != id {
		t.Errorf("saving a read webhook back gave %v", back)
	}
	// @agility/management-sdk names the instance in instanceGuid.
	up := h.must(200, "POST", "/webhook", m{"rowKey": id, "retriesEnabled": true, "retryCount": 5,
		"instanceGuid": strings.ToUpper(h.guid)}).object(t)
	if up["retryCount"] != float64(5) || up["name"] != "Site" || up["signingSecret"] != masked {
		t.Errorf("update gave %v", up)
	}
	for i := range 2 {
		h.must(201, "POST", "/webhook", m{"url": fmt.Sprintf("%s/%d", rc.URL, i)})
	}
	page := h.must(200, "GET", "/webhook/list?take=2", nil).object(t)
	tok, _ := page["token"].(string)
	if items := page["items"].([]any); len(items) != 2 || tok == "" {
		t.Fatalf("first list page: %v", page)
	}
	page = h.must(200, "GET", "/webhook/list?take=2&token="+tok, nil).object(t)
	if items := page["items"].([]any); len(items) != 1 || page["token"] != nil {
		t.Errorf("second list page: %v", page)
	}

	d := h.must(200, "POST", "/webhook/"+id+"/test", nil).object(t)
	if d["success"] != true || d["httpResponseCode"] != float64(204) || d["signed"] != true || d["signatureKeyCount"] != float64(1) {
		t.Errorf("test delivery record %v", d)
	}
	hist := h.must(200, "GET", "/webhook/"+id+"/history", nil).object(t)
	if items := hist["items"].([]any); len(items) != 1 || items[0].(map[string]any)["rowKey"] != d["rowKey"] {
		t.Errorf("history %v", hist)
	}
	q := h.must(202, "POST", "/webhook/"+id+"/history/"+d["rowKey"].(string)+"/redeliver", nil).object(t)
	if q["status"] != "queued" || q["rowKey"] != d["rowKey"] {
		t.Errorf("redeliver gave %v", q)
	}

	r = h.as(content.RoleManage, request{"POST", "/webhook/" + id + "/rotate-secret", nil})
	checkProblem(t, "rotate with manage", r, 403, "")
	rot := h.must(200, "POST", "/webhook/"+id+"/rotate-secret", nil)
	if cc := rot.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("rotate Cache-Control = %q, want no-store", cc)
	}
	ro := rot.object(t)
	if s := ro["signingSecret"].(string); s == secret || strings.Contains(s, "*") || ro["previousSigningSecret"] != masked || ro["secretRolledUtc"] == nil {
		t.Errorf("rotate gave %v", ro)
	}

	h.must(204, "DELETE", "/webhook/"+id, nil)
	checkProblem(t, "GET deleted", h.as(content.RoleFull, request{"GET", "/webhook/" + id, nil}), 404, "")
}

// TestWebhookRoles checks each webhook route's role: manage, and full to
// rotate a secret.
func TestWebhookRoles(t *testing.T) {
	t.Parallel()
	h, rc := webhookHarness(t)
	w := h.must(201, "POST", "/webhook", map[string]any{"url": rc.URL, "secureDeliveryEnabled": true}).object(t)
	id := w["rowKey"].(string)
	d := h.must(200, "POST", "/webhook/"+id+"/test", nil).object(t)
	row := d["rowKey"].(string)
	routes := []struct {
		req  request
		role content.Role
		want int
	}{
		{request{"POST", "/webhook", map[string]any{"url": rc.URL}}, content.RoleManage, 201},
		{request{"GET", "/webhook/list", nil}, content.RoleManage, 200},
		{request{"GET", "/webhook/" + id, nil}, content.RoleManage, 200},
		{request{"GET", "/webhook/" + id + "/history", nil}, content.RoleManage, 200},
		{request{"POST", "/webhook/" + id + "/test", nil}, content.RoleManage, 200},
		{request{"POST", "/webhook/" + id + "/history/" + row + "/redeliver", nil}, content.RoleManage, 202},
		{request{"POST", "/webhook/" + id + "/rotate-secret", nil}, content.RoleFull, 200},
	}
	for _, role := range content.Roles {
		for _, c := range routes {
			r := h.as(role, c.req)
			if !role.Includes(c.role) {
				checkProblem(t, fmt.Sprintf("%s as %s", c.req, role), r, 403, "")
			} else if r.status != c.want {
				t.Errorf("%s as %s = %s, want %d", c.req, role, r, c.want)
			}
		}
	}
	checkProblem(t, "DELETE as publish", h.as(content.RolePublish, request{"DELETE", "/webhook/" + id, nil}), 403, "")
	if r := h.as(content.RoleManage, request{"DELETE", "/webhook/" + id, nil}); r.status != 204 {
		t.Errorf("DELETE as manage = %s", r)
	}
	for _, c := range routes {
		r := h.raw(c.req.method, h.base()+c.req.path, "", bodyBytes(t, c.req.body))
		checkProblem(t, c.req.String()+" without a token", r, 401, "")
	}
}

// TestWebhookBadInput checks each webhook route's bad inputs: a problem
// document with the status and the field.
func TestWebhookBadInput(t *testing.T) {
	t.Parallel()
	h, rc := webhookHarness(t)
	id := h.must(201, "POST", "/webhook", map[string]any{"url": rc.URL}).object(t)["rowKey"].(string)
	type m = map[string]any
	cases := []struct {
		name  string
		req   request
		want  int
		field string
	}{
		{"unknown member", request{"POST", "/webhook", m{"url": rc.URL, "zzUnknown": 1}}, 400, "zzUnknown"},
		{"no url", request{"POST", "/webhook", m{"name": "x"}}, 400, "url"},
		{"ftp url", request{"POST", "/webhook", m{"url": "ftp://example.com/"}}, 400, "url"},
		{"metadata url", request{"POST", "/webhook", m{"url": "http://169.254.169.254/"}}, 400, "url"},
		{"retryCount 9", request{"POST", "/webhook", m{"url": rc.URL, "retryCount": 9}}, 400, "retryCount"},
		{"retryCount text", request{"POST", "/webhook", m{"url": rc.URL, "retryCount": "3"}}, 400, "retryCount"},
		{"retrySpeed", request{"POST", "/webhook", m{"url": rc.URL, "retrySpeed": "ludicrous"}}, 400, "retrySpeed"},
		{"not an object", request{"POST", "/webhook", "[]"}, 400, ""},
		{"unknown rowKey", request{"POST", "/webhook", m{"rowKey": "wh_nosuch"}}, 404, ""},
		{"list take 0", request{"GET", "/webhook/list?take=0", nil}, 400, "take"},
		{"list take 101", request{"GET", "/webhook/list?take=101", nil}, 400, "take"},
		{"list bad token", request{"GET", "/webhook/list?token=abc.def", nil}, 400, "token"},
		{"get unknown", request{"GET", "/webhook/wh_nosuch", nil}, 404, ""},
		{"delete unknown", request{"DELETE", "/webhook/wh_nosuch", nil}, 404, ""},
		{"rotate unknown", request{"POST", "/webhook/wh_nosuch/rotate-secret", nil}, 404, ""},
		{"rotate unsigned", request{"POST", "/webhook/" + id + "/rotate-secret", nil}, 409, ""},
		{"history unknown", request{"GET", "/webhook/wh_nosuch/history", nil}, 404, ""},
		{"history over 366 days", request{"GET", "/webhook/" + id + "/history?fromDate=2024-01-01&toDate=2025-01-02", nil}, 400, "fromDate"},
		{"history bad date", request{"GET", "/webhook/" + id + "/history?toDate=tomorrow", nil}, 400, "toDate"},
		{"history take 101", request{"GET", "/webhook/" + id + "/history?take=101", nil}, 400, "take"},
		{"history bad token", request{"GET", "/webhook/" + id + "/history?token=bm9wZQ.AAAA", nil}, 400, "token"},
		{"test unknown", request{"POST", "/webhook/wh_nosuch/test", nil}, 404, ""},
		{"redeliver unknown webhook", request{"POST", "/webhook/wh_nosuch/history/msg_x/redeliver", nil}, 404, ""},
		{"redeliver unknown delivery", request{"POST", "/webhook/" + id + "/history/msg_x/redeliver", nil}, 404, ""},
	}
	for _, c := range cases {
		r := h.as(content.RoleFull, c.req)
		checkProblem(t, c.name+" ("+c.req.String()+")", r, c.want, c.field)
	}
}

// TestWebhookRoutesWithoutStore checks that an origin started without a
// webhooks store answers its webhook routes 503, after the usual checks.
func TestWebhookRoutesWithoutStore(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkProblem(t, "list", h.as(content.RoleFull, request{"GET", "/webhook/list", nil}), 503, "")
	checkProblem(t, "save", h.as(content.RoleFull, request{"POST", "/webhook", map[string]any{"url": "https://example.com/"}}), 503, "")
	checkProblem(t, "save with an unknown member", h.as(content.RoleFull, request{"POST", "/webhook", map[string]any{"zz": 1}}), 400, "zz")
	checkProblem(t, "as edit", h.as(content.RoleEdit, request{"GET", "/webhook/list", nil}), 403, "")
}
