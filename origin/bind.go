package origin

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
)

// Most management routes map one request onto one store call: read the
// route's key from the path, decode the JSON body, call, answer with the
// result. The functions below make such a handler from the call itself, so
// that each of those routes is one line where it is registered and every
// one of them reads keys and bodies, and answers, the same way. Routes that
// do more (paging, secrets shown once, caches to drop) keep handlers of
// their own.

// pathKey reads a route's key from its path.
type pathKey[K any] func(*fiber.Ctx) (K, error)

// idParam reads the path parameter name as a positive integer.
func idParam(name string) pathKey[int64] {
	return func(c *fiber.Ctx) (int64, error) { return id(c, name) }
}

// textParam reads the path parameter name as it is (the store checks it).
func textParam(name string) pathKey[string] {
	return func(c *fiber.Ctx) (string, error) { return c.Params(name), nil }
}

// listAll answers with everything call lists in the instance.
func listAll[Out any](call func(context.Context, content.Instance) (Out, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := call(c.UserContext(), instance(c))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// createFrom decodes the body, creates with call and answers 201 with the
// result.
func createFrom[In, Out any](call func(context.Context, content.Instance, In) (Out, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var in In
		if err := decode(c, &in); err != nil {
			return err
		}
		out, err := call(c.UserContext(), instance(c), in)
		if err != nil {
			return err
		}
		return created(c, out)
	}
}

// getBy answers with what call finds under the route's key.
func getBy[K, Out any](key pathKey[K], call func(context.Context, content.Instance, K) (Out, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		k, err := key(c)
		if err != nil {
			return err
		}
		out, err := call(c.UserContext(), instance(c), k)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// updateBy decodes the body, applies it with call to what the route's key
// names and answers with the result.
func updateBy[K, In, Out any](key pathKey[K], call func(context.Context, content.Instance, K, In) (Out, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		k, err := key(c)
		if err != nil {
			return err
		}
		var in In
		if err := decode(c, &in); err != nil {
			return err
		}
		out, err := call(c.UserContext(), instance(c), k, in)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// deleteBy deletes with call what the route's key names and answers 204.
func deleteBy[K any](key pathKey[K], call func(context.Context, content.Instance, K) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		k, err := key(c)
		if err != nil {
			return err
		}
		if err := call(c.UserContext(), instance(c), k); err != nil {
			return err
		}
		return noContent(c)
	}
}

// The routes under /:locale address an item or a page by its id in the
// locale that resolveLocale checked.

// localeCall is a store call on one item or page in one locale.
type localeCall[In, Out any] func(ctx context.Context, inst content.Instance, locale string, id int64, in In) (Out, error)

// updateInLocale decodes the body, applies it with call to the item or
// page :id in the route's locale and answers with the result.
func updateInLocale[In, Out any](call localeCall[In, Out]) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := id(c, "id")
		if err != nil {
			return err
		}
		var in In
		if err := decode(c, &in); err != nil {
			return err
		}
		out, err := call(c.UserContext(), instance(c), locale(c), n, in)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// actionInLocale takes the workflow action the route's :action names on the
// item or page :id in the route's locale, once the token is known to be
// allowed it, and answers with the new state.
func actionInLocale[Out any](call localeCall[content.Action, Out]) fiber.Handler {
	return func(c *fiber.Ctx) error {
		a, err := action(c)
		if err != nil {
			return err
		}
		n, err := id(c, "id")
		if err != nil {
			return err
		}
		out, err := call(c.UserContext(), instance(c), locale(c), n, a)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// getInLocale answers with the item or page :id in the route's locale.
func getInLocale[Out any](call func(ctx context.Context, inst content.Instance, locale string, id int64) (Out, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := id(c, "id")
		if err != nil {
			return err
		}
		out, err := call(c.UserContext(), instance(c), locale(c), n)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// deleteInLocale deletes the item or page :id in the route's locale and
// answers 204.
func deleteInLocale(call func(ctx context.Context, inst content.Instance, locale string, id int64) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := id(c, "id")
		if err != nil {
			return err
		}
		if err := call(c.UserContext(), instance(c), locale(c), n); err != nil {
			return err
		}
		return noContent(c)
	}
}
