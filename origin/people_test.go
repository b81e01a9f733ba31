package origin_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/testcert"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/throttle"
	"github.com/edgecms/edgecms/users"
)

// withConfig replaces the harness's origin by one with cfg.
func (h *harness) withConfig(cfg origin.Config) *harness {
	h.srv = origin.New(cfg, h.store, slog.New(slog.NewTextHandler(testWriter{h.t}, nil)))
	return h
}

func loginBody(email, password string) []byte {
	return []byte(fmt.Sprintf(`{"email": %q, "password": %q}`, email, password))
}

func TestLogin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	other, err := h.store.CreateInstance(context.Background(), "other-site", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	u := h.newUser("Ann@Example.com", false)
	if err := h.users.Grant(context.Background(), u.ID, h.inst, content.RolePublish); err != nil {
		t.Fatal(err)
	}

	r := h.raw("POST", "/api/v1/auth/login", "", loginBody("ann@example.COM", testPassword))
	if r.status != 200 {
		t.Fatalf("login = %s", r)
	}
	var ans struct {
		User struct {
			ID       int64  `json:"id"`
			Email    string `json:"email"`
			Operator bool   `json:"operator"`
		} `json:"user"`
		Instances   []users.InstanceRole `json:"instances"`
		CSRFToken   string               `json:"csrfToken"`
		IdleTimeout int                  `json:"idleTimeout"`
	}
	r.decode(t, &ans)
	if ans.User.ID != u.ID || ans.User.Email != "Ann@Example.com" || ans.User.Operator || ans.CSRFToken == "" || ans.IdleTimeout != 3600 {
		t.Errorf("login answer = %s", r.body)
	}
	if len(ans.Instances) != 1 || ans.Instances[0] != (users.InstanceRole{Guid: h.guid, Role: content.RolePublish}) {
		t.Errorf("login instances = %+v, want %s with publish", ans.Instances, h.guid)
	}
	if strings.Contains(string(r.body), testPassword) || strings.Contains(string(r.body), "argon2") {
		t.Errorf("login answer shows the password or its hash: %s", r.body)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("login Cache-Control = %q, want no-store", cc)
	}
	ck := sessionCookieOf(t, r)
	if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure || ck.Path != "/api/" || len(ck.Value) < 40 {
		t.Errorf("session cookie = %+v: want HttpOnly, SameSite=Lax, not Secure over plain HTTP, Path /api/, a long value", ck)
	}
	if ck.Expires.IsZero() {
		t.Errorf("session cookie has no expiry")
	}
	s := session{cookie: ck.Value, csrf: ans.CSRFToken}

	// GET /auth/me answers the same for the session, and 401 without one.
	me := h.sendHeaders("GET", "/api/v1/auth/me", s.headers(false), "", nil)
	if me.status != 200 || !strings.Contains(string(me.body), ans.CSRFToken) {
		t.Errorf("GET /auth/me = %s", me)
	}
	checkProblem(t, "GET /auth/me without a session", h.raw("GET", "/api/v1/auth/me", "", nil), 401, "")

	// Wrong credentials: the same 401 for an unknown email and a wrong password.
	var details []string
	for _, body := range [][]byte{loginBody("ann@example.com", "wrong password!"), loginBody("nobody@example.com", testPassword)} {
		r := h.raw("POST", "/api/v1/auth/login", "", body)
		doc := checkProblem(t, "login with "+string(body), r, 401, "")
		details = append(details, fmt.Sprint(doc["detail"]))
		if len(r.header.Values("Set-Cookie")) > 0 {
			t.Errorf("a failed login sets %v", r.header.Values("Set-Cookie"))
		}
	}
	if details[0] != details[1] {
		t.Errorf("failed logins say %q and %q: they must not tell known emails from unknown ones", details[0], details[1])
	}
	for _, tt := range []struct{ body, field string }{
		{`{"email": "", "password": "x"}`, "email"},
		{`{"email": "ann@example.com"}`, "password"},
		{`{"email": "ann@example.com", "password": "x", "remember": true}`, "remember"},
		{`[]`, ""},
	} {
		checkProblem(t, "login with "+tt.body, h.raw("POST", "/api/v1/auth/login", "", []byte(tt.body)), 400, tt.field)
	}

	// Only JSON signs in: a cross-site form post cannot sign the browser in.
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		r := h.sendHeaders("POST", "/api/v1/auth/login", http.Header{}, ct, loginBody("ann@example.com", testPassword))
		checkProblem(t, "login as "+ct, r, 400, "")
		if len(r.header.Values("Set-Cookie")) > 0 {
			t.Errorf("a login as %q set a cookie", ct)
		}
	}

	// A session reads without a CSRF token, and changes only with it.
	before := h.fingerprint()
	read := h.withSession(s, false, request{"GET", "/locales", nil})
	if read.status != 200 {
		t.Errorf("GET /locales in a session without a CSRF token = %s, want 200", read)
	}
	create := request{"POST", "/redirections", map[string]any{"originUrl": "/a", "destinationUrl": "/b"}}
	checkProblem(t, "a change in a session without X-CSRF-Token", h.withSession(s, false, create), 403, "")
	wrong := s
	wrong.csrf = users.CSRFToken("another session")
	checkProblem(t, "a change in a session with another session's token", h.withSession(wrong, true, create), 403, "")
	if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
		t.Errorf("refused changes changed %v", ch)
	}
	if r := h.withSession(s, true, create); r.status != 201 {
		t.Errorf("a change in a session with its CSRF token = %s, want 201", r)
	}

	// The role of the user decides, as for tokens.
	checkProblem(t, "a manage route as a publisher", h.withSession(s, true, request{"POST", "/channels", map[string]string{"name": "x"}}), 403, "")

	// The session is refused on an instance where the user has no role,
	// on every route, and changes nothing there.
	before = h.fingerprint()
	for _, c := range matrix(world{}) {
		r := h.sendHeaders(c.req.method, "/api/v1/instance/"+other.Guid+c.req.path, s.headers(true), contentType(c.req.body), bodyBytes(t, c.req.body))
		checkProblem(t, "a session on another instance: "+c.req.String(), r, 403, "")
	}
	checkProblem(t, "a session on an unknown instance", h.sendHeaders("GET", "/api/v1/instance/no-such-site/locales", s.headers(false), "", nil), 403, "")
	if ch := changedTables(before, h.fingerprint()); len(ch) > 0 {
		t.Errorf("requests on another instance changed %v", ch)
	}

	// A bearer token wins over a cookie: a request with both is the token's.
	both := s.headers(true)
	both.Set("Authorization", "Bearer "+h.tokens[content.RoleEdit])
	checkProblem(t, "a publish route with an edit token and a publisher's cookie",
		h.sendHeaders("POST", h.base()+"/redirections", both, "application/json", bodyBytes(t, create.body)), 403, "")
}

