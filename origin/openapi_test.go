package origin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/content"
)

// openAPIDoc is the part of an OpenAPI document the tests read.
type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas         map[string]json.RawMessage `json:"schemas"`
		Responses       map[string]json.RawMessage `json:"responses"`
		Parameters      map[string]json.RawMessage `json:"parameters"`
		Headers         map[string]json.RawMessage `json:"headers"`
		SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
	} `json:"components"`
}

// operation is the part of an operation object the tests read.
type operation struct {
	OperationID string                     `json:"operationId"`
	Role        content.Role               `json:"x-edgecms-role"`
	ActionRoles map[string]content.Role    `json:"x-edgecms-action-roles"`
	Parameters  []json.RawMessage          `json:"parameters"`
	RequestBody *json.RawMessage           `json:"requestBody"`
	Responses   map[string]json.RawMessage `json:"responses"`
	Security    *[]map[string][]string     `json:"security"`
}

var httpMethods = []string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}

func loadOpenAPI(t *testing.T) ([]byte, openAPIDoc) {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return b, doc
}

// operations returns the document's operations keyed by "METHOD path".
func operations(t *testing.T, doc openAPIDoc) map[string]operation {
	t.Helper()
	out := map[string]operation{}
	for path, item := range doc.Paths {
		for _, m := range httpMethods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", m, path, err)
			}
			out[strings.ToUpper(m)+" "+path] = op
		}
	}
	return out
}

var (
	fiberParam   = regexp.MustCompile(`:[A-Za-z0-9_]+\??`)
	openAPIParam = regexp.MustCompile(`\{[^}]+\}`)
)

// shape replaces the parameters of a Fiber or OpenAPI path by {}, so that
// paths compare whatever their parameters are named.
func shape(path string) string {
	return openAPIParam.ReplaceAllString(fiberParam.ReplaceAllString(path, "{}"), "{}")
}

// TestOpenAPIDocumentsEveryRoute checks that every route the app registers
// is documented with its method, and every documented management path is
// registered. A catch-all route (with * or +) counts as documented when the
// document has an operation of that method under its fixed prefix.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, doc := loadOpenAPI(t)
	documented := map[string]string{} // shape -> path as documented
	for key := range operations(t, doc) {
		method, path, _ := strings.Cut(key, " ")
		documented[method+" "+shape(path)] = path
	}
	registered := map[string]bool{}
	for _, r := range h.srv.App().GetRoutes(true) {
		if r.Method == "HEAD" || r.Method == "USE" {
			continue
		}
		// The catch-alls under /api/ only answer 404 or 405 (TestNoRoute).
		if strings.HasPrefix(r.Path, "/api/") && strings.HasSuffix(r.Path, "/*") {
			continue
		}
		key := r.Method + " " + shape(r.Path)
		registered[key] = true
		if i := strings.IndexAny(key, "*+"); i >= 0 {
			prefix, found := key[:i], false
			for d := range documented {
				found = found || strings.HasPrefix(d, prefix)
			}
			if !found {
				t.Errorf("catch-all route %s %s: no documented operation under it", r.Method, r.Path)
			}
			continue
		}
		if _, ok := documented[key]; !ok {
			t.Errorf("route %s %s is not documented in openapi.json", r.Method, r.Path)
		}
	}
	for key, path := range documented {
		method, _, _ := strings.Cut(key, " ")
		if strings.HasPrefix(path, "/api/") && !registered[key] {
			t.Errorf("openapi.json documents %s %s, which the app does not register", method, path)
		}
	}
}

// TestOpenAPIRoles checks that x-edgecms-role of every management operation
// is the weakest role the role matrix finds for it.
func TestOpenAPIRoles(t *testing.T) {
	t.Parallel()
	_, doc := loadOpenAPI(t)
	ops := operations(t, doc)
	byShape := map[string]operation{}
	for key, op := range ops {
		method, path, _ := strings.Cut(key, " ")
		byShape[method+" "+shape(path)] = op
	}
	for _, c := range matrix(world{}) {
		key := c.req.method + " " + shape(instancePrefix+c.pattern)
		op, ok := byShape[key]
		if !ok {
			t.Errorf("%s %s: not documented", c.req.method, c.pattern)
			continue
		}
		want := c.role
		got := op.Role
		if strings.HasSuffix(c.pattern, "/:action") {
			action := c.req.path[strings.LastIndex(c.req.path, "/")+1:]
			got = op.ActionRoles[action]
			if op.Role != content.RoleEdit {
				t.Errorf("%s (%s): x-edgecms-role = %q, want edit (the weakest action)", key, op.OperationID, op.Role)
			}
		}
		if got != want {
			t.Errorf("%s %s (%s): documented role %q, want %q", c.req.method, c.req.path, op.OperationID, got, want)
		}
	}
}

