package origin

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/throttle"
	"github.com/edgecms/edgecms/users"
)

// The session cookie and the header that carries a session's CSRF token.
const (
	sessionCookie = "edgecms_session"
	csrfHeader    = "X-CSRF-Token"
	// sessionPath limits the cookie to the API: the Studio's pages and
	// assets never need it.
	sessionPath = "/api/"
)

// Default sign-in throttling: a slow online guess of one account, or from
// one address, while a person who mistypes a few times is not stopped.
var (
	DefaultEmailThrottle = throttle.Policy{Name: "login-email", Max: 5, Window: 15 * time.Minute, Block: 15 * time.Minute,
		Detail: "too many failed sign-ins for this email address; retry after the Retry-After seconds"}
	DefaultAddressThrottle = throttle.Policy{Name: "login-addr", Max: 20, Window: 15 * time.Minute, Block: 15 * time.Minute,
		Detail: "too many failed sign-ins from this address; retry after the Retry-After seconds"}
)

// DefaultTrustedProxies are the proxies whose X-Forwarded-For and
// X-Forwarded-Proto the origin believes when Config.TrustedProxies is
// nil: loopback, where serve's edge forwards from.
var DefaultTrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// peopleRoutes registers the sign-in routes, the instance list of a
// signed-in user, and the instance's user list (full role).
func (s *Server) peopleRoutes() {
	s.app.Post("/api/v1/auth/login", noStore, s.login)
	s.app.Post("/api/v1/auth/logout", noStore, s.logout)
	s.app.Get("/api/v1/auth/me", noStore, s.signedIn, s.me)
	s.app.Get("/api/v1/instances", noStore, s.signedIn, s.listInstances)
	s.app.Post("/api/v1/instances", noStore, s.signedIn, s.createInstance)
}

// instanceUserRoutes registers the routes of an instance's users, under the
// instance's management prefix. Registered before the /:locale/... routes
// (content reserves the code users).
func (s *Server) instanceUserRoutes(r fiber.Router) {
	full := need(content.RoleFull)
	r.Get("/users", full, s.listMembers)
	r.Post("/users", full, s.grantMember)
	r.Delete("/users/:id", full, s.revokeMember)
}

func noStore(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

// signedIn lets through requests with a live session (and, when they
// change something, its CSRF token); management tokens do not sign in.
func (s *Server) signedIn(c *fiber.Ctx) error {
	secret := c.Cookies(sessionCookie)
	if secret == "" {
		return problem.Unauthorizedf("sign in first: this route takes a session, not a management token")
	}
	if _, err := s.session(c, secret); err != nil {
		return err
	}
	return c.Next()
}

func signedInUser(c *fiber.Ctx) users.User { return c.Locals(localUser).(users.User) }

// sessionAnswer is what sign-in and GET /auth/me answer.
type sessionAnswer struct {
	User      users.User           `json:"user"`
	Instances []users.InstanceRole `json:"instances"`
	CSRFToken string               `json:"csrfToken"`
	// IdleTimeout is the idle time after which the session ends, in seconds.
	IdleTimeout int `json:"idleTimeout"`
}

func (s *Server) answerSession(c *fiber.Ctx, u users.User, secret string) error {
	insts, err := s.users.Instances(c.UserContext(), u)
	if err != nil {
		return err
	}
	return c.JSON(sessionAnswer{User: u, Instances: insts, CSRFToken: users.CSRFToken(secret),
		IdleTimeout: int(s.users.Options().IdleTimeout.Seconds())})
}

// login signs a user in: it checks the throttles of the email address and
// the client address, then the password, and starts a new session (a
// session the browser had is ended: the id changes at every sign-in).
func (s *Server) login(c *fiber.Ctx) error {
	// Only JSON: a page of another site can post a form (text/plain,
	// urlencoded) to sign the browser into the attacker's account, but not
	// JSON without a CORS preflight, which the API never grants.
	if !strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEApplicationJSON) {
		return problem.Invalidf("send the credentials as application/json")
	}
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	var errs []problem.FieldError
	if strings.TrimSpace(in.Email) == "" {
		errs = append(errs, problem.FieldError{Field: "email", Reason: "is required"})
	}
	if in.Password == "" {
		errs = append(errs, problem.FieldError{Field: "password", Reason: "is required"})
	}
	if err := problem.Fields(errs); err != nil {
		return err
	}
	ctx := c.UserContext()
	email, addr := strings.ToLower(strings.TrimSpace(in.Email)), s.clientAddr(c)
	if err := s.emailThrottle.Check(ctx, email); err != nil {
		return err
	}
	if err := s.addrThrottle.Check(ctx, addr); err != nil {
		return err
	}
	u, err := s.users.SignIn(ctx, email, in.Password)
	if problem.Is(err, problem.Unauthorized) {
		if ferr := errors.Join(s.emailThrottle.Fail(ctx, email), s.addrThrottle.Fail(ctx, addr)); ferr != nil {
			return ferr
		}
		return err
	}
	if err != nil {
		return err
	}
	if err := s.emailThrottle.Reset(ctx, email); err != nil {
		return err
	}
	if old := c.Cookies(sessionCookie); old != "" {
		if err := s.users.EndSession(ctx, old); err != nil {
			return err
		}
	}
	secret, sess, err := s.users.StartSession(ctx, u.ID)
	if err != nil {
		return err
	}
	s.setSessionCookie(c, secret, sess.ExpiresAt)
	return s.answerSession(c, u, secret)
}