// TestLoginRotatesAndLogoutEnds checks that every sign-in makes a new
// session id (ending the one the browser had) and that signing out ends
// the session on the server: its cookie no longer works anywhere.
func TestLoginRotatesAndLogoutEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.member(content.RoleEdit)
	r := h.sendHeaders("POST", "/api/v1/auth/login", first.headers(false), "application/json", loginBody("edit-member@example.com", testPassword))
	if r.status != 200 {
		t.Fatalf("second login = %s", r)
	}
	second := sessionCookieOf(t, r).Value
	if second == first.cookie {
		t.Fatal("a second sign-in kept the session id")
	}
	checkProblem(t, "the session before the second sign-in", h.withSession(first, false, request{"GET", "/locales", nil}), 401, "")

	var ans struct {
		CSRFToken string `json:"csrfToken"`
	}
	r.decode(t, &ans)
	s := session{cookie: second, csrf: ans.CSRFToken}
	if r := h.withSession(s, false, request{"GET", "/locales", nil}); r.status != 200 {
		t.Fatalf("GET /locales in the new session = %s", r)
	}
	// Signing out of a live session needs its CSRF token.
	checkProblem(t, "logout without X-CSRF-Token", h.sendHeaders("POST", "/api/v1/auth/logout", s.headers(false), "", nil), 403, "")
	r = h.sendHeaders("POST", "/api/v1/auth/logout", s.headers(true), "", nil)
	if r.status != 204 {
		t.Fatalf("logout = %s, want 204", r)
	}
	if ck := sessionCookieOf(t, r); ck.Value != "" || ck.MaxAge >= 0 && !ck.Expires.Before(time.Now()) {
		t.Errorf("logout cookie = %+v, want it cleared", ck)
	}
	// The browser may keep the cookie (a copy of it, say): the server has
	// ended the session all the same.
	checkProblem(t, "the session after logout", h.withSession(s, true, request{"GET", "/locales", nil}), 401, "")
	checkProblem(t, "GET /auth/me after logout", h.sendHeaders("GET", "/api/v1/auth/me", s.headers(false), "", nil), 401, "")
	var n int
	if err := h.db.Get(&n, `SELECT count(*) FROM sessions`); err != nil || n != 0 {
		t.Errorf("sessions after logout: %d (%v), want 0", n, err)
	}
	// Signing out again, or without a session, only clears the cookie.
	for _, hdr := range []http.Header{s.headers(true), {}} {
		if r := h.sendHeaders("POST", "/api/v1/auth/logout", hdr, "", nil); r.status != 204 {
			t.Errorf("logout without a live session = %s, want 204", r)
		}
	}
}