// TestOpenAPIConsistent checks the document's internal references and the
// conventions every operation follows.
func TestOpenAPIConsistent(t *testing.T) {
	t.Parallel()
	b, doc := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	// Every $ref resolves.
	for _, m := range regexp.MustCompile(`"\$ref":\s*"#/components/([A-Za-z]+)/([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
		var set map[string]json.RawMessage
		switch m[1] {
		case "schemas":
			set = doc.Components.Schemas
		case "responses":
			set = doc.Components.Responses
		case "parameters":
			set = doc.Components.Parameters
		case "headers":
			set = doc.Components.Headers
		}
		if _, ok := set[m[2]]; !ok {
			t.Errorf("$ref #/components/%s/%s does not resolve", m[1], m[2])
		}
	}
	for _, name := range []string{"managementToken", "apiKey", "session"} {
		if _, ok := doc.Components.SecuritySchemes[name]; !ok {
			t.Errorf("security scheme %q missing", name)
		}
	}
	ids := map[string]string{}
	for key, op := range operations(t, doc) {
		method, path, _ := strings.Cut(key, " ")
		if op.OperationID == "" {
			t.Errorf("%s: no operationId", key)
		} else if prev, dup := ids[op.OperationID]; dup {
			t.Errorf("%s and %s share operationId %q", prev, key, op.OperationID)
		}
		ids[op.OperationID] = key
		// Every template variable is declared (on the path or the operation).
		declared := map[string]bool{}
		var params []json.RawMessage
		if raw, ok := doc.Paths[path]["parameters"]; ok {
			json.Unmarshal(raw, &params)
		}
		params = append(params, op.Parameters...)
		for _, p := range params {
			var ps struct {
				Ref  string `json:"$ref"`
				Name string `json:"name"`
				In   string `json:"in"`
			}
			json.Unmarshal(p, &ps)
			if ps.Ref != "" {
				json.Unmarshal(doc.Components.Parameters[strings.TrimPrefix(ps.Ref, "#/components/parameters/")], &ps)
			}
			if ps.In == "path" {
				declared[ps.Name] = true
			}
		}
		for _, v := range openAPIParam.FindAllString(path, -1) {
			if !declared[strings.Trim(v, "{}")] {
				t.Errorf("%s: path parameter %s is not declared", key, v)
			}
		}
		has2xx := false
		for code, r := range op.Responses {
			// A redirect is the success of a route that only redirects.
			if code[0] == '2' || code[0] == '3' && code != "304" {
				has2xx = true
				continue
			}
			if !bytes.Contains(r, []byte(`"$ref"`)) {
				t.Errorf("%s: response %s is not a shared problem response", key, code)
			}
		}
		if !has2xx {
			t.Errorf("%s: no 2xx response", key)
		}
		switch {
		case path == "/api/v1/preview/verify":
			// A site exchanges preview links with its preview key.
			if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0]["apiKey"] == nil || op.Role != "" {
				t.Errorf("%s: security is not apiKey, or has a role", key)
			}
		case strings.HasPrefix(path, "/api/v1/auth/") || path == "/api/v1/instances":
			if op.Security == nil || op.Role != "" {
				t.Errorf("%s: a people route without security, or with a role", key)
			}
		case strings.HasPrefix(path, "/api/v1/"):
			if op.Security == nil || len(*op.Security) != 2 || (*op.Security)[0]["managementToken"] == nil || (*op.Security)[1]["session"] == nil {
				t.Errorf("%s: security is not managementToken or session", key)
			}
			if !op.Role.Valid() {
				t.Errorf("%s: x-edgecms-role %q is not a role", key, op.Role)
			}
			if _, ok := op.Responses["401"]; !ok {
				t.Errorf("%s: 401 not documented", key)
			}
			if op.Role != content.RoleEdit || op.ActionRoles != nil {
				if _, ok := op.Responses["403"]; !ok {
					t.Errorf("%s: role %s but 403 not documented", key, op.Role)
				}
			}
			if op.RequestBody != nil {
				for _, code := range []string{"400", "413"} {
					if _, ok := op.Responses[code]; !ok {
						t.Errorf("%s: has a body but %s is not documented", key, code)
					}
				}
			}
			if strings.Contains(path, "{locale}") {
				if _, ok := op.Responses["404"]; !ok {
					t.Errorf("%s: names a locale but 404 is not documented", key)
				}
			}
			_ = method
		case strings.HasPrefix(path, "/{guid}/{apitype}/"):
			if op.Security == nil || len(*op.Security) != 1 || (*op.Security)[0]["apiKey"] == nil {
				t.Errorf("%s: security is not apiKey", key)
			}
			for _, code := range []string{"304", "401", "403", "404", "429"} {
				if _, ok := op.Responses[code]; !ok {
					t.Errorf("%s: %s not documented", key, code)
				}
			}
		}
	}
}

// TestOpenAPIFetchRoutes checks that the Fetch API read routes are documented.
func TestOpenAPIFetchRoutes(t *testing.T) {
	t.Parallel()
	_, doc := loadOpenAPI(t)
	ops := operations(t, doc)
	for _, key := range []string{
		"GET /{guid}/{apitype}/{locale}/item/{contentID}",
		"GET /{guid}/{apitype}/{locale}/list/{referenceName}",
		"GET /{guid}/{apitype}/{locale}/page/{page}",
		"GET /{guid}/{apitype}/{locale}/sitemap/flat/{channel}",
		"GET /{guid}/{apitype}/{locale}/sitemap/nested/{channel}",
	} {
		if _, ok := ops[key]; !ok {
			t.Errorf("%s is not documented", key)
		}
	}
	var take struct {
		Schema struct {
			Minimum, Maximum, Default int
		} `json:"schema"`
	}
	json.Unmarshal(doc.Components.Parameters["fetchTake"], &take)
	if take.Schema.Minimum != 1 || take.Schema.Maximum != 250 || take.Schema.Default != 10 {
		t.Errorf("fetch take bounds = %+v, want 1..250 default 10", take.Schema)
	}
}

// sessionOnly reports whether op takes only a session (no token).
func sessionOnly(op operation) bool {
	return op.Security != nil && len(*op.Security) == 1 && (*op.Security)[0]["session"] != nil
}

// TestOpenAPIServed checks that the origin serves the document as it is.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b, _ := loadOpenAPI(t)
	r := h.raw("GET", "/api/openapi.json", "", nil)
	if r.status != 200 || !bytes.Equal(r.body, b) {
		t.Errorf("GET /api/openapi.json = %d with %d bytes, want 200 with the %d bytes of openapi.json", r.status, len(r.body), len(b))
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
}

// TestOpenAPIClosedBodies checks that every request body the document
// declares closed (additionalProperties: false) is refused by the handler
// when it carries an unknown member, naming that member.
func TestOpenAPIClosedBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.populate()
	_, doc := loadOpenAPI(t)
	values := map[string]string{
		"guid": h.guid, "locale": "en-us", "contentID": fmt.Sprint(w.article), "pageID": fmt.Sprint(w.parent),
		"zone": "MainContentZone", "id": fmt.Sprint(w.apiKey), "referenceName": "articles", "name": "Article",
		"code": "fr-ca", "action": "publish",
	}
	var keys []string
	ops := operations(t, doc)
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	checked := 0
	for _, key := range keys {
		op := ops[key]
		if op.RequestBody == nil || sessionOnly(op) {
			continue
		}
		var rb struct {
			Content map[string]struct {
				Schema struct {
					Ref string `json:"$ref"`
				} `json:"schema"`
			} `json:"content"`
		}
		json.Unmarshal(*op.RequestBody, &rb)
		name := strings.TrimPrefix(rb.Content["application/json"].Schema.Ref, "#/components/schemas/")
		var schema struct {
			AdditionalProperties *bool `json:"additionalProperties"`
		}
		json.Unmarshal(doc.Components.Schemas[name], &schema)
		if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: body schema %q is not closed, but every handler reads bodies strictly", key, name)
			continue
		}
		method, path, _ := strings.Cut(key, " ")
		path = openAPIParam.ReplaceAllStringFunc(path, func(v string) string { return values[strings.Trim(v, "{}")] })
		before := h.fingerprint()
		r := h.raw(method, path, "Bearer "+h.tokens[content.RoleFull], []byte(`{"zzUnknown": 1}`))
		checkProblem(t, key+" with an unknown member", r, 400, "zzUnknown")
		if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
			t.Errorf("%s with an unknown member changed %v", key, ch)
		}
		checked++
	}
	if checked < 15 {
		t.Errorf("checked %d bodies, want every documented one (at least 15)", checked)
	}
}
