package origin_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/studio"
)

// TestStudioServed checks how the Studio is served: index.html for every
// page path, never stored, under a strict CSP; hashed assets for good.
func TestStudioServed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	index, err := fs.ReadFile(studio.Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/studio/", "/studio/acme/content", "/studio/acme/content/posts/12?locale=fr-ca"} {
		r := h.raw("GET", path, "", nil)
		if r.status != 200 || string(r.body) != string(index) {
			t.Errorf("GET %s = %d, want 200 with index.html", path, r.status)
		}
		for k, want := range map[string]string{
			"Cache-Control": "no-store", "Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff",
			"X-Frame-Options": "DENY",
		} {
			if got := r.header.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, want)
			}
		}
		csp := r.header.Get("Content-Security-Policy")
		for _, part := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, part) {
				t.Errorf("GET %s: CSP %q lacks %q", path, csp, part)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q allows unsafe code", path, csp)
		}
	}
	if r := h.raw("GET", "/studio", "", nil); r.status != 301 || r.header.Get("Location") != "/studio/" {
		t.Errorf("GET /studio = %d to %q, want 301 to /studio/", r.status, r.header.Get("Location"))
	}
	assets, err := fs.ReadDir(studio.Files(), "assets")
	if err != nil || len(assets) == 0 {
		t.Fatalf("no Studio assets embedded: %v", err)
	}
	for _, a := range assets {
		r := h.raw("GET", "/studio/assets/"+a.Name(), "", nil)
		if r.status != 200 || r.header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET asset %s = %d, Cache-Control %q", a.Name(), r.status, r.header.Get("Cache-Control"))
		}
		if strings.HasSuffix(a.Name(), ".js") && !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") {
			t.Errorf("GET asset %s: Content-Type %q", a.Name(), r.header.Get("Content-Type"))
		}
		if !strings.Contains(string(index), a.Name()) && strings.HasSuffix(a.Name(), ".css") {
			t.Errorf("index.html does not load %s", a.Name())
		}
	}
	for _, path := range []string{"/studio/assets/nope.js", "/studio/assets/../index.html", "/studio/assets/"} {
		if r := h.raw("GET", path, "", nil); r.status != 404 {
			t.Errorf("GET %s = %d, want 404", path, r.status)
		}
	}
}