// TestSessionIdleExpiry checks the idle timeout and the absolute lifetime
// of sessions with the store's clock.
func TestSessionIdleExpiry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	us := users.NewStore(h.db, users.Options{IdleTimeout: 10 * time.Minute, Lifetime: time.Hour})
	us.Now = func() time.Time { return now }
	h.withConfig(origin.Config{Users: us})
	s := h.member(content.RoleEdit)
	locales := request{"GET", "/locales", nil}
	for range 5 {
		now = now.Add(9 * time.Minute)
		if r := h.withSession(s, false, locales); r.status != 200 {
			t.Fatalf("a session used every 9 minutes, at %s: %s", now, r)
		}
	}
	now = now.Add(10 * time.Minute)
	doc := checkProblem(t, "a session idle for 10 minutes", h.withSession(s, false, locales), 401, "")
	if d, _ := doc["detail"].(string); !strings.Contains(d, "expired") {
		t.Errorf("idle session detail = %q, want it to say the session expired", d)
	}

	delete(h.sessions, content.RoleEdit)
	s = h.signIn("edit-member@example.com", testPassword)
	for range 6 {
		now = now.Add(9 * time.Minute)
		if r := h.withSession(s, false, locales); r.status != 200 {
			t.Fatalf("a session used every 9 minutes, at %s: %s", now, r)
		}
	}
	now = now.Add(7 * time.Minute) // 61 minutes after sign-in
	checkProblem(t, "a session past its lifetime", h.withSession(s, false, locales), 401, "")
}

// TestLoginThrottle checks that repeated failures for one email, or from
// one address, answer 429 with Retry-After, even for the right password,
// and that every origin on the database shares the counts.
func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.newUser("ann@example.com", false)
	h.newUser("bob@example.com", false)
	cfg := origin.Config{
		EmailThrottle:   throttle.Policy{Name: "login-email", Max: 3, Window: time.Minute, Block: 2 * time.Minute},
		AddressThrottle: throttle.Policy{Name: "login-addr", Max: 5, Window: time.Minute, Block: 3 * time.Minute},
	}
	a := h.withConfig(cfg).srv
	b := origin.New(cfg, h.store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	login := func(srv *origin.Server, email, password string) response {
		h.srv = srv
		return h.raw("POST", "/api/v1/auth/login", "", loginBody(email, password))
	}
	for i, srv := range []*origin.Server{a, b, a} {
		checkProblem(t, fmt.Sprintf("failure %d", i+1), login(srv, "ann@example.com", "wrong password!"), 401, "")
	}
	for _, srv := range []*origin.Server{a, b} {
		r := login(srv, "ANN@example.com", testPassword)
		checkProblem(t, "the right password after 3 failures", r, 429, "")
		if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 100 || ra > 120 {
			t.Errorf("Retry-After = %q, want about 120 seconds", r.header.Get("Retry-After"))
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("429 Cache-Control = %q", cc)
		}
	}
	// Another email from the same address still signs in, until the
	// address has failed 5 times in all.
	if r := login(b, "bob@example.com", testPassword); r.status != 200 {
		t.Errorf("another email = %s, want 200", r)
	}
	checkProblem(t, "failure 4 from the address", login(a, "carl@example.com", "wrong password!"), 401, "")
	checkProblem(t, "failure 5 from the address", login(b, "dora@example.com", "wrong password!"), 401, "")
	r := login(a, "bob@example.com", testPassword)
	checkProblem(t, "the right password from a blocked address", r, 429, "")
	if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra < 150 || ra > 180 {
		t.Errorf("Retry-After = %q, want about 180 seconds", r.header.Get("Retry-After"))
	}
}

