package origin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/throttle"
	"github.com/edgecms/edgecms/users"
	"github.com/edgecms/edgecms/webhooks"
	"github.com/edgecms/edgecms/webhooks/egress"
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

	// users makes the accounts of signed-in tests; sessions holds a
	// session of a user of each role on the instance, made on first use.
	users    *users.Store
	sessions map[content.Role]session

	// Set by newFullHarness: the origin's webhooks store, its asset store,
	// and a receiver of webhook deliveries that answers 204.
	hooks    *webhooks.Store
	objects  *store.Memory
	receiver *httptest.Server
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
	h := &harness{t: t, db: db, store: store, inst: inst, guid: inst.Guid, tokens: map[content.Role]string{},
		users: users.NewStore(db, users.Options{}), sessions: map[content.Role]session{}}
	for _, r := range content.Roles {
		_, secret, err := store.CreateToken(ctx, inst, "test "+string(r), r)
		if err != nil {
			t.Fatalf("CreateToken(%s): %v", r, err)
		}
		h.tokens[r] = secret
	}
	h.srv = origin.New(origin.Config{SecretKey: testSecret, TokenThrottle: untilMillions}, store, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	return h
}

// untilMillions is the harnesses' management-token throttle: tests that
// try a wrong token on every route (TestAuthentication) send hundreds from
// one address. TestTokenGuessingIsThrottled tests the default.
var untilMillions = throttle.Policy{Name: "token-addr", Max: 1 << 30, Window: time.Minute, Block: time.Minute}

// testSecret is the secret key of the tests' origins (it signs preview
// links).
var testSecret = bytes.Repeat([]byte{5}, 32)

// newFullHarness is a harness whose origin also serves the webhook routes
// (deliveries may reach loopback, where its receiver listens) and the asset
// routes (bytes in memory), with the default body limit.
func newFullHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	hooks, err := webhooks.NewStore(h.db, webhooks.Options{Key: bytes.Repeat([]byte{9}, webhooks.KeySize),
		Policy: egress.NewPolicy(netip.MustParsePrefix("127.0.0.0/8"))})
	if err != nil {
		t.Fatalf("webhooks.NewStore: %v", err)
	}
	h.hooks, h.objects = hooks, store.NewMemory(nil)
	h.receiver = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.receiver.Close)
	h.srv = origin.New(origin.Config{Webhooks: h.hooks, Assets: h.objects, SecretKey: testSecret, TokenThrottle: untilMillions}, h.store,
		slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	return h
}

// testPNG encodes a width x height grey PNG.
func testPNG(width, height int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, width, height))); err != nil {
		panic(err) // encoding to memory does not fail
	}
	return b.Bytes()
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
// /api/v1/instance/{guid}; body is sent as is when a string, []byte or
// typedBody, and as JSON otherwise (nil: no body).
type request struct {
	method string
	path   string
	body   any
}

// typedBody is a request body sent as is with its own Content-Type (a
// multipart form, say), where other bodies are sent as application/json.
type typedBody struct {
	contentType string
	data        []byte
}

