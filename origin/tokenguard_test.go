package origin_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"testing"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/origin"
)

// TestTokenGuessingIsThrottled checks that failed management-token
// attempts are limited per client address (issue 19 finding 6): after
// DefaultTokenThrottle.Max failures an address gets 429 with Retry-After,
// even with a valid token, while another address (behind the same trusted
// proxy, as clients behind an edge are) still gets in and is told 401 for a
// wrong token.
func TestTokenGuessingIsThrottled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv = origin.New(origin.Config{SecretKey: testSecret}, h.store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	path := h.base() + "/locales"
	from := func(addr, token string) response {
		hdr := http.Header{"X-Forwarded-For": {addr}, "Authorization": {"Bearer " + token}}
		return h.overTCP("GET", path, hdr, "", nil)
	}
	max := origin.DefaultTokenThrottle.Max
	for i := range max {
		// Half the same wrong token (remembered as wrong), half new ones.
		token := "mt_wrong"
		if i%2 == 1 {
			token = fmt.Sprintf("mt_guess%d", i)
		}
		if r := from("203.0.113.7", token); r.status != 401 {
			t.Fatalf("wrong token %d from one address = %s, want 401", i+1, r)
		}
	}
	for _, token := range []string{"mt_guess-next", h.tokens[content.RoleFull]} {
		r := from("203.0.113.7", token)
		if r.status != 429 {
			t.Fatalf("after %d failures, a token from the same address = %s, want 429", max, r)
		}
		if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("429 Retry-After = %q, want seconds", r.header.Get("Retry-After"))
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("429 Cache-Control = %q, want no-store", cc)
		}
	}
	if r := from("198.51.100.9", h.tokens[content.RoleFull]); r.status != 200 {
		t.Errorf("a valid token from another address = %s, want 200", r)
	}
	if r := from("198.51.100.9", "mt_wrong"); r.status != 401 {
		t.Errorf("a wrong token from another address = %s, want 401", r)
	}
	// The proxy's own address is another address.
	if r := h.overTCP("GET", path, http.Header{"Authorization": {"Bearer " + h.tokens[content.RoleFull]}}, "", nil); r.status != 200 {
		t.Errorf("a valid token from the proxy itself = %s, want 200", r)
	}
}