// TestLoginAddressBehindProxies checks whose address is throttled: the
// peer's, or with a trusted proxy in front, the client's that the proxy
// appended to X-Forwarded-For (the entries before it may be forged).
func TestLoginAddressBehindProxies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := origin.Config{AddressThrottle: throttle.Policy{Name: "login-addr", Max: 1, Window: time.Minute, Block: time.Minute}}
	fail := func(forwardedFor string) response {
		hdr := http.Header{}
		if forwardedFor != "" {
			hdr.Set("X-Forwarded-For", forwardedFor)
		}
		return h.sendHeaders("POST", "/api/v1/auth/login", hdr, "application/json", loginBody("x@example.com", "wrong password!"))
	}
	// App().Test's peer is 0.0.0.0: trusted here, and X-Forwarded-For counts.
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("10.0.0.0/8")}
	h.withConfig(cfg)
	checkProblem(t, "a first failure from 203.0.113.7", fail("198.51.100.1, 203.0.113.7, 10.1.1.1"), 401, "")
	checkProblem(t, "a second, forging another first hop", fail("192.0.2.99, 203.0.113.7"), 429, "")
	checkProblem(t, "another client behind the same proxies", fail("203.0.113.8, 10.1.1.1"), 401, "")

	// An untrusted peer's X-Forwarded-For is ignored: its own address counts.
	cfg.TrustedProxies = []netip.Prefix{}
	h.withConfig(cfg)
	checkProblem(t, "a first failure from the untrusted peer", fail("203.0.113.50"), 401, "")
	checkProblem(t, "another claimed address from the same peer", fail("203.0.113.51"), 429, "")
}

