package origin_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
)

// part is one part of a multipart form: a file when fileName is set, a
// plain field otherwise.
type part struct{ name, fileName, data string }

// form encodes parts as a multipart/form-data body.
func form(parts ...part) typedBody {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		var w io.Writer
		if p.fileName != "" {
			w, _ = mw.CreateFormFile(p.name, p.fileName)
		} else {
			w, _ = mw.CreateFormField(p.name)
		}
		io.WriteString(w, p.data) // writes to memory do not fail
	}
	mw.Close()
	return typedBody{mw.FormDataContentType(), b.Bytes()}
}

// tampered returns token with its first character changed: the same shape,
// but not a token the service made.
func tampered(token string) string {
	if strings.HasPrefix(token, "A") {
		return "B" + token[1:]
	}
	return "A" + token[1:]
}

// badCase is a request a route must refuse with status want, naming field
// among the problem's errors when field is set.
type badCase struct {
	route string // "METHOD pattern", the route as registered under the instance
	name  string
	req   request
	want  int
	field string
	// ifMatch, when set, is sent as the If-Match header.
	ifMatch string
}

func badCases(w world) []badCase {
	type m = map[string]any
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	later := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	item := fmt.Sprintf("/en-us/items/%d", w.article)
	deleted := fmt.Sprintf("/en-us/items/%d", w.deleted)
	page := fmt.Sprintf("/en-us/pages/%d", w.parent)
	child := fmt.Sprintf("/en-us/pages/%d", w.child)
	zone := page + "/zones/MainContentZone"
	key := fmt.Sprintf("/apikeys/%d", w.apiKey)
	const malformed = `{"name": "x",`
	var cases []badCase
	add := func(route string, list ...badCase) {
		for _, c := range list {
			c.route = route
			cases = append(cases, c)
		}
	}
	req := func(method, path string, body any) request { return request{method, path, body} }

	add("POST /locales",
		badCase{name: "malformed JSON", req: req("POST", "/locales", `{"code": "de-de", "name":`), want: 400},
		badCase{name: "empty body", req: req("POST", "/locales", ""), want: 400},
		badCase{name: "array body", req: req("POST", "/locales", `[]`), want: 400},
		badCase{name: "two values", req: req("POST", "/locales", `{"code": "de-de", "name": "D"} {}`), want: 400},
		badCase{name: "code is a number", req: req("POST", "/locales", m{"code": 5, "name": "x"}), want: 400, field: "code"},
		badCase{name: "unknown member", req: req("POST", "/locales", m{"code": "de-de", "name": "D", "extra": 1}), want: 400, field: "extra"},
		badCase{name: "empty name", req: req("POST", "/locales", m{"code": "de-de", "name": ""}), want: 400, field: "name"},
		badCase{name: "bad code", req: req("POST", "/locales", m{"code": "de de", "name": "D"}), want: 400, field: "code"},
		badCase{name: "reserved code", req: req("POST", "/locales", m{"code": "models", "name": "M"}), want: 400, field: "code"},
		badCase{name: "duplicate in another case", req: req("POST", "/locales", m{"code": "EN-US", "name": "E"}), want: 409},
		badCase{name: "NUL in name", req: req("POST", "/locales", m{"code": "de-de", "name": "D\x00"}), want: 400, field: "name"},
	)
	add("DELETE /locales/:code",
		badCase{name: "unknown", req: req("DELETE", "/locales/xx-xx", nil), want: 404},
		badCase{name: "default", req: req("DELETE", "/locales/en-us", nil), want: 409},
	)
	add("POST /tokens",
		badCase{name: "malformed JSON", req: req("POST", "/tokens", malformed), want: 400},
		badCase{name: "name is a number", req: req("POST", "/tokens", m{"name": 5, "role": "edit"}), want: 400, field: "name"},
		badCase{name: "unknown role", req: req("POST", "/tokens", m{"name": "x", "role": "admin"}), want: 400, field: "role"},
		badCase{name: "empty name", req: req("POST", "/tokens", m{"name": " ", "role": "edit"}), want: 400, field: "name"},
		badCase{name: "unknown member", req: req("POST", "/tokens", m{"name": "x", "role": "edit", "scope": "all"}), want: 400, field: "scope"},
		badCase{name: "NUL in name", req: req("POST", "/tokens", m{"name": "a\x00b", "role": "edit"}), want: 400, field: "name"},
	)
	add("DELETE /tokens/:id",
		badCase{name: "non-integer id", req: req("DELETE", "/tokens/abc", nil), want: 400, field: "id"},
		badCase{name: "zero id", req: req("DELETE", "/tokens/0", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("DELETE", "/tokens/999999", nil), want: 404},
	)
	add("POST /apikeys",
		badCase{name: "malformed JSON", req: req("POST", "/apikeys", malformed), want: 400},
		badCase{name: "unknown type", req: req("POST", "/apikeys", m{"name": "k", "type": "live"}), want: 400, field: "type"},
		badCase{name: "no name", req: req("POST", "/apikeys", m{"type": "fetch"}), want: 400, field: "name"},
		badCase{name: "name is a number", req: req("POST", "/apikeys", m{"name": 5, "type": "fetch"}), want: 400, field: "name"},
		badCase{name: "expiry in the past", req: req("POST", "/apikeys", m{"name": "k", "type": "fetch", "expiresAt": past}), want: 400, field: "expiresAt"},
		badCase{name: "expiry not a date", req: req("POST", "/apikeys", m{"name": "k", "type": "fetch", "expiresAt": "tomorrow"}), want: 400, field: "expiresAt"},
		badCase{name: "unknown member", req: req("POST", "/apikeys", m{"name": "k", "type": "fetch", "key": "mine"}), want: 400, field: "key"},
	)
	add("PATCH /apikeys/:id",
		badCase{name: "non-integer id", req: req("PATCH", "/apikeys/abc", m{"enabled": false}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PATCH", "/apikeys/999999", m{"enabled": false}), want: 404},
		badCase{name: "malformed JSON", req: req("PATCH", key, malformed), want: 400},
		badCase{name: "enabled is a string", req: req("PATCH", key, m{"enabled": "yes"}), want: 400, field: "enabled"},
		badCase{name: "expiry not a date", req: req("PATCH", key, m{"expiresAt": "soon"}), want: 400, field: "expiresAt"},
		badCase{name: "empty name", req: req("PATCH", key, m{"name": ""}), want: 400, field: "name"},
		badCase{name: "unknown member", req: req("PATCH", key, m{"type": "preview"}), want: 400, field: "type"},
		badCase{name: "NUL in name", req: req("PATCH", key, m{"name": "\x00"}), want: 400, field: "name"},
	)
	add("DELETE /apikeys/:id",
		badCase{name: "non-integer id", req: req("DELETE", "/apikeys/1.5", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("DELETE", "/apikeys/999999", nil), want: 404},
	)
	field := func(name, typ string) m { return m{"name": name, "type": typ} }
	add("POST /models",
		badCase{name: "malformed JSON", req: req("POST", "/models", malformed), want: 400},
		badCase{name: "name is a number", req: req("POST", "/models", m{"name": 5, "kind": "content", "fields": []m{field("a", "text")}}), want: 400, field: "name"},
		badCase{name: "empty name", req: req("POST", "/models", m{"name": "", "kind": "content", "fields": []m{field("a", "text")}}), want: 400, field: "name"},
		badCase{name: "unknown kind", req: req("POST", "/models", m{"name": "X", "kind": "page", "fields": []m{field("a", "text")}}), want: 400, field: "kind"},
		badCase{name: "no fields", req: req("POST", "/models", m{"name": "X", "kind": "content", "fields": []m{}}), want: 400, field: "fields"},
		badCase{name: "unknown field type", req: req("POST", "/models", m{"name": "X", "kind": "content", "fields": []m{field("a", "txt")}}), want: 400, field: "fields[0].type"},
		badCase{name: "duplicate field", req: req("POST", "/models", m{"name": "X", "kind": "content", "fields": []m{field("a", "text"), field("A", "html")}}), want: 400, field: "fields[1].name"},
		badCase{name: "item field without container", req: req("POST", "/models", m{"name": "X", "kind": "content", "fields": []m{field("a", "item")}}), want: 400, field: "fields[0].container"},
		// A container that does not exist yet is fine (self and mutual
		// links); a name no container could have is not.
		badCase{name: "container name invalid", req: req("POST", "/models", m{"name": "X", "kind": "content", "fields": []m{{"name": "a", "type": "list", "container": "no pe"}}}), want: 400, field: "fields[0].container"},
		badCase{name: "shared is a string", req: req("POST", "/models", m{"name": "X", "kind": "content", "fields": []m{{"name": "a", "type": "text", "shared": "yes"}}}), want: 400, field: "fields.shared"},
		badCase{name: "unknown member of a field", req: req("POST", "/models", m{"name": "X", "kind": "content", "fields": []m{{"name": "a", "type": "text", "label": "A"}}}), want: 400, field: "label"},
		badCase{name: "duplicate", req: req("POST", "/models", m{"name": "article", "kind": "content", "fields": []m{field("a", "text")}}), want: 409},
	)
	add("GET /models/:name", badCase{name: "unknown", req: req("GET", "/models/Nope", nil), want: 404})
	add("DELETE /models/:name",
		badCase{name: "unknown", req: req("DELETE", "/models/Nope", nil), want: 404},
		badCase{name: "in use", req: req("DELETE", "/models/Article", nil), want: 409},
	)
	add("POST /containers",
		badCase{name: "malformed JSON", req: req("POST", "/containers", malformed), want: 400},
		badCase{name: "empty referenceName", req: req("POST", "/containers", m{"referenceName": "", "model": "Article"}), want: 400, field: "referenceName"},
		badCase{name: "referenceName is a number", req: req("POST", "/containers", m{"referenceName": 5, "model": "Article"}), want: 400, field: "referenceName"},
		badCase{name: "no model", req: req("POST", "/containers", m{"referenceName": "more"}), want: 400, field: "model"},
		badCase{name: "unknown model", req: req("POST", "/containers", m{"referenceName": "more", "model": "Nope"}), want: 404},
		badCase{name: "component model", req: req("POST", "/containers", m{"referenceName": "more", "model": "Hero"}), want: 400, field: "model"},
		badCase{name: "duplicate", req: req("POST", "/containers", m{"referenceName": "ARTICLES", "model": "Article"}), want: 409},
		badCase{name: "unknown member", req: req("POST", "/containers", m{"referenceName": "more", "model": "Article", "sort": "x"}), want: 400, field: "sort"},
	)
	add("GET /containers/:ref", badCase{name: "unknown", req: req("GET", "/containers/nope", nil), want: 404})
	add("DELETE /containers/:ref",
		badCase{name: "unknown", req: req("DELETE", "/containers/nope", nil), want: 404},
		badCase{name: "holds items", req: req("DELETE", "/containers/articles", nil), want: 409},
		badCase{name: "linked from a field", req: req("DELETE", "/containers/categories", nil), want: 409},
	)
	add("PUT /containers/:ref/order",
		badCase{name: "malformed JSON", req: req("PUT", "/containers/articles/order", `{"contentIDs": [1,`), want: 400},
		badCase{name: "no contentIDs", req: req("PUT", "/containers/articles/order", m{}), want: 400, field: "contentIDs"},
		badCase{name: "contentIDs is a string", req: req("PUT", "/containers/articles/order", m{"contentIDs": "1,2"}), want: 400, field: "contentIDs"},
		badCase{name: "id not in container", req: req("PUT", "/containers/articles/order", m{"contentIDs": []int64{999999}}), want: 400, field: "contentIDs"},
		badCase{name: "id twice", req: req("PUT", "/containers/articles/order", m{"contentIDs": []int64{w.article, w.article}}), want: 400, field: "contentIDs"},
		badCase{name: "unknown container", req: req("PUT", "/containers/nope/order", m{"contentIDs": []int64{}}), want: 404},
	)
	add("POST /page-models",
		badCase{name: "malformed JSON", req: req("POST", "/page-models", malformed), want: 400},
		badCase{name: "empty name", req: req("POST", "/page-models", m{"name": "", "zones": []string{"A"}}), want: 400, field: "name"},
		badCase{name: "no zones", req: req("POST", "/page-models", m{"name": "X", "zones": []string{}}), want: 400, field: "zones"},
		badCase{name: "zone is a number", req: req("POST", "/page-models", m{"name": "X", "zones": []any{5}}), want: 400, field: "zones"},
		badCase{name: "duplicate zone", req: req("POST", "/page-models", m{"name": "X", "zones": []string{"A", "a"}}), want: 400, field: "zones[1]"},
		badCase{name: "duplicate", req: req("POST", "/page-models", m{"name": "main", "zones": []string{"A"}}), want: 409},
	)
	articleFields := func(first m) []m {
		return []m{first, {"name": "slug", "type": "text"}, {"name": "body", "type": "html"}, {"name": "count", "type": "number"},
			{"name": "code", "type": "text", "shared": true}, {"name": "category", "type": "item", "container": "categories"}}
	}
	title := m{"name": "title", "type": "text", "required": true}
	add("PUT /models/:name",
		badCase{name: "malformed JSON", req: req("PUT", "/models/Article", malformed), want: 400},
		badCase{name: "no fields", req: req("PUT", "/models/Article", m{}), want: 400, field: "fields"},
		badCase{name: "unknown model", req: req("PUT", "/models/Nope", m{"fields": articleFields(title)}), want: 404},
		badCase{name: "rename to an existing name", req: req("PUT", "/models/Article", m{"fields": articleFields(m{"name": "slug", "renameFrom": "title", "type": "text"})}), want: 409},
		badCase{name: "renameFrom naming no field", req: req("PUT", "/models/Article", m{"fields": articleFields(m{"name": "headline", "renameFrom": "heading", "type": "text"})}), want: 400, field: "fields[0].renameFrom"},
		badCase{name: "type change text to number", req: req("PUT", "/models/Article", m{"fields": articleFields(m{"name": "title", "type": "number"})}), want: 409},
		badCase{name: "type change to item", req: req("PUT", "/models/Article", m{"fields": articleFields(m{"name": "title", "type": "item", "container": "articles"})}), want: 409},
		badCase{name: "force on nothing", req: req("PUT", "/models/Article?force=true", m{"fields": articleFields(title)}), want: 400, field: "force"},
		badCase{name: "force not a boolean", req: req("PUT", "/models/Article?force=yes", m{"fields": articleFields(title)}), want: 400, field: "force"},
		badCase{name: "unknown parameter", req: req("PUT", "/models/Article?forse=true", m{"fields": articleFields(title)}), want: 400, field: "forse"},
		badCase{name: "removing a field with values", req: req("PUT", "/models/Article", m{"fields": []m{title}}), want: 409},
		badCase{name: "duplicate names", req: req("PUT", "/models/Article", m{"fields": append(articleFields(title), m{"name": "Slug", "type": "text"})}), want: 400, field: "fields[6]"},
		badCase{name: "two entries keep one field", req: req("PUT", "/models/Article", m{"fields": append(articleFields(title), m{"name": "other", "renameFrom": "slug", "type": "text"})}), want: 400, field: "fields[6]"},
		badCase{name: "bad container name", req: req("PUT", "/models/Article", m{"fields": append(articleFields(title), m{"name": "more", "type": "list", "container": "no such"})}), want: 400, field: "fields[6].container"},
		badCase{name: "If-Match stale", req: req("PUT", "/models/Article", m{"fields": articleFields(title)}), want: 412, ifMatch: `"999999"`},
		badCase{name: "If-Match malformed", req: req("PUT", "/models/Article", m{"fields": articleFields(title)}), want: 400, field: "If-Match", ifMatch: "1"},
	)
	add("PUT /page-models/:name",
		badCase{name: "malformed JSON", req: req("PUT", "/page-models/Main", malformed), want: 400},
		badCase{name: "no zones", req: req("PUT", "/page-models/Main", m{}), want: 400, field: "zones"},
		badCase{name: "unknown page model", req: req("PUT", "/page-models/Nope", m{"zones": []any{"A"}}), want: 404},
		badCase{name: "a zone is a number", req: req("PUT", "/page-models/Main", m{"zones": []any{5}}), want: 400},
		badCase{name: "rename to an existing name", req: req("PUT", "/page-models/Main", m{"zones": []any{m{"name": "Sidebar", "renameFrom": "MainContentZone"}}}), want: 409},
		badCase{name: "renameFrom naming no zone", req: req("PUT", "/page-models/Main", m{"zones": []any{m{"name": "Main", "renameFrom": "Nope"}, "Sidebar"}}), want: 400, field: "zones[0].renameFrom"},
		badCase{name: "removing a zone with components", req: req("PUT", "/page-models/Main", m{"zones": []any{"Sidebar"}}), want: 409},
		badCase{name: "force on nothing", req: req("PUT", "/page-models/Main?force=true", m{"zones": []any{"MainContentZone", "Sidebar", "Extra"}}), want: 400, field: "force"},
		badCase{name: "duplicate zones", req: req("PUT", "/page-models/Main", m{"zones": []any{"MainContentZone", "Sidebar", "sidebar"}}), want: 400, field: "zones[2]"},
		badCase{name: "If-Match stale", req: req("PUT", "/page-models/Main", m{"zones": []any{"MainContentZone", "Sidebar"}}), want: 412, ifMatch: `"999999"`},
	)
	tooMany := make([]int64, content.MaxBatch+1)
	for i := range tooMany {
		tooMany[i] = int64(i + 1)
	}
	add("POST /:locale/batch",
		badCase{name: "malformed JSON", req: req("POST", "/en-us/batch", malformed), want: 400},
		badCase{name: "unknown action", req: req("POST", "/en-us/batch", m{"action": "archive", "items": []int64{w.article}}), want: 400, field: "action"},
		badCase{name: "save is no batch action", req: req("POST", "/en-us/batch", m{"action": "save", "items": []int64{w.article}}), want: 400, field: "action"},
		badCase{name: "nothing named", req: req("POST", "/en-us/batch", m{"action": "publish"}), want: 400, field: "items"},
		badCase{name: "duplicate items", req: req("POST", "/en-us/batch", m{"action": "publish", "items": []int64{w.article, w.article}}), want: 400, field: "items"},
		badCase{name: "duplicate pages", req: req("POST", "/en-us/batch", m{"action": "publish", "pages": []int64{w.lone, w.lone}}), want: 400, field: "pages"},
		badCase{name: "more than 500 ids", req: req("POST", "/en-us/batch", m{"action": "publish", "items": tooMany}), want: 400, field: "items"},
		badCase{name: "negative id", req: req("POST", "/en-us/batch", m{"action": "publish", "items": []int64{-1}}), want: 400, field: "items"},
		badCase{name: "unknown item", req: req("POST", "/en-us/batch", m{"action": "publish", "items": []int64{w.article, 999999}}), want: 404},
		badCase{name: "unknown page", req: req("POST", "/en-us/batch", m{"action": "publish", "pages": []int64{w.lone, 999999}}), want: 404},
		badCase{name: "another locale's copy missing", req: req("POST", "/fr-ca/batch", m{"action": "publish", "items": []int64{w.article}}), want: 404},
		badCase{name: "one cannot (deleted)", req: req("POST", "/en-us/batch", m{"action": "publish", "items": []int64{w.article, w.deleted}}), want: 409},
		badCase{name: "page with children deleted", req: req("POST", "/en-us/batch", m{"action": "delete", "pages": []int64{w.lone, w.parent}}), want: 409},
		badCase{name: "If-Match", req: req("POST", "/en-us/batch", m{"action": "publish", "items": []int64{w.article}}), want: 400, field: "If-Match", ifMatch: `"1"`},
		badCase{name: "unknown member", req: req("POST", "/en-us/batch", m{"action": "publish", "ids": []int64{1}}), want: 400, field: "ids"},
	)
	add("PATCH /locales/:code",
		badCase{name: "malformed JSON", req: req("PATCH", "/locales/fr-ca", malformed), want: 400},
		badCase{name: "unknown locale", req: req("PATCH", "/locales/de-de", m{"name": "Deutsch"}), want: 404},
		badCase{name: "empty name", req: req("PATCH", "/locales/fr-ca", m{"name": " "}), want: 400, field: "name"},
		badCase{name: "default no more", req: req("PATCH", "/locales/en-us", m{"isDefault": false}), want: 409},
		badCase{name: "code cannot change", req: req("PATCH", "/locales/fr-ca", m{"code": "fr-fr"}), want: 400, field: "code"},
	)
	add("DELETE /channels/:name",
		badCase{name: "unknown", req: req("DELETE", "/channels/nope", nil), want: 404},
		badCase{name: "website", req: req("DELETE", "/channels/website", nil), want: 409},
		badCase{name: "with pages", req: req("DELETE", "/channels/legal", nil), want: 409},
	)
	add("PATCH /settings",
		badCase{name: "malformed JSON", req: req("PATCH", "/settings", malformed), want: 400},
		badCase{name: "versionLimit 1", req: req("PATCH", "/settings", m{"versionLimit": 1}), want: 400, field: "versionLimit"},
		badCase{name: "versionLimit negative", req: req("PATCH", "/settings", m{"versionLimit": -5}), want: 400, field: "versionLimit"},
		badCase{name: "versionLimit not an integer", req: req("PATCH", "/settings", m{"versionLimit": 2.5}), want: 400, field: "versionLimit"},
		badCase{name: "versionLimit a string", req: req("PATCH", "/settings", m{"versionLimit": "10"}), want: 400, field: "versionLimit"},
		badCase{name: "unknown member", req: req("PATCH", "/settings", m{"retention": 3}), want: 400, field: "retention"},
	)
	add("GET /audit",
		badCase{name: "fromDate not a date", req: req("GET", "/audit?fromDate=yesterday", nil), want: 400, field: "fromDate"},
		badCase{name: "toDate not a date", req: req("GET", "/audit?toDate=2026-13-01", nil), want: 400, field: "toDate"},
		badCase{name: "toDate before fromDate", req: req("GET", "/audit?fromDate=2026-02-01T00:00:00Z&toDate=2026-01-01T00:00:00Z", nil), want: 400, field: "toDate"},
		badCase{name: "take 501", req: req("GET", "/audit?take=501", nil), want: 400, field: "take"},
		badCase{name: "unknown parameter", req: req("GET", "/audit?user=1", nil), want: 400, field: "user"},
	)
	add("GET /page-models/:name",
		badCase{name: "unknown", req: req("GET", "/page-models/Nope", nil), want: 404},
	)
	add("DELETE /page-models/:name",
		badCase{name: "unknown", req: req("DELETE", "/page-models/Nope", nil), want: 404},
		badCase{name: "in use", req: req("DELETE", "/page-models/Main", nil), want: 409},
	)
	add("PATCH /channels/:name",
		badCase{name: "malformed JSON", req: req("PATCH", "/channels/website", malformed), want: 400},
		badCase{name: "no token placeholder", req: req("PATCH", "/channels/website", m{"previewUrl": "https://site.example/api/preview?slug={path}"}), want: 400, field: "previewUrl"},
		badCase{name: "relative URL", req: req("PATCH", "/channels/website", m{"previewUrl": "/api/preview?key={previewLink}"}), want: 400, field: "previewUrl"},
		badCase{name: "not http", req: req("PATCH", "/channels/website", m{"previewUrl": "javascript:alert({previewLink})"}), want: 400, field: "previewUrl"},
		badCase{name: "unknown placeholder", req: req("PATCH", "/channels/website", m{"previewUrl": "https://site.example/{slug}?key={previewLink}"}), want: 400, field: "previewUrl"},
		badCase{name: "too long", req: req("PATCH", "/channels/website", m{"previewUrl": "https://site.example/?key={previewLink}&x=" + strings.Repeat("a", 2000)}), want: 400, field: "previewUrl"},
		badCase{name: "a number", req: req("PATCH", "/channels/website", m{"previewUrl": 5}), want: 400, field: "previewUrl"},
		badCase{name: "unknown member", req: req("PATCH", "/channels/website", m{"name": "site"}), want: 400, field: "name"},
		badCase{name: "unknown channel", req: req("PATCH", "/channels/nope", m{"previewUrl": nil}), want: 404},
	)
	add("POST /channels",
		badCase{name: "malformed JSON", req: req("POST", "/channels", malformed), want: 400},
		badCase{name: "empty name", req: req("POST", "/channels", m{"name": ""}), want: 400, field: "name"},
		badCase{name: "name is a number", req: req("POST", "/channels", m{"name": 5}), want: 400, field: "name"},
		badCase{name: "duplicate", req: req("POST", "/channels", m{"name": "Website"}), want: 409},
		badCase{name: "unknown member", req: req("POST", "/channels", m{"name": "x", "zones": 1}), want: 400, field: "zones"},
	)
	hook := "/webhook/" + w.webhook
	plain := "/webhook/" + w.plain
	hookURL := w.hookURL
	add("POST /webhook",
		badCase{name: "malformed JSON", req: req("POST", "/webhook", `{"url": "http://x",`), want: 400},
		badCase{name: "empty body", req: req("POST", "/webhook", ""), want: 400},
		badCase{name: "array body", req: req("POST", "/webhook", `[]`), want: 400},
		badCase{name: "two values", req: req("POST", "/webhook", `{"url": "https://example.com/"} {}`), want: 400},
		badCase{name: "unknown member", req: req("POST", "/webhook", m{"url": hookURL, "secret": "mine"}), want: 400, field: "secret"},
		badCase{name: "url is a number", req: req("POST", "/webhook", m{"url": 5}), want: 400, field: "url"},
		badCase{name: "name is a number", req: req("POST", "/webhook", m{"name": 5, "url": hookURL}), want: 400, field: "name"},
		badCase{name: "enabled is a string", req: req("POST", "/webhook", m{"url": hookURL, "enabled": "yes"}), want: 400, field: "enabled"},
		badCase{name: "no url", req: req("POST", "/webhook", m{"name": "x"}), want: 400, field: "url"},
		badCase{name: "empty url", req: req("POST", "/webhook", m{"url": ""}), want: 400, field: "url"},
		badCase{name: "blank url", req: req("POST", "/webhook", m{"url": "   "}), want: 400, field: "url"},
		badCase{name: "ftp url", req: req("POST", "/webhook", m{"url": "ftp://example.com/hook"}), want: 400, field: "url"},
		badCase{name: "javascript url", req: req("POST", "/webhook", m{"url": "javascript:alert(1)"}), want: 400, field: "url"},
		badCase{name: "relative url", req: req("POST", "/webhook", m{"url": "/hook"}), want: 400, field: "url"},
		badCase{name: "url with credentials", req: req("POST", "/webhook", m{"url": "https://user:pw@example.com/"}), want: 400, field: "url"},
		badCase{name: "private address", req: req("POST", "/webhook", m{"url": "http://10.0.0.1/hook"}), want: 400, field: "url"},
		badCase{name: "metadata address", req: req("POST", "/webhook", m{"url": "http://169.254.169.254/latest"}), want: 400, field: "url"},
		badCase{name: "url too long", req: req("POST", "/webhook", m{"url": "https://example.com/" + strings.Repeat("a", 2048)}), want: 400, field: "url"},
		badCase{name: "name too long", req: req("POST", "/webhook", m{"name": strings.Repeat("n", 201), "url": hookURL}), want: 400, field: "name"},
		badCase{name: "NUL in name", req: req("POST", "/webhook", m{"name": "a\x00", "url": hookURL}), want: 400, field: "name"},
		badCase{name: "retryCount 0", req: req("POST", "/webhook", m{"url": hookURL, "retryCount": 0}), want: 400, field: "retryCount"},
		badCase{name: "retryCount 9", req: req("POST", "/webhook", m{"url": hookURL, "retryCount": 9}), want: 400, field: "retryCount"},
		badCase{name: "retryCount negative", req: req("POST", "/webhook", m{"url": hookURL, "retryCount": -1}), want: 400, field: "retryCount"},
		badCase{name: "retryCount not whole", req: req("POST", "/webhook", m{"url": hookURL, "retryCount": 2.5}), want: 400, field: "retryCount"},
		badCase{name: "retryCount is a string", req: req("POST", "/webhook", m{"url": hookURL, "retryCount": "3"}), want: 400, field: "retryCount"},
		badCase{name: "unknown retrySpeed", req: req("POST", "/webhook", m{"url": hookURL, "retrySpeed": "ludicrous"}), want: 400, field: "retrySpeed"},
		badCase{name: "rowKey is a number", req: req("POST", "/webhook", m{"rowKey": 5}), want: 400, field: "rowKey"},
		badCase{name: "another instance's instanceGuid", req: req("POST", "/webhook", m{"url": hookURL, "instanceGuid": "elsewhere"}), want: 400, field: "instanceGuid"},
		badCase{name: "instanceGuid not a guid", req: req("POST", "/webhook", m{"url": hookURL, "instanceGuid": "test site"}), want: 400, field: "instanceGuid"},
		badCase{name: "empty instanceGuid", req: req("POST", "/webhook", m{"url": hookURL, "instanceGuid": ""}), want: 400, field: "instanceGuid"},
		badCase{name: "instanceGuid is a number", req: req("POST", "/webhook", m{"url": hookURL, "instanceGuid": 5}), want: 400, field: "instanceGuid"},
		badCase{name: "update naming another instance", req: req("POST", "/webhook", m{"rowKey": w.webhook, "name": "x", "instanceGuid": "elsewhere"}), want: 400, field: "instanceGuid"},
		badCase{name: "unknown rowKey", req: req("POST", "/webhook", m{"rowKey": "wh_nosuch", "name": "x"}), want: 404},
		badCase{name: "another instance's rowKey", req: req("POST", "/webhook", m{"rowKey": w.foreignWebhook, "name": "x"}), want: 404},
		badCase{name: "update with retryCount 9", req: req("POST", "/webhook", m{"rowKey": w.webhook, "retryCount": 9}), want: 400, field: "retryCount"},
		badCase{name: "update to an empty url", req: req("POST", "/webhook", m{"rowKey": w.webhook, "url": ""}), want: 400, field: "url"},
		badCase{name: "update to a non-http url", req: req("POST", "/webhook", m{"rowKey": w.webhook, "url": "mailto:ops@example.com"}), want: 400, field: "url"},
	)
	add("GET /webhook/list",
		badCase{name: "take 0", req: req("GET", "/webhook/list?take=0", nil), want: 400, field: "take"},
		badCase{name: "take 101", req: req("GET", "/webhook/list?take=101", nil), want: 400, field: "take"},
		badCase{name: "take not a number", req: req("GET", "/webhook/list?take=ten", nil), want: 400, field: "take"},
		badCase{name: "tampered token", req: req("GET", "/webhook/list?token="+tampered(w.listToken), nil), want: 400, field: "token"},
		badCase{name: "token not base64", req: req("GET", "/webhook/list?token=abc.def", nil), want: 400, field: "token"},
		badCase{name: "a history token", req: req("GET", "/webhook/list?token="+w.historyToken, nil), want: 400, field: "token"},
	)
	add("GET /webhook/:id",
		badCase{name: "unknown", req: req("GET", "/webhook/wh_nosuch", nil), want: 404},
		badCase{name: "another instance's", req: req("GET", "/webhook/"+w.foreignWebhook, nil), want: 404},
	)
	add("DELETE /webhook/:id",
		badCase{name: "unknown", req: req("DELETE", "/webhook/wh_nosuch", nil), want: 404},
		badCase{name: "another instance's", req: req("DELETE", "/webhook/"+w.foreignWebhook, nil), want: 404},
	)
	add("POST /webhook/:id/rotate-secret",
		badCase{name: "unknown", req: req("POST", "/webhook/wh_nosuch/rotate-secret", nil), want: 404},
		badCase{name: "another instance's", req: req("POST", "/webhook/"+w.foreignWebhook+"/rotate-secret", nil), want: 404},
		badCase{name: "unsigned webhook", req: req("POST", plain+"/rotate-secret", nil), want: 409},
	)
	add("GET /webhook/:id/history",
		badCase{name: "unknown", req: req("GET", "/webhook/wh_nosuch/history", nil), want: 404},
		badCase{name: "another instance's", req: req("GET", "/webhook/"+w.foreignWebhook+"/history", nil), want: 404},
		badCase{name: "take 0", req: req("GET", hook+"/history?take=0", nil), want: 400, field: "take"},
		badCase{name: "take 101", req: req("GET", hook+"/history?take=101", nil), want: 400, field: "take"},
		badCase{name: "take not a number", req: req("GET", hook+"/history?take=all", nil), want: 400, field: "take"},
		badCase{name: "range of 367 days", req: req("GET", hook+"/history?fromDate=2024-01-01&toDate=2025-01-02", nil), want: 400, field: "fromDate"},
		badCase{name: "fromDate after toDate", req: req("GET", hook+"/history?fromDate=2025-02-01&toDate=2025-01-01", nil), want: 400, field: "fromDate"},
		badCase{name: "toDate not a date", req: req("GET", hook+"/history?toDate=tomorrow", nil), want: 400, field: "toDate"},
		badCase{name: "fromDate not a date", req: req("GET", hook+"/history?fromDate=2025-13-01", nil), want: 400, field: "fromDate"},
		badCase{name: "tampered token", req: req("GET", hook+"/history?token="+tampered(w.historyToken), nil), want: 400, field: "token"},
		badCase{name: "a list token", req: req("GET", hook+"/history?token="+w.listToken, nil), want: 400, field: "token"},
		badCase{name: "another webhook's token", req: req("GET", plain+"/history?token="+w.historyToken, nil), want: 400, field: "token"},
	)
	add("POST /webhook/:id/test",
		badCase{name: "unknown", req: req("POST", "/webhook/wh_nosuch/test", nil), want: 404},
		badCase{name: "another instance's", req: req("POST", "/webhook/"+w.foreignWebhook+"/test", nil), want: 404},
	)
	add("POST /webhook/:id/history/:rowKey/redeliver",
		badCase{name: "unknown webhook", req: req("POST", "/webhook/wh_nosuch/history/"+w.delivery+"/redeliver", nil), want: 404},
		badCase{name: "unknown delivery", req: req("POST", hook+"/history/msg_nosuch/redeliver", nil), want: 404},
		badCase{name: "another webhook's delivery", req: req("POST", hook+"/history/"+w.plainDelivery+"/redeliver", nil), want: 404},
		badCase{name: "disabled webhook", req: req("POST", plain+"/history/"+w.plainDelivery+"/redeliver", nil), want: 409},
	)

	img := testPNG(1, 1)
	asset := fmt.Sprintf("/assets/%d", w.asset)
	upload := func(fields m) request { return req("POST", "/assets", fields) }
	add("GET /assets",
		badCase{name: "take 0", req: req("GET", "/assets?take=0", nil), want: 400, field: "take"},
		badCase{name: "take 251", req: req("GET", "/assets?take=251", nil), want: 400, field: "take"},
		badCase{name: "take not a number", req: req("GET", "/assets?take=x", nil), want: 400, field: "take"},
		badCase{name: "skip negative", req: req("GET", "/assets?skip=-1", nil), want: 400, field: "skip"},
	)
	add("POST /assets",
		badCase{name: "malformed JSON", req: req("POST", "/assets", `{"fileName": "a.png",`), want: 400},
		badCase{name: "empty body", req: req("POST", "/assets", ""), want: 400},
		badCase{name: "array body", req: req("POST", "/assets", `[]`), want: 400},
		badCase{name: "no data", req: upload(m{"fileName": "a.png"}), want: 400, field: "data"},
		badCase{name: "empty data", req: upload(m{"fileName": "a.png", "data": ""}), want: 400, field: "data"},
		badCase{name: "data is a number", req: upload(m{"fileName": "a.png", "data": 5}), want: 400, field: "data"},
		badCase{name: "data not base64", req: upload(m{"fileName": "a.png", "data": "!!!"}), want: 400, field: "data"},
		badCase{name: "not an image", req: upload(m{"fileName": "a.png", "data": []byte("hello, world")}), want: 400, field: "file"},
		badCase{name: "HTML named .png", req: upload(m{"fileName": "a.png", "data": []byte("<html><script>alert(1)</script></html>")}), want: 400, field: "file"},
		badCase{name: "broken PNG", req: upload(m{"fileName": "a.png", "data": append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 40)...)}), want: 400, field: "file"},
		badCase{name: "no fileName", req: upload(m{"data": img}), want: 400, field: "fileName"},
		badCase{name: "empty fileName", req: upload(m{"fileName": " ", "data": img}), want: 400, field: "fileName"},
		badCase{name: "fileName is a number", req: upload(m{"fileName": 5, "data": img}), want: 400, field: "fileName"},
		badCase{name: "control character in fileName", req: upload(m{"fileName": "a\x01.png", "data": img}), want: 400, field: "fileName"},
		badCase{name: "label too long", req: upload(m{"fileName": "a.png", "label": strings.Repeat("l", 1001), "data": img}), want: 400, field: "label"},
		badCase{name: "NUL in label", req: upload(m{"fileName": "a.png", "label": "a\x00", "data": img}), want: 400, field: "label"},
		badCase{name: "unknown member", req: upload(m{"fileName": "a.png", "data": img, "width": 1}), want: 400, field: "width"},
		badCase{name: "form: not an image", req: req("POST", "/assets", form(part{"file", "a.png", "hello"})), want: 400, field: "file"},
		badCase{name: "form: empty file", req: req("POST", "/assets", form(part{"file", "a.png", ""})), want: 400, field: "file"},
		badCase{name: "form: no file part", req: req("POST", "/assets", form(part{"label", "", "x"})), want: 400, field: "file"},
		badCase{name: "form: two files", req: req("POST", "/assets", form(part{"file", "a.png", string(img)}, part{"file", "b.png", string(img)})), want: 400, field: "file"},
		badCase{name: "form: file in another part", req: req("POST", "/assets", form(part{"image", "a.png", string(img)})), want: 400, field: "image"},
		badCase{name: "form: unknown field", req: req("POST", "/assets", form(part{"file", "a.png", string(img)}, part{"colour", "", "red"})), want: 400, field: "colour"},
		badCase{name: "form: empty fileName", req: req("POST", "/assets", form(part{"file", "a.png", string(img)}, part{"fileName", "", " "})), want: 400, field: "fileName"},
		badCase{name: "form: malformed", req: req("POST", "/assets", typedBody{"multipart/form-data; boundary=xyz", []byte("not a form")}), want: 400},
		badCase{name: "form: no boundary", req: req("POST", "/assets", typedBody{"multipart/form-data", []byte("--x\r\n")}), want: 400},
	)
	add("GET /assets/:id",
		badCase{name: "non-integer id", req: req("GET", "/assets/abc", nil), want: 400, field: "id"},
		badCase{name: "zero id", req: req("GET", "/assets/0", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("GET", "/assets/999999", nil), want: 404},
		badCase{name: "another instance's", req: req("GET", fmt.Sprintf("/assets/%d", w.foreignAsset), nil), want: 404},
	)
	add("PATCH /assets/:id",
		badCase{name: "malformed JSON", req: req("PATCH", asset, malformed), want: 400},
		badCase{name: "empty body", req: req("PATCH", asset, ""), want: 400},
		badCase{name: "label is a number", req: req("PATCH", asset, m{"label": 5}), want: 400, field: "label"},
		badCase{name: "empty fileName", req: req("PATCH", asset, m{"fileName": ""}), want: 400, field: "fileName"},
		badCase{name: "label too long", req: req("PATCH", asset, m{"label": strings.Repeat("l", 1001)}), want: 400, field: "label"},
		badCase{name: "NUL in fileName", req: req("PATCH", asset, m{"fileName": "a\x00.png"}), want: 400, field: "fileName"},
		badCase{name: "unknown member", req: req("PATCH", asset, m{"size": 5}), want: 400, field: "size"},
		badCase{name: "non-integer id", req: req("PATCH", "/assets/abc", m{"label": "x"}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PATCH", "/assets/999999", m{"label": "x"}), want: 404},
		badCase{name: "another instance's", req: req("PATCH", fmt.Sprintf("/assets/%d", w.foreignAsset), m{"label": "x"}), want: 404},
	)
	add("DELETE /assets/:id",
		badCase{name: "non-integer id", req: req("DELETE", "/assets/1e3", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("DELETE", "/assets/999999", nil), want: 404},
		badCase{name: "another instance's", req: req("DELETE", fmt.Sprintf("/assets/%d", w.foreignAsset), nil), want: 404},
		badCase{name: "in a gallery", req: req("DELETE", asset, nil), want: 409},
		badCase{name: "an item's image", req: req("DELETE", fmt.Sprintf("/assets/%d", w.used), nil), want: 409},
	)
	gallery := fmt.Sprintf("/galleries/%d", w.gallery)
	add("POST /galleries",
		badCase{name: "malformed JSON", req: req("POST", "/galleries", malformed), want: 400},
		badCase{name: "empty body", req: req("POST", "/galleries", ""), want: 400},
		badCase{name: "no name", req: req("POST", "/galleries", m{"description": "x"}), want: 400, field: "name"},
		badCase{name: "empty name", req: req("POST", "/galleries", m{"name": " "}), want: 400, field: "name"},
		badCase{name: "name is a number", req: req("POST", "/galleries", m{"name": 5}), want: 400, field: "name"},
		badCase{name: "name too long", req: req("POST", "/galleries", m{"name": strings.Repeat("n", 201)}), want: 400, field: "name"},
		badCase{name: "description too long", req: req("POST", "/galleries", m{"name": "x", "description": strings.Repeat("d", 2001)}), want: 400, field: "description"},
		badCase{name: "NUL in name", req: req("POST", "/galleries", m{"name": "a\x00"}), want: 400, field: "name"},
		badCase{name: "unknown member", req: req("POST", "/galleries", m{"name": "x", "media": []int{}}), want: 400, field: "media"},
		badCase{name: "duplicate in another case", req: req("POST", "/galleries", m{"name": "PHOTOS"}), want: 409},
	)
	add("GET /galleries/:id",
		badCase{name: "non-integer id", req: req("GET", "/galleries/photos", nil), want: 400, field: "id"},
		badCase{name: "zero id", req: req("GET", "/galleries/0", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("GET", "/galleries/999999", nil), want: 404},
		badCase{name: "another instance's", req: req("GET", fmt.Sprintf("/galleries/%d", w.foreignGallery), nil), want: 404},
	)
	add("PATCH /galleries/:id",
		badCase{name: "malformed JSON", req: req("PATCH", gallery, malformed), want: 400},
		badCase{name: "empty name", req: req("PATCH", gallery, m{"name": ""}), want: 400, field: "name"},
		badCase{name: "description is a number", req: req("PATCH", gallery, m{"description": 5}), want: 400, field: "description"},
		badCase{name: "unknown member", req: req("PATCH", gallery, m{"count": 5}), want: 400, field: "count"},
		badCase{name: "duplicate name", req: req("PATCH", gallery, m{"name": "shown"}), want: 409},
		badCase{name: "non-integer id", req: req("PATCH", "/galleries/x", m{"name": "x"}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PATCH", "/galleries/999999", m{"name": "x"}), want: 404},
		badCase{name: "another instance's", req: req("PATCH", fmt.Sprintf("/galleries/%d", w.foreignGallery), m{"name": "x"}), want: 404},
	)
	add("DELETE /galleries/:id",
		badCase{name: "non-integer id", req: req("DELETE", "/galleries/x", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("DELETE", "/galleries/999999", nil), want: 404},
		badCase{name: "another instance's", req: req("DELETE", fmt.Sprintf("/galleries/%d", w.foreignGallery), nil), want: 404},
		badCase{name: "an item's gallery", req: req("DELETE", fmt.Sprintf("/galleries/%d", w.shown), nil), want: 409},
	)
	add("POST /galleries/:id/assets",
		badCase{name: "malformed JSON", req: req("POST", gallery+"/assets", `{"assetIDs": [1,`), want: 400},
		badCase{name: "no assetIDs", req: req("POST", gallery+"/assets", m{}), want: 400, field: "assetIDs"},
		badCase{name: "empty assetIDs", req: req("POST", gallery+"/assets", m{"assetIDs": []int64{}}), want: 400, field: "assetIDs"},
		badCase{name: "ids are strings", req: req("POST", gallery+"/assets", m{"assetIDs": []string{"1"}}), want: 400, field: "assetIDs"},
		badCase{name: "in the gallery already", req: req("POST", gallery+"/assets", m{"assetIDs": []int64{w.asset}}), want: 400, field: "assetIDs"},
		badCase{name: "listed twice", req: req("POST", gallery+"/assets", m{"assetIDs": []int64{w.spare, w.spare}}), want: 400, field: "assetIDs"},
		badCase{name: "unknown asset", req: req("POST", gallery+"/assets", m{"assetIDs": []int64{w.spare, 999999}}), want: 400, field: "assetIDs"},
		badCase{name: "another instance's asset", req: req("POST", gallery+"/assets", m{"assetIDs": []int64{w.foreignAsset}}), want: 400, field: "assetIDs"},
		badCase{name: "unknown member", req: req("POST", gallery+"/assets", m{"assetIDs": []int64{w.spare}, "position": 0}), want: 400, field: "position"},
		badCase{name: "non-integer id", req: req("POST", "/galleries/x/assets", m{"assetIDs": []int64{w.spare}}), want: 400, field: "id"},
		badCase{name: "unknown gallery", req: req("POST", "/galleries/999999/assets", m{"assetIDs": []int64{w.spare}}), want: 404},
		badCase{name: "another instance's gallery", req: req("POST", fmt.Sprintf("/galleries/%d/assets", w.foreignGallery), m{"assetIDs": []int64{w.spare}}), want: 404},
	)
	add("PUT /galleries/:id/assets/order",
		badCase{name: "malformed JSON", req: req("PUT", gallery+"/assets/order", malformed), want: 400},
		badCase{name: "no assetIDs", req: req("PUT", gallery+"/assets/order", m{}), want: 400, field: "assetIDs"},
		badCase{name: "assetIDs is a string", req: req("PUT", gallery+"/assets/order", m{"assetIDs": "1"}), want: 400, field: "assetIDs"},
		badCase{name: "incomplete", req: req("PUT", gallery+"/assets/order", m{"assetIDs": []int64{}}), want: 400, field: "assetIDs"},
		badCase{name: "not in the gallery", req: req("PUT", gallery+"/assets/order", m{"assetIDs": []int64{w.spare}}), want: 400, field: "assetIDs"},
		badCase{name: "repeated", req: req("PUT", gallery+"/assets/order", m{"assetIDs": []int64{w.asset, w.asset}}), want: 400, field: "assetIDs"},
		badCase{name: "non-integer id", req: req("PUT", "/galleries/x/assets/order", m{"assetIDs": []int64{w.asset}}), want: 400, field: "id"},
		badCase{name: "unknown gallery", req: req("PUT", "/galleries/999999/assets/order", m{"assetIDs": []int64{}}), want: 404},
	)
	add("DELETE /galleries/:id/assets/:assetID",
		badCase{name: "not in the gallery", req: req("DELETE", fmt.Sprintf("%s/assets/%d", gallery, w.spare), nil), want: 404},
		badCase{name: "unknown asset", req: req("DELETE", gallery+"/assets/999999", nil), want: 404},
		badCase{name: "non-integer asset", req: req("DELETE", gallery+"/assets/x", nil), want: 400, field: "assetID"},
		badCase{name: "non-integer id", req: req("DELETE", fmt.Sprintf("/galleries/x/assets/%d", w.asset), nil), want: 400, field: "id"},
		badCase{name: "unknown gallery", req: req("DELETE", fmt.Sprintf("/galleries/999999/assets/%d", w.asset), nil), want: 404},
	)
	redirect := fmt.Sprintf("/redirections/%d", w.redirect)
	add("POST /redirections",
		badCase{name: "malformed JSON", req: req("POST", "/redirections", malformed), want: 400},
		badCase{name: "empty body", req: req("POST", "/redirections", ""), want: 400},
		badCase{name: "no originUrl", req: req("POST", "/redirections", m{"destinationUrl": "/x"}), want: 400, field: "originUrl"},
		badCase{name: "empty originUrl", req: req("POST", "/redirections", m{"originUrl": "", "destinationUrl": "/x"}), want: 400, field: "originUrl"},
		badCase{name: "no destinationUrl", req: req("POST", "/redirections", m{"originUrl": "/x"}), want: 400, field: "destinationUrl"},
		badCase{name: "originUrl is a number", req: req("POST", "/redirections", m{"originUrl": 5, "destinationUrl": "/x"}), want: 400, field: "originUrl"},
		badCase{name: "javascript destination", req: req("POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "javascript:alert(1)"}), want: 400, field: "destinationUrl"},
		badCase{name: "scheme-relative destination", req: req("POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "//evil.example/"}), want: 400, field: "destinationUrl"},
		badCase{name: "space in originUrl", req: req("POST", "/redirections", m{"originUrl": "/a b", "destinationUrl": "/x"}), want: 400, field: "originUrl"},
		badCase{name: "to itself", req: req("POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "/x"}), want: 400, field: "destinationUrl"},
		badCase{name: "status 307", req: req("POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "/y", "statusCode": 307}), want: 400, field: "statusCode"},
		badCase{name: "status is a string", req: req("POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "/y", "statusCode": "301"}), want: 400, field: "statusCode"},
		badCase{name: "NUL in destinationUrl", req: req("POST", "/redirections", m{"originUrl": "/x", "destinationUrl": "/y\x00"}), want: 400, field: "destinationUrl"},
		badCase{name: "unknown member", req: req("POST", "/redirections", m{"from": "/x"}), want: 400, field: "from"},
		badCase{name: "duplicate in another case", req: req("POST", "/redirections", m{"originUrl": "/OLD", "destinationUrl": "/y"}), want: 409},
	)
	add("GET /redirections/:id",
		badCase{name: "non-integer id", req: req("GET", "/redirections/old", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("GET", "/redirections/999999", nil), want: 404},
		badCase{name: "another instance's", req: req("GET", fmt.Sprintf("/redirections/%d", w.foreignRedir), nil), want: 404},
	)
	add("PUT /redirections/:id",
		badCase{name: "malformed JSON", req: req("PUT", redirect, malformed), want: 400},
		badCase{name: "empty destinationUrl", req: req("PUT", redirect, m{"destinationUrl": ""}), want: 400, field: "destinationUrl"},
		badCase{name: "to itself", req: req("PUT", redirect, m{"destinationUrl": "/old"}), want: 400, field: "destinationUrl"},
		badCase{name: "status 303", req: req("PUT", redirect, m{"statusCode": 303}), want: 400, field: "statusCode"},
		badCase{name: "unknown member", req: req("PUT", redirect, m{"id": 5}), want: 400, field: "id"},
		badCase{name: "duplicate origin", req: req("PUT", redirect, m{"originUrl": "/Gone"}), want: 409},
		badCase{name: "non-integer id", req: req("PUT", "/redirections/x", m{"statusCode": 302}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PUT", "/redirections/999999", m{"statusCode": 302}), want: 404},
		badCase{name: "another instance's", req: req("PUT", fmt.Sprintf("/redirections/%d", w.foreignRedir), m{"statusCode": 302}), want: 404},
	)
	add("DELETE /redirections/:id",
		badCase{name: "non-integer id", req: req("DELETE", "/redirections/-1", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("DELETE", "/redirections/999999", nil), want: 404},
		badCase{name: "another instance's", req: req("DELETE", fmt.Sprintf("/redirections/%d", w.foreignRedir), nil), want: 404},
	)
	add("GET /:locale/items",
		badCase{name: "unknown container", req: req("GET", "/en-us/items?container=nope", nil), want: 404},
		badCase{name: "take 0", req: req("GET", "/en-us/items?container=articles&take=0", nil), want: 400, field: "take"},
		badCase{name: "take 501", req: req("GET", "/en-us/items?container=articles&take=501", nil), want: 400, field: "take"},
		badCase{name: "unknown parameter", req: req("GET", "/en-us/items?containr=articles", nil), want: 400, field: "containr"},
		badCase{name: "q empty", req: req("GET", "/en-us/items?q=", nil), want: 400, field: "q"},
		badCase{name: "q blank", req: req("GET", "/en-us/items?q=%20%20", nil), want: 400, field: "q"},
		badCase{name: "q over 200 characters", req: req("GET", "/en-us/items?q="+strings.Repeat("a", 201), nil), want: 400, field: "q"},
		badCase{name: "q without a word", req: req("GET", "/en-us/items?q=%2B%2B", nil), want: 400, field: "q"},
		badCase{name: "state not a number", req: req("GET", "/en-us/items?state=published", nil), want: 400, field: "state"},
		badCase{name: "state 9", req: req("GET", "/en-us/items?state=9", nil), want: 400, field: "state"},
		badCase{name: "unknown sort", req: req("GET", "/en-us/items?sort=title", nil), want: 400, field: "sort"},
		badCase{name: "relevance without q", req: req("GET", "/en-us/items?sort=relevance", nil), want: 400, field: "sort"},
		badCase{name: "unknown direction", req: req("GET", "/en-us/items?direction=up", nil), want: 400, field: "direction"},
		badCase{name: "take not a number", req: req("GET", "/en-us/items?container=articles&take=ten", nil), want: 400, field: "take"},
		badCase{name: "skip negative", req: req("GET", "/en-us/items?container=articles&skip=-1", nil), want: 400, field: "skip"},
		badCase{name: "unknown locale", req: req("GET", "/xx-xx/items?container=articles", nil), want: 404},
		badCase{name: "NUL in container", req: req("GET", "/en-us/items?container=articles%00", nil), want: 400, field: "container"},
	)
	add("POST /:locale/items",
		badCase{name: "malformed JSON", req: req("POST", "/en-us/items", malformed), want: 400},
		badCase{name: "no referenceName", req: req("POST", "/en-us/items", m{"fields": m{"title": "x"}}), want: 400, field: "referenceName"},
		badCase{name: "unknown container", req: req("POST", "/en-us/items", m{"referenceName": "nope", "fields": m{"title": "x"}}), want: 404},
		badCase{name: "unknown locale", req: req("POST", "/xx-xx/items", m{"referenceName": "articles", "fields": m{"title": "x"}}), want: 404},
		badCase{name: "text is a number", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": 5}}), want: 400, field: "fields.title"},
		badCase{name: "number is a string", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "x", "count": "3"}}), want: 400, field: "fields.count"},
		badCase{name: "number not whole", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "x", "count": 1.5}}), want: 400, field: "fields.count"},
		badCase{name: "field the model lacks", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "x", "nope": "y"}}), want: 400, field: "fields.nope"},
		badCase{name: "required field missing", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"slug": "x"}}), want: 400, field: "fields.title"},
		badCase{name: "link to an unknown item", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "x", "category": m{"contentID": 999999}}}), want: 400, field: "fields.category"},
		badCase{name: "fields is a string", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": "title=x"}), want: 400, field: "fields"},
		badCase{name: "unknown member", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "x"}, "state": 2}), want: 400, field: "state"},
		badCase{name: "NUL in a field value", req: req("POST", "/en-us/items", m{"referenceName": "articles", "fields": m{"title": "x\x00y"}}), want: 400, field: "fields"},
	)
	add("GET /:locale/items/:id",
		badCase{name: "non-integer id", req: req("GET", "/en-us/items/abc", nil), want: 400, field: "id"},
		badCase{name: "negative id", req: req("GET", "/en-us/items/-4", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("GET", "/en-us/items/999999", nil), want: 404},
		badCase{name: "no copy in locale", req: req("GET", fmt.Sprintf("/fr-ca/items/%d", w.article), nil), want: 404},
		badCase{name: "unknown locale", req: req("GET", fmt.Sprintf("/xx-xx/items/%d", w.article), nil), want: 404},
	)
	add("GET /:locale/items/:id/versions",
		badCase{name: "non-integer id", req: req("GET", "/en-us/items/abc/versions", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("GET", "/en-us/items/999999/versions", nil), want: 404},
		badCase{name: "no copy in locale", req: req("GET", fmt.Sprintf("/fr-ca/items/%d/versions", w.article), nil), want: 404},
		badCase{name: "take 0", req: req("GET", item+"/versions?take=0", nil), want: 400, field: "take"},
		badCase{name: "unknown parameter", req: req("GET", item+"/versions?page=2", nil), want: 400, field: "page"},
	)
	add("GET /:locale/items/:id/versions/:version",
		badCase{name: "non-integer version", req: req("GET", item+"/versions/latest", nil), want: 400, field: "version"},
		badCase{name: "unknown version", req: req("GET", item+"/versions/999999", nil), want: 404},
		badCase{name: "another item's version", req: req("GET", fmt.Sprintf("/en-us/items/%d/versions/%d", w.extra, w.articleVersion), nil), want: 404},
	)
	add("POST /:locale/items/:id/versions/:version/restore",
		badCase{name: "another item's version", req: req("POST", fmt.Sprintf("/en-us/items/%d/versions/%d/restore", w.extra, w.articleVersion), nil), want: 404},
		badCase{name: "unknown version", req: req("POST", item+"/versions/999999/restore", nil), want: 404},
		badCase{name: "non-integer version", req: req("POST", item+"/versions/x/restore", nil), want: 400, field: "version"},
		badCase{name: "deleted copy", req: req("POST", fmt.Sprintf("%s/versions/%d/restore", deleted, w.articleVersion), nil), want: 404},
		badCase{name: "If-Match malformed", req: req("POST", fmt.Sprintf("%s/versions/%d/restore", item, w.articleVersion), nil), want: 400, field: "If-Match", ifMatch: "v1"},
		badCase{name: "If-Match stale", req: req("POST", fmt.Sprintf("%s/versions/%d/restore", item, w.articleVersion), nil), want: 412, ifMatch: `"999999"`},
	)
	add("POST /:locale/items/:id/discard",
		badCase{name: "never published", req: req("POST", item+"/discard", nil), want: 409},
		badCase{name: "deleted", req: req("POST", deleted+"/discard", nil), want: 409},
		badCase{name: "unknown", req: req("POST", "/en-us/items/999999/discard", nil), want: 404},
		badCase{name: "If-Match malformed", req: req("POST", item+"/discard", nil), want: 400, field: "If-Match", ifMatch: "*,"},
	)
	add("PUT /:locale/items/:id",
		badCase{name: "If-Match malformed", req: req("PUT", item, m{"fields": m{"title": "x"}}), want: 400, field: "If-Match", ifMatch: `"12`},
		badCase{name: "If-Match stale", req: req("PUT", item, m{"fields": m{"title": "x"}}), want: 412, ifMatch: `"999999"`},
		badCase{name: "If-Match weak", req: req("PUT", item, m{"fields": m{"title": "x"}}), want: 412, ifMatch: fmt.Sprintf(`W/"%d"`, w.articleVersion)},
	)
	add("PUT /:locale/items/:id",
		badCase{name: "malformed JSON", req: req("PUT", item, malformed), want: 400},
		badCase{name: "no fields", req: req("PUT", item, m{}), want: 400, field: "fields"},
		badCase{name: "number is a string", req: req("PUT", item, m{"fields": m{"count": "x"}}), want: 400, field: "fields.count"},
		badCase{name: "clearing a required field", req: req("PUT", item, m{"fields": m{"title": nil}}), want: 400, field: "fields.title"},
		badCase{name: "new copy without a required field", req: req("PUT", fmt.Sprintf("/fr-ca/items/%d", w.article), m{"fields": m{"slug": "premier"}}), want: 400, field: "fields.title"},
		badCase{name: "unknown member", req: req("PUT", item, m{"fields": m{}, "referenceName": "articles"}), want: 400, field: "referenceName"},
		badCase{name: "non-integer id", req: req("PUT", "/en-us/items/x1", m{"fields": m{}}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PUT", "/en-us/items/999999", m{"fields": m{"title": "x"}}), want: 404},
		badCase{name: "deleted copy", req: req("PUT", deleted, m{"fields": m{"title": "x"}}), want: 409},
	)
	add("DELETE /:locale/items/:id",
		badCase{name: "non-integer id", req: req("DELETE", "/en-us/items/abc", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("DELETE", "/en-us/items/999999", nil), want: 404},
		badCase{name: "already deleted", req: req("DELETE", deleted, nil), want: 409},
	)
	add("PUT /:locale/items/:id/schedule",
		badCase{name: "malformed JSON", req: req("PUT", item+"/schedule", malformed), want: 400},
		badCase{name: "publish in the past", req: req("PUT", item+"/schedule", m{"publishAt": past}), want: 400, field: "publishAt"},
		badCase{name: "publish not a date", req: req("PUT", item+"/schedule", m{"publishAt": "monday"}), want: 400, field: "publishAt"},
		badCase{name: "unpublish before publish", req: req("PUT", item+"/schedule", m{"publishAt": later, "unpublishAt": soon}), want: 400, field: "unpublishAt"},
		badCase{name: "unknown member", req: req("PUT", item+"/schedule", m{"at": soon}), want: 400, field: "at"},
		badCase{name: "non-integer id", req: req("PUT", "/en-us/items/abc/schedule", m{"publishAt": soon}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PUT", "/en-us/items/999999/schedule", m{"publishAt": soon}), want: 404},
		badCase{name: "deleted copy", req: req("PUT", deleted+"/schedule", m{"publishAt": soon}), want: 404},
		badCase{name: "If-Match stale", req: req("PUT", item+"/schedule", m{"publishAt": soon}), want: 412, ifMatch: `"999999"`},
		badCase{name: "If-Match malformed", req: req("PUT", item+"/schedule", m{"publishAt": soon}), want: 400, field: "If-Match", ifMatch: "1"},
	)
	add("POST /:locale/items/:id/:action",
		badCase{name: "unknown action", req: req("POST", item+"/frobnicate", nil), want: 404},
		badCase{name: "save is no action", req: req("POST", item+"/save", nil), want: 404},
		badCase{name: "delete is no action", req: req("POST", item+"/delete", nil), want: 404},
		badCase{name: "approve while staging", req: req("POST", item+"/approve", nil), want: 409},
		badCase{name: "unpublish never published", req: req("POST", item+"/unpublish", nil), want: 409},
		badCase{name: "publish deleted", req: req("POST", deleted+"/publish", nil), want: 409},
		badCase{name: "non-integer id", req: req("POST", "/en-us/items/abc/publish", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("POST", "/en-us/items/999999/publish", nil), want: 404},
		badCase{name: "no copy in locale", req: req("POST", fmt.Sprintf("/fr-ca/items/%d/publish", w.article), nil), want: 404},
	)
	add("GET /:locale/pages",
		badCase{name: "unknown channel", req: req("GET", "/en-us/pages?channel=nope", nil), want: 404},
		badCase{name: "unknown locale", req: req("GET", "/xx-xx/pages", nil), want: 404},
		badCase{name: "NUL in channel", req: req("GET", "/en-us/pages?channel=%00", nil), want: 400, field: "channel"},
		badCase{name: "take 0", req: req("GET", "/en-us/pages?take=0", nil), want: 400, field: "take"},
		badCase{name: "take 501", req: req("GET", "/en-us/pages?take=501", nil), want: 400, field: "take"},
		badCase{name: "skip negative", req: req("GET", "/en-us/pages?skip=-1", nil), want: 400, field: "skip"},
		badCase{name: "unknown parameter", req: req("GET", "/en-us/pages?chanel=website", nil), want: 400, field: "chanel"},
	)
	add("POST /:locale/pages",
		badCase{name: "malformed JSON", req: req("POST", "/en-us/pages", malformed), want: 400},
		badCase{name: "a sibling's name", req: req("POST", "/en-us/pages", m{"title": "X", "name": "contact", "pageModel": "Main"}), want: 409},
		badCase{name: "name with a space", req: req("POST", "/en-us/pages", m{"title": "X", "name": "a b", "pageModel": "Main"}), want: 400, field: "name"},
		badCase{name: "name empty", req: req("POST", "/en-us/pages", m{"title": "X", "name": "", "pageModel": "Main"}), want: 400, field: "name"},
		badCase{name: "name too long", req: req("POST", "/en-us/pages", m{"title": "X", "name": strings.Repeat("a", 81), "pageModel": "Main"}), want: 400, field: "name"},
		badCase{name: "empty title", req: req("POST", "/en-us/pages", m{"title": "", "pageModel": "Main"}), want: 400, field: "title"},
		badCase{name: "title is a number", req: req("POST", "/en-us/pages", m{"title": 5, "pageModel": "Main"}), want: 400, field: "title"},
		badCase{name: "no page model", req: req("POST", "/en-us/pages", m{"title": "X"}), want: 400, field: "pageModel"},
		badCase{name: "unknown page model", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Nope"}), want: 404},
		badCase{name: "unknown channel", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "channel": "nope"}), want: 404},
		badCase{name: "parent not an id", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "parentPageID": "home"}), want: 400, field: "parentPageID"},
		badCase{name: "unknown parent", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "parentPageID": 999999}), want: 404},
		badCase{name: "parent without copy in locale", req: req("POST", "/fr-ca/pages", m{"title": "X", "pageModel": "Main", "parentPageID": w.parent}), want: 409},
		badCase{name: "visible.menu is a string", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "visible": m{"menu": "yes"}}), want: 400, field: "visible.menu"},
		badCase{name: "unknown member of seo", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "seo": m{"robots": "none"}}), want: 400, field: "robots"},
		badCase{name: "unknown member", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "path": "/x"}), want: 400, field: "path"},
		badCase{name: "bad redirect", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "redirectUrl": "javascript:alert(1)"}), want: 400, field: "redirectUrl"},
		badCase{name: "dynamic with unknown container", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "dynamic": m{"referenceName": "nope", "pathField": "slug"}}), want: 404},
		badCase{name: "dynamic path field not text", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "dynamic": m{"referenceName": "articles", "pathField": "count"}}), want: 400, field: "dynamic.pathField"},
		badCase{name: "folder and dynamic", req: req("POST", "/en-us/pages", m{"title": "X", "pageModel": "Main", "folder": true, "dynamic": m{"referenceName": "articles", "pathField": "slug"}}), want: 400, field: "folder"},
		badCase{name: "unknown locale", req: req("POST", "/xx-xx/pages", m{"title": "X", "pageModel": "Main"}), want: 404},
	)
	add("GET /:locale/pages/:id",
		badCase{name: "non-integer id", req: req("GET", "/en-us/pages/home", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("GET", "/en-us/pages/999999", nil), want: 404},
		badCase{name: "no copy in locale", req: req("GET", fmt.Sprintf("/fr-ca/pages/%d", w.parent), nil), want: 404},
	)
	add("PUT /:locale/pages/:id/position",
		badCase{name: "malformed JSON", req: req("PUT", child+"/position", malformed), want: 400},
		badCase{name: "under itself", req: req("PUT", page+"/position", m{"parentPageID": w.parent}), want: 400, field: "parentPageID"},
		badCase{name: "under its descendant (cycle)", req: req("PUT", page+"/position", m{"parentPageID": w.child}), want: 400, field: "parentPageID"},
		badCase{name: "beforePageID of another parent", req: req("PUT", child+"/position", m{"beforePageID": w.lone}), want: 400, field: "beforePageID"},
		badCase{name: "beforePageID of another channel", req: req("PUT", page+"/position", m{"beforePageID": w.footerPage}), want: 400, field: "beforePageID"},
		badCase{name: "parent in another channel", req: req("PUT", child+"/position", m{"parentPageID": w.footerPage}), want: 400, field: "parentPageID"},
		badCase{name: "before itself", req: req("PUT", page+"/position", m{"beforePageID": w.parent}), want: 400, field: "beforePageID"},
		badCase{name: "beforePageID not an id", req: req("PUT", page+"/position", m{"beforePageID": "first"}), want: 400, field: "beforePageID"},
		badCase{name: "unknown page", req: req("PUT", "/en-us/pages/999999/position", m{}), want: 404},
		badCase{name: "unknown parent", req: req("PUT", page+"/position", m{"parentPageID": 999999}), want: 404},
		badCase{name: "If-Match stale", req: req("PUT", page+"/position", m{"beforePageID": nil}), want: 412, ifMatch: `"999999"`},
	)
	add("GET /:locale/pages/:id/versions",
		badCase{name: "unknown", req: req("GET", "/en-us/pages/999999/versions", nil), want: 404},
		badCase{name: "skip negative", req: req("GET", page+"/versions?skip=-1", nil), want: 400, field: "skip"},
	)
	add("GET /:locale/pages/:id/versions/:version",
		badCase{name: "another page's version", req: req("GET", fmt.Sprintf("%s/versions/%d", child, w.parentVersion), nil), want: 404},
		badCase{name: "an item's version", req: req("GET", fmt.Sprintf("%s/versions/%d", page, w.articleVersion), nil), want: 404},
	)
	add("POST /:locale/pages/:id/versions/:version/restore",
		badCase{name: "another page's version", req: req("POST", fmt.Sprintf("%s/versions/%d/restore", child, w.parentVersion), nil), want: 404},
		badCase{name: "If-Match stale", req: req("POST", fmt.Sprintf("%s/versions/%d/restore", page, w.parentVersion), nil), want: 412, ifMatch: `"999999"`},
	)
	add("POST /:locale/pages/:id/discard",
		badCase{name: "never published", req: req("POST", page+"/discard", nil), want: 409},
		badCase{name: "unknown", req: req("POST", "/en-us/pages/999999/discard", nil), want: 404},
	)
	add("PUT /:locale/pages/:id",
		badCase{name: "rename to a sibling's name", req: req("PUT", page, m{"name": "contact"}), want: 409},
		badCase{name: "rename to an unsafe name", req: req("PUT", page, m{"name": "a/b"}), want: 400, field: "name"},
		badCase{name: "rename to upper case", req: req("PUT", page, m{"name": "Home"}), want: 400, field: "name"},
		badCase{name: "titleField not a text field", req: req("PUT", page, m{"dynamic": m{"referenceName": "articles", "pathField": "slug", "titleField": "count"}}), want: 400, field: "dynamic.titleField"},
		badCase{name: "If-Match stale", req: req("PUT", page, m{"title": "x"}), want: 412, ifMatch: `"999999"`},
		badCase{name: "If-Match malformed", req: req("PUT", page, m{"title": "x"}), want: 400, field: "If-Match", ifMatch: "1"},
	)
	add("PUT /:locale/pages/:id",
		badCase{name: "malformed JSON", req: req("PUT", page, malformed), want: 400},
		badCase{name: "changing the model", req: req("PUT", page, m{"pageModel": "Spare"}), want: 400, field: "pageModel"},
		badCase{name: "unknown pageType", req: req("PUT", page, m{"pageType": "gallery"}), want: 400, field: "pageType"},
		badCase{name: "pageType against folder", req: req("PUT", page, m{"pageType": "static", "folder": true}), want: 400, field: "folder"},
		badCase{name: "pageType dynamic without dynamic", req: req("PUT", page, m{"pageType": "dynamic"}), want: 400, field: "dynamic"},
		badCase{name: "pageType static with dynamic", req: req("PUT", page, m{"pageType": "static", "dynamic": m{"referenceName": "articles", "pathField": "slug"}}), want: 400, field: "dynamic"},
		badCase{name: "pageType link without redirectUrl", req: req("PUT", page, m{"pageType": "link"}), want: 400, field: "redirectUrl"},
		badCase{name: "changing the channel", req: req("PUT", page, m{"channel": "other"}), want: 400, field: "channel"},
		badCase{name: "under itself", req: req("PUT", page, m{"parentPageID": w.parent}), want: 400, field: "parentPageID"},
		badCase{name: "under its child", req: req("PUT", page, m{"parentPageID": w.child}), want: 400, field: "parentPageID"},
		badCase{name: "empty title", req: req("PUT", page, m{"title": " "}), want: 400, field: "title"},
		badCase{name: "securePage is a string", req: req("PUT", page, m{"securePage": "true"}), want: 400, field: "securePage"},
		badCase{name: "unknown member", req: req("PUT", page, m{"slug": "start"}), want: 400, field: "slug"},
		badCase{name: "NUL in seo", req: req("PUT", page, m{"seo": m{"metaHTML": "<meta>\x00"}}), want: 400, field: "seo"},
		badCase{name: "new copy without title", req: req("PUT", fmt.Sprintf("/fr-ca/pages/%d", w.parent), m{"menuText": "Accueil"}), want: 400, field: "title"},
		badCase{name: "non-integer id", req: req("PUT", "/en-us/pages/home", m{"title": "X"}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PUT", "/en-us/pages/999999", m{"title": "X"}), want: 404},
	)
	add("DELETE /:locale/pages/:id",
		badCase{name: "has children", req: req("DELETE", page, nil), want: 409},
		badCase{name: "non-integer id", req: req("DELETE", "/en-us/pages/home", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("DELETE", "/en-us/pages/999999", nil), want: 404},
	)
	add("PUT /:locale/pages/:id/schedule",
		badCase{name: "malformed JSON", req: req("PUT", page+"/schedule", malformed), want: 400},
		badCase{name: "unpublish in the past", req: req("PUT", page+"/schedule", m{"unpublishAt": past}), want: 400, field: "unpublishAt"},
		badCase{name: "publishAt is a number", req: req("PUT", page+"/schedule", m{"publishAt": 1700000000}), want: 400, field: "publishAt"},
		badCase{name: "non-integer id", req: req("PUT", "/en-us/pages/home/schedule", m{"publishAt": soon}), want: 400, field: "id"},
		badCase{name: "unknown", req: req("PUT", "/en-us/pages/999999/schedule", m{"publishAt": soon}), want: 404},
		badCase{name: "If-Match stale", req: req("PUT", page+"/schedule", m{"publishAt": soon}), want: 412, ifMatch: `"999999"`},
		badCase{name: "If-Match malformed", req: req("PUT", page+"/schedule", m{"publishAt": soon}), want: 400, field: "If-Match", ifMatch: "W/1"},
	)
	add("POST /:locale/pages/:id/zones/:zone",
		badCase{name: "malformed JSON", req: req("POST", zone, malformed), want: 400},
		badCase{name: "unknown zone", req: req("POST", page+"/zones/Nope", m{"module": "Hero", "fields": m{}}), want: 404},
		badCase{name: "unknown module", req: req("POST", zone, m{"module": "Nope", "fields": m{}}), want: 404},
		badCase{name: "content model as module", req: req("POST", zone, m{"module": "Article", "fields": m{"title": "x"}}), want: 400, field: "module"},
		badCase{name: "field value of the wrong type", req: req("POST", zone, m{"module": "Hero", "fields": m{"heading": 5}}), want: 400, field: "fields.heading"},
		badCase{name: "unknown member", req: req("POST", zone, m{"module": "Hero", "position": 0}), want: 400, field: "position"},
		badCase{name: "non-integer id", req: req("POST", "/en-us/pages/home/zones/MainContentZone", m{"module": "Hero"}), want: 400, field: "id"},
		badCase{name: "unknown page", req: req("POST", "/en-us/pages/999999/zones/MainContentZone", m{"module": "Hero"}), want: 404},
		badCase{name: "no copy in locale", req: req("POST", fmt.Sprintf("/fr-ca/pages/%d/zones/MainContentZone", w.parent), m{"module": "Hero"}), want: 404},
	)
	add("PUT /:locale/pages/:id/zones/:zone/order",
		badCase{name: "malformed JSON", req: req("PUT", zone+"/order", malformed), want: 400},
		badCase{name: "no contentIDs", req: req("PUT", zone+"/order", m{}), want: 400, field: "contentIDs"},
		badCase{name: "id not in zone", req: req("PUT", zone+"/order", m{"contentIDs": []int64{999999}}), want: 400, field: "contentIDs"},
		badCase{name: "ids are strings", req: req("PUT", zone+"/order", m{"contentIDs": []string{"1"}}), want: 400, field: "contentIDs"},
		badCase{name: "unknown zone", req: req("PUT", page+"/zones/Nope/order", m{"contentIDs": []int64{}}), want: 404},
		badCase{name: "non-integer id", req: req("PUT", "/en-us/pages/x/zones/MainContentZone/order", m{"contentIDs": []int64{}}), want: 400, field: "id"},
	)
	add("DELETE /:locale/pages/:id/zones/:zone/:contentID",
		badCase{name: "unknown component", req: req("DELETE", zone+"/999999", nil), want: 404},
		badCase{name: "non-integer component", req: req("DELETE", zone+"/abc", nil), want: 400, field: "contentID"},
		badCase{name: "unknown zone", req: req("DELETE", fmt.Sprintf("%s/zones/Nope/%d", page, w.component), nil), want: 404},
		badCase{name: "component of another page", req: req("DELETE", fmt.Sprintf("%s/zones/MainContentZone/%d", child, w.component), nil), want: 404},
		badCase{name: "unknown page", req: req("DELETE", fmt.Sprintf("/en-us/pages/999999/zones/MainContentZone/%d", w.component), nil), want: 404},
	)
	add("POST /:locale/pages/:id/preview-link",
		badCase{name: "non-integer id", req: req("POST", "/en-us/pages/home/preview-link", nil), want: 400, field: "id"},
		badCase{name: "unknown page", req: req("POST", "/en-us/pages/999999/preview-link", nil), want: 404},
		badCase{name: "unknown locale", req: req("POST", "/de-de"+page[len("/en-us"):]+"/preview-link", nil), want: 404},
		badCase{name: "an item for a page that is not dynamic", req: req("POST", page+"/preview-link", m{"contentID": w.article}), want: 400, field: "contentID"},
		badCase{name: "negative item", req: req("POST", page+"/preview-link", m{"contentID": -1}), want: 400, field: "contentID"},
		badCase{name: "item as text", req: req("POST", page+"/preview-link", m{"contentID": "1"}), want: 400, field: "contentID"},
		badCase{name: "unknown member", req: req("POST", page+"/preview-link", m{"slug": "/x"}), want: 400, field: "slug"},
		badCase{name: "malformed JSON", req: req("POST", page+"/preview-link", malformed), want: 400},
	)
	add("POST /:locale/pages/:id/:action",
		badCase{name: "unknown action", req: req("POST", page+"/frobnicate", nil), want: 404},
		badCase{name: "approve while staging", req: req("POST", page+"/approve", nil), want: 409},
		badCase{name: "unpublish never published", req: req("POST", page+"/unpublish", nil), want: 409},
		badCase{name: "non-integer id", req: req("POST", "/en-us/pages/home/publish", nil), want: 400, field: "id"},
		badCase{name: "unknown", req: req("POST", "/en-us/pages/999999/publish", nil), want: 404},
	)
	return cases
}

// TestBadInput sends every bad input to its route: each answers its status
// with a problem document, and nothing is written.
func TestBadInput(t *testing.T) {
	t.Parallel()
	h := newFullHarness(t)
	w := h.populate()
	cases := badCases(w)

	// Every route refuses a body over the limit, before anything else.
	oversize := `{"name": "` + strings.Repeat("a", 2<<20) + `"}`
	for _, c := range matrix(w) {
		cases = append(cases, badCase{route: c.req.method + " " + c.pattern, name: "oversize body", req: request{c.req.method, c.req.path, oversize}, want: 413})
	}

	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.route] = true
		before := h.fingerprint()
		var r response
		if c.ifMatch != "" {
			r = h.ifMatch(c.ifMatch, c.req)
		} else {
			r = h.as(content.RoleFull, c.req)
		}
		what := fmt.Sprintf("%s: %s (%s)", c.route, c.name, c.req)
		if r.status >= 500 {
			t.Errorf("%s = %s: a server error", what, r)
		}
		checkProblem(t, what, r, c.want, c.field)
		if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
			t.Errorf("%s changed tables %v", what, ch)
		}
	}
	for _, r := range managementRoutes(h) {
		if !covered[r] {
			t.Errorf("route %s has no bad-input case", r)
		}
	}
}

