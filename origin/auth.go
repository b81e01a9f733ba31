package origin

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

// Locals keys set by the management middleware.
const (
	localInstance = "instance"
	localToken    = "token"
)

// authenticate checks the bearer token of a management request against the
// instance in the path and stores the instance and token for the handlers.
func (s *Server) authenticate(c *fiber.Ctx) error {
	h := c.Get(fiber.HeaderAuthorization)
	scheme, secret, ok := strings.Cut(h, " ")
	if h == "" {
		return problem.Unauthorizedf("missing Authorization: Bearer <management token>")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return problem.Unauthorizedf("the Authorization header must be Bearer <management token>")
	}
	guid := c.Params("guid")
	t, err := s.store.Authenticate(c.UserContext(), guid, strings.TrimSpace(secret))
	if err != nil {
		return err
	}
	c.Locals(localInstance, content.Instance{ID: t.InstanceID, Guid: strings.ToLower(guid)})
	c.Locals(localToken, t)
	return c.Next()
}

// need returns a middleware that lets through tokens whose role includes role.
func need(role content.Role) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := allow(c, role); err != nil {
			return err
		}
		return c.Next()
	}
}

// allow checks the request's token against role.
func allow(c *fiber.Ctx, role content.Role) error {
	t := c.Locals(localToken).(content.Token)
	if !t.Role.Includes(role) {
		return problem.Forbiddenf("this needs the %s role; the token has %s", role, t.Role)
	}
	return nil
}

func instance(c *fiber.Ctx) content.Instance { return c.Locals(localInstance).(content.Instance) }
