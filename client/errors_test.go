package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestErrors(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        Error
		is          func(error) bool
	}{
		{
			name: "401 problem", status: 401, contentType: "application/problem+json",
			body: `{"type":"/problems/unauthorized","title":"Unauthorized","status":401,"detail":"unknown API key"}`,
			want: Error{StatusCode: 401, Type: "/problems/unauthorized", Title: "Unauthorized", Detail: "unknown API key"},
			is:   IsUnauthorized,
		},
		{
			name: "403 problem", status: 403, contentType: "application/problem+json; charset=utf-8",
			body: `{"type":"/problems/forbidden","title":"Forbidden","status":403,"detail":"a fetch key cannot read preview"}`,
			want: Error{StatusCode: 403, Type: "/problems/forbidden", Title: "Forbidden", Detail: "a fetch key cannot read preview"},
			is:   IsForbidden,
		},
		{
			name: "404 problem", status: 404, contentType: "application/problem+json",
			body: string(fixture(t, "problem_404.json")),
			want: Error{StatusCode: 404, Type: "/problems/not-found", Title: "Not found", Detail: "item 99 is not published in en-us"},
			is:   IsNotFound,
		},
		{
			name: "400 problem with extension members", status: 400, contentType: "application/problem+json",
			body: `{"type":"/problems/invalid","title":"Invalid request","status":400,"detail":"take: at most 250","instance":"/req/7","errors":[{"field":"take","reason":"at most 250"}]}`,
			want: Error{StatusCode: 400, Type: "/problems/invalid", Title: "Invalid request", Detail: "take: at most 250", Instance: "/req/7"},
			is:   IsBadRequest,
		},
		{
			name: "404 plain text from a proxy", status: 404, contentType: "text/plain",
			body: `{"title":"not a problem document"}`,
			want: Error{StatusCode: 404, Title: "Not Found"},
			is:   IsNotFound,
		},
		{
			name: "401 with no body", status: 401,
			want: Error{StatusCode: 401, Title: "Unauthorized"},
			is:   IsUnauthorized,
		},
		{
			name: "400 with a broken problem body", status: 400, contentType: "application/problem+json",
			body: `{"title": `,
			want: Error{StatusCode: 400, Title: "Bad Request"},
			is:   IsBadRequest,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := serve(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			})
			it, err := c.Item(context.Background(), "en-us", 99, ItemOptions{})
			if it != nil {
				t.Errorf("Item = %v with error %v, want nil", it, err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			got := Error{StatusCode: e.StatusCode, Type: e.Type, Title: e.Title, Detail: e.Detail, Instance: e.Instance}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Error = %+v, want %+v", got, tt.want)
			}
			if !tt.is(err) {
				t.Errorf("the Is helper for %d says false", tt.status)
			}
			if IsTemporary(err) {
				t.Errorf("IsTemporary(%d) = true", tt.status)
			}
			if string(e.Body) != tt.body {
				t.Errorf("Body = %q, want %q", e.Body, tt.body)
			}
			if e.Method != http.MethodGet || !strings.HasSuffix(e.URL, "/g1/fetch/en-us/item/99") {
				t.Errorf("Error names %s %s", e.Method, e.URL)
			}
			// Wrapping keeps it reachable.
			wrapped := fmt.Errorf("render page: %w", err)
			if StatusCode(wrapped) != tt.status {
				t.Errorf("StatusCode(wrapped) = %d, want %d", StatusCode(wrapped), tt.status)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Method: "GET", URL: "http://h/g/fetch/en-us/item/9", StatusCode: 404, Title: "Not found", Detail: "item 9 is not published", Attempts: 1},
			"edgecms: GET http://h/g/fetch/en-us/item/9: 404 Not found: item 9 is not published"},
		{Error{Method: "GET", URL: "http://h/x", StatusCode: 503, Title: "Service Unavailable", Attempts: 4},
			"edgecms: GET http://h/x: 503 Service Unavailable (4 attempts)"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestHelpersOnOtherErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("boom"), context.Canceled} {
		if StatusCode(err) != 0 || IsNotFound(err) || IsUnauthorized(err) || IsForbidden(err) ||
			IsBadRequest(err) || IsRateLimited(err) || IsTemporary(err) {
			t.Errorf("a helper is true for %v", err)
		}
	}
}

func TestBadResponses(t *testing.T) {
	ctx := context.Background()
	item := func(c *Client) error { _, err := c.Item(ctx, "en-us", 1, ItemOptions{}); return err }
	list := func(c *Client) error { _, err := c.List(ctx, "en-us", "posts", ListOptions{}); return err }
	page := func(c *Client) error { _, err := c.Page(ctx, "en-us", 1, PageOptions{}); return err }
	byPath := func(c *Client) error { _, err := c.PageByPath(ctx, "en-us", "website", "/", PageOptions{}); return err }
	flat := func(c *Client) error { _, err := c.SitemapFlat(ctx, "en-us", "website"); return err }
	nested := func(c *Client) error { _, err := c.SitemapNested(ctx, "en-us", "website"); return err }
	syncItems := func(c *Client) error { _, err := c.SyncItems(ctx, "en-us", 0, 0); return err }
	gallery := func(c *Client) error { _, err := c.Gallery(ctx, 1); return err }
	redirs := func(c *Client) error { _, err := c.URLRedirections(ctx, ""); return err }
	tests := []struct {
		name string
		body string
		call func(*Client) error
	}{
		{"empty body", "", item},
		{"whitespace body", " \n", list},
		{"null", "null", item},
		{"malformed", `{"contentID": 1,`, item},
		{"trailing data", `{"contentID": 1} {"contentID": 2}`, item},
		{"HTML", `<html>busy</html>`, page},
		{"item without contentID", `{}`, item},
		{"item with a bad modified", `{"contentID": 1, "properties": {"modified": "yesterday"}}`, item},
		{"list without totalCount", `{"items": []}`, list},
		{"list without items", `{"totalCount": 3}`, list},
		{"list with items null", `{"items": null, "totalCount": 0}`, list},
		{"list as array", `[]`, list},
		{"page without pageID", `{"name": "home"}`, page},
		{"page by path without page", `{"sitemapNode": {"pageID": 2}}`, byPath},
		{"flat sitemap as array", `[]`, flat},
		{"nested sitemap as object", `{}`, nested},
		{"sync without token", `{"items": []}`, syncItems},
		{"gallery empty", `{}`, gallery},
		{"redirections without items", `{"isUpToDate": true}`, redirs},
		{"wrong type", `{"contentID": "one"}`, item},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := serve(t, Options{}, jsonBody([]byte(tt.body)))
			err := tt.call(c)
			if !errors.Is(err, ErrBadResponse) {
				t.Errorf("error = %v, want one matching ErrBadResponse", err)
			}
			if StatusCode(err) != 0 {
				t.Errorf("a bad 200 body reads as status %d", StatusCode(err))
			}
		})
	}
}
