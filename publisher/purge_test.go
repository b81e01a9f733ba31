package publisher

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestNewPurger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                        string
		method, url, headers, body  string
		maxTags                     int
		wantErr                     bool
		wantNil                     bool
		wantMethod                  string
		wantHeader, wantHeaderValue string
	}{
		{name: "none", wantNil: true},
		{name: "cloudflare", url: "https://api.cloudflare.com/client/v4/zones/z/purge_cache",
			headers: "Authorization: Bearer abc\nContent-Type: application/json", body: `{"tags":{{tags_json}}}`,
			wantMethod: "POST", wantHeader: "Content-Type", wantHeaderValue: "application/json"},
		{name: "literal newline", url: "https://api.fastly.com/service/s/purge", headers: `Fastly-Key: k\nSurrogate-Key: {{tags}}`,
			wantMethod: "POST", wantHeader: "Surrogate-Key", wantHeaderValue: "{{tags}}"},
		{name: "varnish", method: "PURGE", url: "http://varnish:6081/", headers: "xkey-purge: {{tags}}",
			wantMethod: "PURGE", wantHeader: "Xkey-Purge", wantHeaderValue: "{{tags}}"},
		{name: "tags in url", url: "http://cdn/purge?tags={{tags_csv}}", wantMethod: "POST"},
		{name: "not http", url: "ftp://cdn/purge", wantErr: true},
		{name: "no host", url: "http:///purge", wantErr: true},
		{name: "bad method", method: "post", url: "http://cdn/", wantErr: true},
		{name: "bad header", url: "http://cdn/", headers: "no colon", wantErr: true},
		{name: "negative max", url: "http://cdn/", maxTags: -1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewPurger(tc.method, tc.url, tc.headers, tc.body, tc.maxTags)
			if (err != nil) != tc.wantErr {
				t.Fatalf("NewPurger error = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if (got == nil) != tc.wantNil {
				t.Fatalf("NewPurger = %v, want nil %v", got, tc.wantNil)
			}
			if got == nil {
				return
			}
			if got.Method != tc.wantMethod {
				t.Errorf("Method = %q, want %q", got.Method, tc.wantMethod)
			}
			if tc.wantHeader != "" && got.Header.Get(tc.wantHeader) != tc.wantHeaderValue {
				t.Errorf("Header %s = %q, want %q", tc.wantHeader, got.Header.Get(tc.wantHeader), tc.wantHeaderValue)
			}
		})
	}
}

// purgeRequest is what a test CDN received.
type purgeRequest struct {
	method, path, query, header, body string
}

func TestPurge(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []purgeRequest
	fail := 0 // answer 503 this many times first
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if fail > 0 {
			fail--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		got = append(got, purgeRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Surrogate-Key"), string(body)})
		if strings.Contains(string(body), "bad") {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer cdn.Close()
	tags := []string{"acme.en-us.i:1", "acme.en-us.i:2", "acme.en-us.c:posts"}

	t.Run("templates and batches", func(t *testing.T) {
		got = nil
		pg, err := NewPurger("PURGE", cdn.URL+"/purge?t={{tags_csv}}", "Surrogate-Key: {{tags}}", `{"tags":{{tags_json}}}`, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := pg.Purge(context.Background(), tags); err != nil {
			t.Fatal(err)
		}
		want := []purgeRequest{
			{"PURGE", "/purge", "t=" + url.QueryEscape("acme.en-us.i:1,acme.en-us.i:2"), "acme.en-us.i:1 acme.en-us.i:2", `{"tags":["acme.en-us.i:1","acme.en-us.i:2"]}`},
			{"PURGE", "/purge", "t=" + url.QueryEscape("acme.en-us.c:posts"), "acme.en-us.c:posts", `{"tags":["acme.en-us.c:posts"]}`},
		}
		if !slices.Equal(got, want) {
			t.Errorf("requests:\n got %+v\nwant %+v", got, want)
		}
	})
	t.Run("retries 5xx", func(t *testing.T) {
		got, fail = nil, 2
		pg, _ := NewPurger("", cdn.URL, "", "{{tags}}", 0)
		if err := pg.Purge(context.Background(), tags); err != nil {
			t.Fatalf("Purge after two 503s = %v, want success on the third try", err)
		}
		if len(got) != 1 || got[0].body != strings.Join(tags, " ") {
			t.Errorf("requests = %+v", got)
		}
	})
	t.Run("gives up", func(t *testing.T) {
		got, fail = nil, 5
		pg, _ := NewPurger("", cdn.URL, "", "{{tags}}", 0)
		if err := pg.Purge(context.Background(), tags); err == nil || !strings.Contains(err.Error(), "503") {
			t.Errorf("Purge after 503s = %v, want the 503", err)
		}
		fail = 0
	})
	t.Run("4xx is final", func(t *testing.T) {
		got = nil
		pg, _ := NewPurger("", cdn.URL, "", "bad {{tags}}", 0)
		if err := pg.Purge(context.Background(), tags); err == nil || !strings.Contains(err.Error(), "400") {
			t.Errorf("Purge = %v, want a 400 error", err)
		}
		if len(got) != 1 {
			t.Errorf("%d requests for a 400, want 1 (no retry)", len(got))
		}
	})
}