// contentType is the Content-Type a request body is sent with.
func contentType(body any) string {
	if b, ok := body.(typedBody); ok {
		return b.contentType
	}
	return "application/json"
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
	case typedBody:
		return b.data
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
// value (none when empty), and a body as JSON. A body over the limit goes
// through oversize.
func (h *harness) raw(method, path, authorization string, body []byte) response {
	h.t.Helper()
	return h.rawTyped(method, path, authorization, "application/json", body)
}

// rawTyped is raw with the body's Content-Type.
func (h *harness) rawTyped(method, path, authorization, ctype string, body []byte) response {
	h.t.Helper()
	hdr := http.Header{}
	if authorization != "" {
		hdr.Set("Authorization", authorization)
	}
	return h.sendHeaders(method, path, hdr, ctype, body)
}

// sendHeaders sends a request with the given headers and a body of Content-Type
// ctype. A multipart body goes to a real listener: the server reads such
// a body with the request, and App().Test reports its read error instead
// of the answer it writes.
func (h *harness) sendHeaders(method, path string, hdr http.Header, ctype string, body []byte) response {
	h.t.Helper()
	if len(body) > bodyLimit {
		return h.oversize(method, path, hdr.Get("Authorization"), len(body))
	}
	if strings.HasPrefix(ctype, "multipart/") {
		return h.overTCP(method, path, hdr, ctype, body)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
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
// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

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
	// The body follows, as clients send it; the server may answer and
	// close before it has all of it.
	go io.Copy(conn, io.LimitReader(zeros{}, int64(size)))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return readResponse(h.t, method+" "+path, res)
}

// overTCP sends a request to a real listener.
func (h *harness) overTCP(method, path string, hdr http.Header, ctype string, body []byte) response {
	h.t.Helper()
	req, err := http.NewRequest(method, "http://"+h.listen()+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
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

// session is a signed-in browser: its session cookie and CSRF token.
type session struct{ cookie, csrf string }

// testPassword is the password of the users tests make.
const testPassword = "a long enough password"

// signIn signs in and returns the session, failing the test unless the
// sign-in succeeds.
func (h *harness) signIn(email, password string) session {
	h.t.Helper()
	r := h.raw("POST", "/api/v1/auth/login", "", bodyBytes(h.t, map[string]string{"email": email, "password": password}))
	if r.status != 200 {
		h.t.Fatalf("sign in as %s = %s, want 200", email, r)
	}
	var ans struct {
		CSRFToken string `json:"csrfToken"`
	}
	r.decode(h.t, &ans)
	ck := sessionCookieOf(h.t, r)
	return session{cookie: ck.Value, csrf: ans.CSRFToken}
}

// sessionCookieOf returns the session cookie an answer sets.
func sessionCookieOf(t *testing.T, r response) *http.Cookie {
	t.Helper()
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == "edgecms_session" {
			return ck
		}
	}
	t.Fatalf("no edgecms_session cookie in %v", r.header.Values("Set-Cookie"))
	return nil
}

// newUser creates a user, failing the test on error.
func (h *harness) newUser(email string, operator bool) users.User {
	h.t.Helper()
	u, err := h.users.Create(context.Background(), users.NewUser{Email: email, Password: testPassword, Operator: operator})
	if err != nil {
		h.t.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// member returns a signed-in session of a user with role on the
// harness's instance, made on first use.
func (h *harness) member(role content.Role) session {
	h.t.Helper()
	if s, ok := h.sessions[role]; ok {
		return s
	}
	email := string(role) + "-member@example.com"
	u := h.newUser(email, false)
	if err := h.users.Grant(context.Background(), u.ID, h.inst, role); err != nil {
		h.t.Fatal(err)
	}
	s := h.signIn(email, testPassword)
	h.sessions[role] = s
	return s
}

// asUser sends rq to this instance's management API as a signed-in user
// with role, with the session's CSRF token.
func (h *harness) asUser(role content.Role, rq request) response {
	h.t.Helper()
	return h.withSession(h.member(role), true, rq)
}

// withSession sends rq to this instance's management API with the
// session's cookie, and its CSRF token when csrf is set.
func (h *harness) withSession(s session, csrf bool, rq request) response {
	h.t.Helper()
	return h.sendHeaders(rq.method, h.base()+rq.path, s.headers(csrf), contentType(rq.body), bodyBytes(h.t, rq.body))
}

// headers are the headers of a request in the session.
func (s session) headers(csrf bool) http.Header {
	hdr := http.Header{"Cookie": {"edgecms_session=" + s.cookie}}
	if csrf {
		hdr.Set("X-CSRF-Token", s.csrf)
	}
	return hdr
}

// withToken sends rq to this instance's management API with a bearer token.
func (h *harness) withToken(token string, rq request) response {
	h.t.Helper()
	return h.rawTyped(rq.method, h.base()+rq.path, "Bearer "+token, contentType(rq.body), bodyBytes(h.t, rq.body))
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
	// schema/003_webhooks.sql
	"webhooks", "webhook_deliveries", "webhook_awaiting",
	// schema/004_media.sql
	"assets", "galleries", "gallery_assets", "redirections", "redirection_versions",
	"sync_changes", "sync_stamped", "sync_floors",
	// schema/011_users.sql (not sessions, which a request in a session
	// touches, nor throttle, which failed sign-ins change)
	"users", "user_roles",
}

// fingerprintSQL reads the fingerprint of every table of fingerprintTables
// in one query (one snapshot, one round trip): tests take hundreds of
// fingerprints.
var fingerprintSQL = func() string {
	parts := make([]string, len(fingerprintTables))
	for i, tb := range fingerprintTables {
		parts[i] = `SELECT '` + tb + `', count(*), coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM ` + tb + ` x`
	}
	return strings.Join(parts, " UNION ALL ")
}()

// fingerprint returns, per table, its row count and a hash of its rows, so
// that any insert, update or delete shows; and, when the harness has an
// asset store, the keys and ETags of its objects under "objects".
func (h *harness) fingerprint() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	rows, err := h.db.Query(fingerprintSQL)
	if err != nil {
		h.t.Fatalf("fingerprint: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var tb, sum string
		var n int
		if err := rows.Scan(&tb, &n, &sum); err != nil {
			h.t.Fatalf("fingerprint: %v", err)
		}
		out[tb] = fmt.Sprintf("%d rows, %s", n, sum)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatalf("fingerprint: %v", err)
	}
	if len(out) != len(fingerprintTables) {
		h.t.Fatalf("fingerprint: %d tables of %d", len(out), len(fingerprintTables))
	}
	if h.objects != nil {
		var objs []string
		err := h.objects.List(context.Background(), "", func(i store.Info) error {
			objs = append(objs, i.Key+" "+i.ETag)
			return nil
		})
		if err != nil {
			h.t.Fatalf("fingerprint objects: %v", err)
		}
		sort.Strings(objs)
		out["objects"] = strings.Join(objs, "|")
	}
	return out
}

// changedTables lists the tables (and "objects", the asset store) whose
// fingerprint differs.
func changedTables(before, after map[string]string) []string {
	var out []string
	for _, tb := range append(fingerprintTables, "objects") {
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
	articleVersion int64 // the version article was created at
	parentVersion  int64 // the version parent was created at
	footerPage     int64 // a page in channel legal (en-us)
	component      int64 // a Hero component in parent's MainContentZone (en-us)
	apiKey         int64
	spareToken     int64
	member         int64 // a user with the edit role on the instance

	// Filled only on a newFullHarness:
	hookURL        string // where the receiver listens
	webhook        string // a signed webhook with two test deliveries
	delivery       string // the older of them
	plain          string // an unsigned, disabled webhook with one test delivery
	plainDelivery  string
	listToken      string // the token of a list of webhooks by one
	historyToken   string // the token of webhook's history by one
	asset, spare   int64  // assets: asset is in gallery, spare in none
	used           int64  // an asset that an item's image field shows
	gallery, shown int64  // galleries: "Photos" holds asset, "Shown" is in an item's gallery field
	redirect       int64  // a redirection /old -> /new
	otherRedirect  int64  // a redirection /gone -> /
	foreignWebhook string // a webhook, an asset, a gallery and a redirection of another instance
	foreignAsset   int64
	foreignGallery int64
	foreignRedir   int64
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
	w.article, w.articleVersion = st.ContentID, st.VersionID
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
	_, err = s.SetChannelPreviewURL(ctx, inst, "website", ptr("https://site.example/api/preview?slug={path}&key={previewLink}"))
	check("preview URL", err)
	p, err := s.CreatePage(ctx, inst, "en-us", content.PageInput{Title: ptr("Home"), PageModel: ptr("Main")})
	check("page Home", err)
	w.parent, w.parentVersion = p.PageID, p.VersionID
	p, err = s.CreatePage(ctx, inst, "en-us", content.PageInput{Title: ptr("About"), PageModel: ptr("Main"), ParentPageID: raw(fmt.Sprint(w.parent))})
	check("page About", err)
	w.child = p.PageID
	p, err = s.CreatePage(ctx, inst, "en-us", content.PageInput{Title: ptr("Contact"), PageModel: ptr("Main")})
	check("page Contact", err)
	w.lone = p.PageID
	_, err = s.CreateChannel(ctx, inst, "legal")
	check("channel legal", err)
	p, err = s.CreatePage(ctx, inst, "en-us", content.PageInput{Title: ptr("Legal"), PageModel: ptr("Main"), Channel: ptr("legal")})
	check("page Legal", err)
	w.footerPage = p.PageID
	w.component, _, err = s.AddComponent(ctx, inst, "en-us", w.parent, "MainContentZone", "Hero", map[string]json.RawMessage{"heading": raw(`"Hi"`)})
	check("component", err)

	k, _, err := s.CreateAPIKey(ctx, inst, content.APIKeyInput{Name: ptr("site"), Type: "fetch"})
	check("api key", err)
	w.apiKey = k.ID
	tok, _, err := s.CreateToken(ctx, inst, "spare", content.RoleEdit)
	check("token", err)
	w.spareToken = tok.ID
	u := h.newUser("member@example.com", false)
	check("grant", h.users.Grant(ctx, u.ID, inst, content.RoleEdit))
	w.member = u.ID
	if h.hooks != nil {
		h.populateWebhooks(&w)
	}
	if h.objects != nil {
		h.populateMedia(&w)
	}
	return w
}

// elsewhere returns a second instance, made on first use.
func (h *harness) elsewhere() content.Instance {
	h.t.Helper()
	inst, err := h.store.Instance(context.Background(), "elsewhere")
	if err == nil {
		return inst
	}
	inst, err = h.store.CreateInstance(context.Background(), "elsewhere", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		h.t.Fatalf("populate: instance elsewhere: %v", err)
	}
	return inst
}

// populateWebhooks adds the webhooks of a world, and their test
// deliveries (which reach the receiver).
func (h *harness) populateWebhooks(w *world) {
	t := h.t
	t.Helper()
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("populate: %s: %v", what, err)
		}
	}
	w.hookURL = h.receiver.URL + "/hook"
	wh, _, err := h.hooks.Save(ctx, h.inst, webhooks.Input{Name: ptr("Site"), URL: ptr(w.hookURL),
		ContentPublishEvents: ptr(true), SecureDeliveryEnabled: ptr(true)})
	check("webhook", err)
	w.webhook = wh.RowKey
	d, err := h.hooks.Test(ctx, h.inst, w.webhook)
	check("test delivery", err)
	w.delivery = d.RowKey
	_, err = h.hooks.Test(ctx, h.inst, w.webhook)
	check("test delivery", err)
	wh, _, err = h.hooks.Save(ctx, h.inst, webhooks.Input{Name: ptr("Plain"), URL: ptr(w.hookURL + "/plain"), Enabled: ptr(false)})
	check("webhook", err)
	w.plain = wh.RowKey
	d, err = h.hooks.Test(ctx, h.inst, w.plain)
	check("test delivery", err)
	w.plainDelivery = d.RowKey

	list, err := h.hooks.Webhooks(ctx, h.inst, 1, "")
	check("list webhooks", err)
	hist, err := h.hooks.History(ctx, h.inst, w.webhook, webhooks.HistoryQuery{Take: "1"})
	check("history", err)
	if list.Token == nil || hist.Token == nil {
		t.Fatalf("populate: lists by one have no next token: %+v, %+v", list, hist)
	}
	w.listToken, w.historyToken = *list.Token, *hist.Token

	wh, _, err = h.hooks.Save(ctx, h.elsewhere(), webhooks.Input{URL: ptr(w.hookURL)})
	check("webhook elsewhere", err)
	w.foreignWebhook = wh.RowKey
}

// putAsset stores the bytes of an image in the harness's asset store and
// records an asset of inst for them, as an upload does.
func (h *harness) putAsset(inst content.Instance, name string, body []byte) content.Asset {
	h.t.Helper()
	ctx := context.Background()
	file, err := content.InspectAsset(body)
	if err != nil {
		h.t.Fatalf("populate: asset %s: %v", name, err)
	}
	if _, err := h.objects.Put(ctx, store.Object{Key: file.Key(inst.Guid), Body: body, ContentType: file.ContentType,
		CacheControl: "public, max-age=31536000, immutable"}); err != nil {
		h.t.Fatalf("populate: asset %s: %v", name, err)
	}
	a, err := h.store.CreateAsset(ctx, inst, content.NewAsset{File: file, FileName: name}, func(context.Context) error { return nil })
	if err != nil {
		h.t.Fatalf("populate: asset %s: %v", name, err)
	}
	return a
}

// populateMedia adds the assets, galleries and redirections of a world,
// and an item (container photos) that uses one asset and one gallery.
func (h *harness) populateMedia(w *world) {
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
	w.asset = h.putAsset(inst, "beans.png", testPNG(2, 2)).ID
	w.spare = h.putAsset(inst, "spare.png", testPNG(3, 2)).ID
	w.used = h.putAsset(inst, "used.png", testPNG(4, 2)).ID
	g, err := s.CreateGallery(ctx, inst, content.GalleryInput{Name: ptr("Photos")})
	check("gallery Photos", err)
	w.gallery = g.ID
	_, err = s.AddGalleryAssets(ctx, inst, w.gallery, []int64{w.asset})
	check("gallery assets", err)
	g, err = s.CreateGallery(ctx, inst, content.GalleryInput{Name: ptr("Shown")})
	check("gallery Shown", err)
	w.shown = g.ID

	_, err = s.CreateModel(ctx, inst, content.Model{Name: "Photo", Kind: "content", Fields: content.Fields{
		{Name: "image", Type: content.TypeImage}, {Name: "gallery", Type: content.TypeGallery}}})
	check("model Photo", err)
	_, err = s.CreateContainer(ctx, inst, "photos", "Photo")
	check("container photos", err)
	_, err = s.CreateItem(ctx, inst, "en-us", "photos", map[string]json.RawMessage{
		"image": raw(fmt.Sprintf(`{"assetID": %d}`, w.used)), "gallery": raw(fmt.Sprintf(`{"galleryID": %d}`, w.shown))})
	check("item photo", err)

	r, err := s.CreateRedirection(ctx, inst, content.RedirectionInput{OriginURL: ptr("/old"), DestinationURL: ptr("/new")})
	check("redirection", err)
	w.redirect = r.ID
	r, err = s.CreateRedirection(ctx, inst, content.RedirectionInput{OriginURL: ptr("/gone"), DestinationURL: ptr("/")})
	check("redirection", err)
	w.otherRedirect = r.ID

	other := h.elsewhere()
	w.foreignAsset = h.putAsset(other, "theirs.png", testPNG(5, 2)).ID
	g, err = s.CreateGallery(ctx, other, content.GalleryInput{Name: ptr("Theirs")})
	check("gallery elsewhere", err)
	w.foreignGallery = g.ID
	r, err = s.CreateRedirection(ctx, other, content.RedirectionInput{OriginURL: ptr("/theirs"), DestinationURL: ptr("/")})
	check("redirection elsewhere", err)
	w.foreignRedir = r.ID
}
