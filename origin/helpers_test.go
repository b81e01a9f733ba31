package origin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/problem"
)

// harness is one origin on a fresh database with one instance (locales en-us
// and fr-ca) and a management token of every role.
type harness struct {
	t      *testing.T
	db     *sqlx.DB
	store  *content.Store
	srv    *origin.Server
	inst   content.Instance
	guid   string
	tokens map[content.Role]string
	addr   string // address of the real listener, once started
}

const testGuid = "test-site"

// newHarness makes a fresh database, an instance and its tokens, and an origin on them.
func newHarness(t *testing.T) *harness {
	t.Helper()
	db, _ := pgtest.New(t)
	store := content.NewStore(db)
	ctx := context.Background()
	inst, err := store.CreateInstance(ctx, testGuid, []content.Locale{
		{Code: "en-us", Name: "English"},
		{Code: "fr-ca", Name: "Français (Canada)"},
	})
	if err != nil {
		t.Fatalf("CreateInstance: %v", err)
	}
	h := &harness{t: t, db: db, store: store, inst: inst, guid: inst.Guid, tokens: map[content.Role]string{}}
	for _, r := range content.Roles {
		_, secret, err := store.CreateToken(ctx, inst, "test "+string(r), r)
		if err != nil {
			t.Fatalf("CreateToken(%s): %v", r, err)
		}
		h.tokens[r] = secret
	}
	h.srv = origin.New(origin.Config{}, store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	return h
}

// testWriter sends the origin's log lines to the test log, so that a 5xx
// shows its internal error.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// response is an answer of the origin.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) String() string {
	return fmt.Sprintf("%d %s", r.status, r.body)
}

// decode unmarshals the body into v, failing the test on error.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// object decodes the body as a JSON object.
func (r response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

// request describes one management request: the path is relative to
// /api/v1/instance/{guid}; body is sent as is when a string or []byte, and
// as JSON otherwise (nil: no body).
type request struct {
	method string
	path   string
	body   any
}

func (rq request) String() string { return rq.method + " " + rq.path }

// bodyBytes encodes the request body.
func bodyBytes(t *testing.T, body any) []byte {
	t.Helper()
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	case []byte:
		return b
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("marshal %v: %v", body, err)
	}
	return b
}

// bodyLimit is the origin's default request body limit.
const bodyLimit = 2 << 20

