package origin

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/users"
)

// Locals keys set by the management middleware.
const (
	localInstance  = "instance"
	localPrincipal = "principal"
	localUser      = "user"
)

// principal is who makes a management request: a token or a signed-in
// user, with the role it has on the request's instance.
type principal struct {
	role  content.Role
	actor string // "token:<id>" or "user:<id>"
}

// Actor returns who makes the request, as changes record it: "user:<id>"
// for a signed-in user, "token:<id>" for a management token, "" before the
// request is authenticated.
func Actor(c *fiber.Ctx) string {
	if p, ok := c.Locals(localPrincipal).(principal); ok {
		return p.actor
	}
	return ""
}

// authenticate finds who makes a management request, by its bearer token
// or, without an Authorization header, its session cookie, and their role
// on the instance in the path; it stores the instance and the principal
// for the handlers.
func (s *Server) authenticate(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	if h == "" {
		if secret := c.Cookies(sessionCookie); secret != "" {
			return s.authenticateSession(c, secret)
		}
		return problem.Unauthorizedf("missing Authorization: Bearer <management token> (or sign in)")
	}
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return problem.Unauthorizedf("the Authorization header must be Bearer <management token>")
	}
	guid := c.Params("guid")
	t, err := s.tokenAuth(c, strings.TrimSpace(secret))
	if err != nil {
		return err
	}
	c.Locals(localInstance, content.Instance{ID: t.InstanceID, Guid: strings.ToLower(guid)})
	c.Locals(localPrincipal, principal{role: t.Role, actor: fmt.Sprintf("token:%d", t.ID)})
	return c.Next()
}

// authenticateSession authenticates a request by its session: the session
// must be live, a request that changes something must carry the session's
// CSRF token, and the user needs a role on the instance in the path.
func (s *Server) authenticateSession(c *fiber.Ctx, secret string) error {
	u, err := s.session(c, secret)
	if err != nil {
		return err
	}
	inst, role, err := s.users.RoleOn(c.UserContext(), u, s.store, c.Params("guid"))
	if err != nil {
		return err
	}
	c.Locals(localInstance, inst)
	c.Locals(localPrincipal, principal{role: role, actor: u.Actor()})
	return c.Next()
}

// session returns the user of a live session, after checking the CSRF
// token of a request that changes something, and stores the user for the
// handlers.
func (s *Server) session(c *fiber.Ctx, secret string) (users.User, error) {
	_, u, err := s.users.Session(c.UserContext(), secret)
	if err != nil {
		return users.User{}, err
	}
	if !safeMethod(c.Method()) && !users.CheckCSRF(secret, c.Get(csrfHeader)) {
		return users.User{}, problem.Forbiddenf("a signed-in request that changes something needs the %s header given at sign-in", csrfHeader)
	}
	c.Locals(localUser, u)
	return u, nil
}

// safeMethod reports whether a request of method changes nothing, and so
// needs no CSRF token.
func safeMethod(method string) bool {
	return method == fiber.MethodGet || method == fiber.MethodHead || method == fiber.MethodOptions
}

// need returns a middleware that lets through principals whose role
// includes role.
func need(role content.Role) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := allow(c, role); err != nil {
			return err
		}
		return c.Next()
	}
}

// allow checks the request's principal against role.
func allow(c *fiber.Ctx, role content.Role) error {
	p := c.Locals(localPrincipal).(principal)
	if !p.role.Includes(role) {
		who := "the token has"
		if strings.HasPrefix(p.actor, "user:") {
			who = "you have"
		}
		return problem.Forbiddenf("this needs the %s role; %s %s", role, who, p.role)
	}
	return nil
}

func instance(c *fiber.Ctx) content.Instance { return c.Locals(localInstance).(content.Instance) }