// logout ends the session on the server and clears the cookie. A live
// session needs its CSRF token to be ended (no other site may sign a user
// out); without one, the cookie is cleared all the same.
func (s *Server) logout(c *fiber.Ctx) error {
	if secret := c.Cookies(sessionCookie); secret != "" {
		_, err := s.session(c, secret)
		switch {
		case problem.Is(err, problem.Unauthorized):
		case err != nil:
			return err
		default:
			if err := s.users.EndSession(c.UserContext(), secret); err != nil {
				return err
			}
		}
	}
	s.setSessionCookie(c, "", time.Unix(0, 0))
	return noContent(c)
}

func (s *Server) me(c *fiber.Ctx) error {
	return s.answerSession(c, signedInUser(c), c.Cookies(sessionCookie))
}

// setSessionCookie sets (or, with an expiry in the past, clears) the
// session cookie: HttpOnly, SameSite=Lax, and Secure when the browser
// reached the service over HTTPS.
func (s *Server) setSessionCookie(c *fiber.Ctx, secret string, expires time.Time) {
	ck := &fiber.Cookie{Name: sessionCookie, Value: secret, Path: sessionPath, Expires: expires,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: s.overHTTPS(c)}
	if secret == "" {
		ck.MaxAge = -1
	}
	c.Cookie(ck)
}

// trusted reports whether the peer of c is a proxy whose forwarding
// headers the origin believes.
func (s *Server) trusted(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func peerAddr(c *fiber.Ctx) netip.Addr {
	a, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	return a.Unmap()
}

// overHTTPS reports whether the browser reached the service over HTTPS:
// to this origin directly, or to a trusted proxy that says so in
// X-Forwarded-Proto.
func (s *Server) overHTTPS(c *fiber.Ctx) bool {
	if c.Context().IsTLS() {
		return true
	}
	if !s.trusted(peerAddr(c)) {
		return false
	}
	proto, _, _ := strings.Cut(c.Get(fiber.HeaderXForwardedProto), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

// clientAddr is the address of the client, for throttling: the peer, or,
// when the peer is a trusted proxy, the last address in X-Forwarded-For
// that is not a trusted proxy (each proxy appends the address it saw, so
// the addresses before it may be forged by the client).
func (s *Server) clientAddr(c *fiber.Ctx) string {
	addr := peerAddr(c)
	if !s.trusted(addr) {
		return addr.String()
	}
	hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = a.Unmap()
		if !s.trusted(addr) {
			break
		}
	}
	return addr.String()
}

// listInstances lists the instances the signed-in user may work on, with
// the role there (every instance for an operator).
func (s *Server) listInstances(c *fiber.Ctx) error {
	insts, err := s.users.Instances(c.UserContext(), signedInUser(c))
	if err != nil {
		return err
	}
	return c.JSON(insts)
}

// createInstance creates an instance (operators only): {guid, locales:
// [{code, name?}]}, the first locale the default.
func (s *Server) createInstance(c *fiber.Ctx) error {
	if !signedInUser(c).Operator {
		return problem.Forbiddenf("only operators create instances")
	}
	var in struct {
		Guid    string `json:"guid"`
		Locales []struct {
			Code string `json:"code"`
			Name string `json:"name"`
		} `json:"locales"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	ls := make([]content.Locale, len(in.Locales))
	for i, l := range in.Locales {
		ls[i] = content.Locale{Code: l.Code, Name: l.Name}
		if strings.TrimSpace(l.Name) == "" {
			ls[i].Name = l.Code
		}
	}
	ctx := c.UserContext()
	inst, err := s.store.CreateInstance(ctx, in.Guid, ls)
	if err != nil {
		return err
	}
	locales, err := s.store.Locales(ctx, inst)
	if err != nil {
		return err
	}
	return created(c, fiber.Map{"guid": inst.Guid, "createdAt": inst.CreatedAt, "locales": locales})
}

func (s *Server) listMembers(c *fiber.Ctx) error {
	ms, err := s.users.Members(c.UserContext(), instance(c))
	if err != nil {
		return err
	}
	return c.JSON(ms)
}

// grantMember gives a user a role on the instance: 200 for an existing
// user; with a password, 201 for a user created with it.
func (s *Server) grantMember(c *fiber.Ctx) error {
	var in struct {
		Email    string       `json:"email"`
		Role     content.Role `json:"role"`
		Password *string      `json:"password"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	if !in.Role.Valid() {
		return problem.Field("role", "must be one of edit, publish, manage, full")
	}
	ctx := c.UserContext()
	u, isNew, err := s.memberUser(ctx, in.Email, in.Password)
	if err != nil {
		return err
	}
	if err := s.users.Grant(ctx, u.ID, instance(c), in.Role); err != nil {
		return err
	}
	m := users.Member{User: u, Role: in.Role}
	if isNew {
		return created(c, m)
	}
	return c.JSON(m)
}

// memberUser finds the user of email, or creates one when a password is
// given and no user has that email.
func (s *Server) memberUser(ctx context.Context, email string, password *string) (users.User, bool, error) {
	if _, err := users.NormalizeEmail(email); err != nil {
		return users.User{}, false, err
	}
	u, err := s.users.ByEmail(ctx, email)
	switch {
	case err == nil && password != nil:
		return users.User{}, false, problem.Conflictf("a user with the email %q exists: grant the role without a password", email)
	case err == nil:
		return u, false, nil
	case !problem.Is(err, problem.NotFound):
		return users.User{}, false, err
	case password == nil:
		return users.User{}, false, problem.NotFoundf("no user has the email %q: give a password to create one", email)
	}
	u, err = s.users.Create(ctx, users.NewUser{Email: email, Password: *password})
	return u, true, err
}

func (s *Server) revokeMember(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	if err := s.users.Revoke(c.UserContext(), n, instance(c)); err != nil {
		return err
	}
	return noContent(c)
}