// raw sends a request to an absolute path with the given Authorization header
// value (none when empty). A body over the limit goes through oversize.
func (h *harness) raw(method, path, authorization string, body []byte) response {
	h.t.Helper()
	if len(body) > bodyLimit {
		return h.oversize(method, path, authorization, len(body))
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	res, err := h.srv.App().Test(req, -1)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return readResponse(h.t, method+" "+path, res)
}

// oversize sends the head of a request announcing a body of size bytes to a
// real listener, and reads the answer. The server must refuse it from the
// Content-Length alone. (App().Test reports the server's read error instead
// of the 413 the server writes, and sending the whole body races the
// server's close of the connection.)
func (h *harness) oversize(method, path, authorization string, size int) response {
	h.t.Helper()
	conn, err := net.Dial("tcp", h.listen())
	if err != nil {
		h.t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: origin.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, size)
	if authorization != "" {
		head += "Authorization: " + authorization + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return readResponse(h.t, method+" "+path, res)
}

func readResponse(t *testing.T, what string, res *http.Response) response {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: read body: %v", what, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// as sends rq to this instance's management API with the token of role.
func (h *harness) as(role content.Role, rq request) response {
	h.t.Helper()
	return h.withToken(h.tokens[role], rq)
}

// withToken sends rq to this instance's management API with a bearer token.
func (h *harness) withToken(token string, rq request) response {
	h.t.Helper()
	return h.raw(rq.method, h.base()+rq.path, "Bearer "+token, bodyBytes(h.t, rq.body))
}

// listen serves the origin on a loopback port, once, until the test ends,
// and returns its address.
func (h *harness) listen() string {
	h.t.Helper()
	if h.addr != "" {
		return h.addr
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.srv.App().Listener(ln) }()
	h.t.Cleanup(func() {
		if err := h.srv.Shutdown(context.Background()); err != nil {
			h.t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			h.t.Errorf("listener: %v", err)
		}
	})
	h.addr = ln.Addr().String()
	return h.addr
}

func (h *harness) base() string { return "/api/v1/instance/" + h.guid }

// must sends rq with the full-control token and fails the test unless the
// answer has status want. It returns the answer.
func (h *harness) must(want int, method, path string, body any) response {
	h.t.Helper()
	r := h.as(content.RoleFull, request{method, path, body})
	if r.status != want {
		h.t.Fatalf("%s %s = %s, want status %d", method, path, r, want)
	}
	return r
}

// checkProblem checks that r is an RFC 9457 problem document of status want,
// and, when field is not empty, that it names field among its errors.
func checkProblem(t *testing.T, what string, r response, want int, field string) map[string]any {
	t.Helper()
	if r.status != want {
		t.Errorf("%s: status = %s, want %d", what, r, want)
	}
	if ct := r.header.Get("Content-Type"); ct != problem.ContentType {
		t.Errorf("%s: Content-Type = %q, want %q", what, ct, problem.ContentType)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Errorf("%s: body %q is not JSON: %v", what, r.body, err)
		return nil
	}
	for _, k := range []string{"type", "title", "detail"} {
		if s, ok := doc[k].(string); !ok || s == "" {
			t.Errorf("%s: problem member %q = %v, want a non-empty string", what, k, doc[k])
		}
	}
	if st, _ := doc["status"].(float64); int(st) != r.status {
		t.Errorf("%s: problem status = %v, want %d", what, doc["status"], r.status)
	}
	if field != "" {
		var fields []string
		errs, _ := doc["errors"].([]any)
		for _, e := range errs {
			m, _ := e.(map[string]any)
			f, _ := m["field"].(string)
			if reason, _ := m["reason"].(string); reason == "" {
				t.Errorf("%s: field error %v has no reason", what, m)
			}
			fields = append(fields, f)
		}
		found := false
		for _, f := range fields {
			if f == field {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problem errors name fields %q, want %q among them (body %s)", what, fields, field, r.body)
		}
	}
	return doc
}

// fingerprintTables are the tables whose contents a failing request must not change.
var fingerprintTables = []string{
	"instances", "locales", "api_keys", "tokens", "models", "containers", "items", "item_copies",
	"channels", "page_models", "pages", "page_copies", "events",
}

// fingerprint returns, per table, its row count and a hash of its rows, so
// that any insert, update or delete shows.
func (h *harness) fingerprint() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, tb := range fingerprintTables {
		var n int
		var sum string
		q := `SELECT count(*), coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM ` + tb + ` x`
		if err := h.db.QueryRowx(q).Scan(&n, &sum); err != nil {
			h.t.Fatalf("fingerprint %s: %v", tb, err)
		}
		out[tb] = fmt.Sprintf("%d rows, %s", n, sum)
	}
	return out
}

// changedTables lists the tables whose fingerprint differs.
func changedTables(before, after map[string]string) []string {
	var out []string
	for _, tb := range fingerprintTables {
		if before[tb] != after[tb] {
			out = append(out, tb)
		}
	}
	return out
}

// world is content a test works on, made through the store: models,
// containers, items, a page model, pages with a component.
type world struct {
	article, extra int64 // items in container articles, with copies in en-us
	deleted        int64 // an item of articles whose en-us copy is deleted
	parent, child  int64 // pages in website, child under parent (en-us)
	lone           int64 // a page without children (en-us)
	component      int64 // a Hero component in parent's MainContentZone (en-us)
	apiKey         int64
	spareToken     int64
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func ptr[T any](v T) *T { return &v }

// populate fills the harness's instance with a world.
func (h *harness) populate() world {
	t := h.t
	t.Helper()
	ctx := context.Background()
	s, inst := h.store, h.inst
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("populate: %s: %v", what, err)
		}
	}
	_, err := s.CreateModel(ctx, inst, content.Model{Name: "Category", Kind: "content", Fields: content.Fields{{Name: "title", Type: content.TypeText}}})
	check("model Category", err)
	_, err = s.CreateContainer(ctx, inst, "categories", "Category")
	check("container categories", err)
	_, err = s.CreateModel(ctx, inst, content.Model{Name: "Article", Kind: "content", Fields: content.Fields{
		{Name: "title", Type: content.TypeText, Required: true},
		{Name: "slug", Type: content.TypeText},
		{Name: "body", Type: content.TypeHTML},
		{Name: "count", Type: content.TypeNumber},
		{Name: "code", Type: content.TypeText, Shared: true},
		{Name: "category", Type: content.TypeItem, Container: "categories"},
	}})
	check("model Article", err)
	_, err = s.CreateModel(ctx, inst, content.Model{Name: "Hero", Kind: "component", Fields: content.Fields{{Name: "heading", Type: content.TypeText}}})
	check("model Hero", err)
	_, err = s.CreateModel(ctx, inst, content.Model{Name: "Unused", Kind: "content", Fields: content.Fields{{Name: "x", Type: content.TypeText}}})
	check("model Unused", err)
	_, err = s.CreateContainer(ctx, inst, "articles", "Article")
	check("container articles", err)
	_, err = s.CreateContainer(ctx, inst, "empty", "Article")
	check("container empty", err)

	var w world
	st, err := s.CreateItem(ctx, inst, "en-us", "articles", map[string]json.RawMessage{"title": raw(`"First"`), "slug": raw(`"first"`)})
	check("item", err)
	w.article = st.ContentID
	st, err = s.CreateItem(ctx, inst, "en-us", "articles", map[string]json.RawMessage{"title": raw(`"Second"`), "slug": raw(`"second"`)})
	check("item", err)
	w.extra = st.ContentID
	st, err = s.CreateItem(ctx, inst, "en-us", "articles", map[string]json.RawMessage{"title": raw(`"Gone"`)})
	check("item", err)
	w.deleted = st.ContentID
	check("delete item", s.DeleteItem(ctx, inst, "en-us", w.deleted))

	_, err = s.CreatePageModel(ctx, inst, "Main", []string{"MainContentZone", "Sidebar"})
	check("page model Main", err)
	_, err = s.CreatePageModel(ctx, inst, "Spare", []string{"Zone"})
	check("page model Spare", err)
	p, err := s.CreatePage(ctx, inst, "en-us", content.PageInput{Title: ptr("Home"), PageModel: ptr("Main")})
	check("page Home", err)
	w.parent = p.PageID
	p, err = s.CreatePage(ctx, inst, "en-us", content.PageInput{Title: ptr("About"), PageModel: ptr("Main"), ParentPageID: raw(fmt.Sprint(w.parent))})
	check("page About", err)
	w.child = p.PageID
	p, err = s.CreatePage(ctx, inst, "en-us", content.PageInput{Title: ptr("Contact"), PageModel: ptr("Main")})
	check("page Contact", err)
	w.lone = p.PageID
	w.component, _, err = s.AddComponent(ctx, inst, "en-us", w.parent, "MainContentZone", "Hero", map[string]json.RawMessage{"heading": raw(`"Hi"`)})
	check("component", err)

	k, _, err := s.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: ptr("site"), Type: "fetch"})
	check("api key", err)
	w.apiKey = k.ID
	tok, _, err := s.CreateToken(ctx, inst, "spare", content.RoleEdit)
	check("token", err)
	w.spareToken = tok.ID
	return w
}
