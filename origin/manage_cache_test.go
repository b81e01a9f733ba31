package origin_test

import (
	"net/http"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// TestManagementAnswersAreNotStored checks that every management answer,
// success or error, tells shared caches not to keep it (issue 19 finding
// 11): they depend on who asks.
func TestManagementAnswersAreNotStored(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	full := "Bearer " + h.tokens[content.RoleFull]
	edit := "Bearer " + h.tokens[content.RoleEdit]
	for _, tc := range []struct {
		method, path, auth, body string
		status                   int
	}{
		{"GET", h.base() + "/locales", full, "", 200},
		{"GET", h.base() + "/models", full, "", 200},
		{"POST", h.base() + "/models", full, `{"name":"Post","kind":"content","fields":[{"name":"title","type":"text"}]}`, 201},
		{"GET", h.base() + "/models/Post", full, "", 200},
		{"GET", h.base() + "/models/Nope", full, "", 404},
		{"POST", h.base() + "/models", full, `{"name":`, 400},
		{"GET", h.base() + "/tokens", edit, "", 403},
		{"GET", h.base() + "/locales", "Bearer mt_wrong", "", 401},
		{"GET", h.base() + "/locales", "", "", 401},
		{"GET", h.base() + "/no-such-route/x/y", full, "", 404}, // an unknown management path is a 404 problem (issue 13)
		{"GET", "/api/v1/auth/me", "", "", 401},
		{"GET", "/api/v1/instances", "", "", 401},
		{"DELETE", h.base() + "/models/Post", full, "", 204},
	} {
		hdr := http.Header{}
		if tc.auth != "" {
			hdr.Set("Authorization", tc.auth)
		}
		var body []byte
		if tc.body != "" {
			body = []byte(tc.body)
		}
		r := h.overTCP(tc.method, tc.path, hdr, "application/json", body)
		if r.status != tc.status {
			t.Errorf("%s %s = %s, want status %d", tc.method, tc.path, r, tc.status)
		}
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s (%d): Cache-Control = %q, want no-store", tc.method, tc.path, r.status, got)
		}
	}
}