// TestUnknownLocaleListsLocales checks the problem document of an unknown
// locale: a 404 naming the configured codes in a locales member.
func TestUnknownLocaleListsLocales(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	for _, rq := range []request{
		{"GET", "/de-de/items?container=articles", nil},
		{"GET", fmt.Sprintf("/de-de/items/%d", w.article), nil},
		{"PUT", fmt.Sprintf("/de-de/items/%d", w.article), map[string]any{"fields": map[string]any{"title": "x"}}},
		{"POST", fmt.Sprintf("/de-de/items/%d/publish", w.article), nil},
		{"GET", "/de-de/pages", nil},
		{"POST", "/de-de/pages", map[string]any{"title": "X", "pageModel": "Main"}},
		{"DELETE", "/locales/de-de", nil},
	} {
		r := h.as(content.RoleFull, rq)
		doc := checkProblem(t, rq.String(), r, 404, "")
		got := fmt.Sprint(doc["locales"])
		if got != "[en-us fr-ca]" {
			t.Errorf("%s: locales = %s, want [en-us fr-ca]", rq, got)
		}
		if d, _ := doc["detail"].(string); !strings.Contains(d, "de-de") {
			t.Errorf("%s: detail %q does not name the locale asked for", rq, d)
		}
	}
	// The lower-case form of a configured code resolves.
	if _, err := h.store.CreateLocale(t.Context(), h.inst, content.Locale{Code: "pt-BR", Name: "Português"}); err != nil {
		t.Fatal(err)
	}
	if r := h.as(content.RoleFull, request{"GET", "/pt-br/pages", nil}); r.status != 200 {
		t.Errorf("GET /pt-br/pages with locale pt-BR configured = %s, want 200", r)
	}
}