// TestSessionCookieSecure checks when the session cookie is Secure: under
// TLS, or behind a trusted proxy that says the browser used HTTPS.
func TestSessionCookieSecure(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.newUser("ann@example.com", false)
	body := loginBody("ann@example.com", testPassword)
	login := func(hdr http.Header) *http.Cookie {
		t.Helper()
		r := h.sendHeaders("POST", "/api/v1/auth/login", hdr, "application/json", body)
		if r.status != 200 {
			t.Fatalf("login = %s", r)
		}
		return sessionCookieOf(t, r)
	}
	// App().Test's peer (0.0.0.0) is not a trusted proxy.
	if ck := login(http.Header{"X-Forwarded-Proto": {"https"}}); ck.Secure {
		t.Error("an untrusted peer's X-Forwarded-Proto: https made the cookie Secure")
	}
	// A real connection from loopback: a trusted proxy by default.
	over := func(proto string) *http.Cookie {
		t.Helper()
		r := h.overTCP("POST", "/api/v1/auth/login", http.Header{"X-Forwarded-Proto": {proto}}, "application/json", body)
		if r.status != 200 {
			t.Fatalf("login over TCP = %s", r)
		}
		return sessionCookieOf(t, r)
	}
	if ck := over("https"); !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
		t.Errorf("behind a trusted proxy over https: cookie %+v, want Secure, HttpOnly, SameSite=Lax", ck)
	}
	if ck := over("http"); ck.Secure {
		t.Errorf("behind a trusted proxy over http: cookie %+v, want not Secure", ck)
	}

	// Under TLS.
	certPEM, keyPEM := testcert.New(t)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := origin.New(origin.Config{}, h.store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go srv.App().Listener(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := client.Post("https://"+ln.Addr().String()+"/api/v1/auth/login", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	r := readResponse(t, "login over TLS", res)
	if ck := sessionCookieOf(t, r); !ck.Secure || !ck.HttpOnly {
		t.Errorf("under TLS: cookie %+v, want Secure and HttpOnly", ck)
	}
}

// TestInstancesRoutes checks the instance list of a signed-in user and
// instance creation by operators.
func TestInstancesRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.newUser("op@example.com", true)
	op := h.signIn("op@example.com", testPassword)
	ed := h.member(content.RoleEdit)

	list := func(s session) string {
		r := h.sendHeaders("GET", "/api/v1/instances", s.headers(false), "", nil)
		if r.status != 200 {
			t.Fatalf("GET /api/v1/instances = %s", r)
		}
		return string(r.body)
	}
	if got := list(ed); got != `[{"guid":"test-site","role":"edit"}]` {
		t.Errorf("an editor's instances = %s", got)
	}
	create := []byte(`{"guid": "new-site", "locales": [{"code": "en-us", "name": "English"}, {"code": "de-de"}]}`)
	checkProblem(t, "an editor creates an instance", h.sendHeaders("POST", "/api/v1/instances", ed.headers(true), "application/json", create), 403, "")
	checkProblem(t, "an operator without the CSRF token", h.sendHeaders("POST", "/api/v1/instances", op.headers(false), "application/json", create), 403, "")
	checkProblem(t, "a token", h.raw("POST", "/api/v1/instances", "Bearer "+h.tokens[content.RoleFull], create), 401, "")
	checkProblem(t, "a token lists", h.raw("GET", "/api/v1/instances", "Bearer "+h.tokens[content.RoleFull], nil), 401, "")
	r := h.sendHeaders("POST", "/api/v1/instances", op.headers(true), "application/json", create)
	if r.status != 201 || !strings.Contains(string(r.body), `"code":"de-de","name":"de-de"`) {
		t.Fatalf("an operator creates an instance = %s, want 201 with its locales", r)
	}
	checkProblem(t, "the same guid again", h.sendHeaders("POST", "/api/v1/instances", op.headers(true), "application/json", create), 409, "")
	checkProblem(t, "a bad guid", h.sendHeaders("POST", "/api/v1/instances", op.headers(true), "application/json",
		[]byte(`{"guid": "Bad Guid!", "locales": [{"code": "en-us"}]}`)), 400, "guid")
	if got := list(op); got != `[{"guid":"new-site","role":"full"},{"guid":"test-site","role":"full"}]` {
		t.Errorf("an operator's instances = %s", got)
	}
	// The operator works on the new instance with full control.
	r = h.sendHeaders("POST", "/api/v1/instance/new-site/tokens", op.headers(true), "application/json", []byte(`{"name": "ci", "role": "edit"}`))
	if r.status != 201 {
		t.Errorf("an operator creates a token on the new instance = %s", r)
	}
	checkProblem(t, "an operator on an unknown instance", h.sendHeaders("GET", "/api/v1/instance/no-such-site/locales", op.headers(false), "", nil), 404, "")
}

// TestInstanceUsers checks granting and revoking roles through the API.
func TestInstanceUsers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.newUser("bob@example.com", false)
	full := h.member(content.RoleFull)
	grant := func(body string) response {
		return h.withSession(full, true, request{"POST", "/users", body})
	}
	r := grant(`{"email": "BOB@example.com", "role": "edit"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"role":"edit"`) {
		t.Fatalf("grant to an existing user = %s", r)
	}
	bob := h.signIn("bob@example.com", testPassword)
	if r := h.withSession(bob, false, request{"GET", "/locales", nil}); r.status != 200 {
		t.Errorf("bob after the grant = %s", r)
	}
	checkProblem(t, "bob lists users", h.withSession(bob, false, request{"GET", "/users", nil}), 403, "")
	checkProblem(t, "a password for an existing user", grant(`{"email": "bob@example.com", "role": "edit", "password": "a long new password"}`), 409, "")
	checkProblem(t, "an unknown user without a password", grant(`{"email": "carl@example.com", "role": "edit"}`), 404, "")
	checkProblem(t, "a bad role", grant(`{"email": "bob@example.com", "role": "owner"}`), 400, "role")
	checkProblem(t, "a bad email", grant(`{"email": "bob", "role": "edit"}`), 400, "email")
	checkProblem(t, "a short password", grant(`{"email": "carl@example.com", "role": "edit", "password": "short"}`), 400, "password")
	r = grant(`{"email": "carl@example.com", "role": "manage", "password": "carl's long password"}`)
	if r.status != 201 {
		t.Fatalf("grant creating a user = %s", r)
	}
	var carl users.Member
	r.decode(t, &carl)
	h.signIn("carl@example.com", "carl's long password")

	r = h.withSession(full, false, request{"GET", "/users", nil})
	var ms []users.Member
	r.decode(t, &ms)
	var got []string
	for _, m := range ms {
		got = append(got, m.Email+":"+string(m.Role))
	}
	if strings.Join(got, " ") != "bob@example.com:edit carl@example.com:manage full-member@example.com:full" {
		t.Errorf("GET /users = %s", r.body)
	}
	if r := h.withSession(full, true, request{"DELETE", fmt.Sprintf("/users/%d", carl.ID), nil}); r.status != 204 {
		t.Errorf("revoke = %s", r)
	}
	checkProblem(t, "revoke again", h.withSession(full, true, request{"DELETE", fmt.Sprintf("/users/%d", carl.ID), nil}), 404, "")
	carlSession := h.signIn("carl@example.com", "carl's long password")
	checkProblem(t, "carl after the revoke", h.withSession(carlSession, false, request{"GET", "/locales", nil}), 403, "")
}

func TestActor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := h.member(content.RoleEdit)
	u, err := h.users.ByEmail(context.Background(), "edit-member@example.com")
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := h.store.Tokens(context.Background(), h.inst)
	if err != nil {
		t.Fatal(err)
	}
	if got := origin.ActorOf(h.srv, h.guid, s.headers(false)); got != fmt.Sprintf("user:%d", u.ID) {
		t.Errorf("actor of a session = %q, want user:%d", got, u.ID)
	}
	hdr := http.Header{"Authorization": {"Bearer " + h.tokens[content.RoleEdit]}}
	if got := origin.ActorOf(h.srv, h.guid, hdr); got != fmt.Sprintf("token:%d", tokens[0].ID) {
		t.Errorf("actor of a token = %q, want token:%d", got, tokens[0].ID)
	}
}
