package origin

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/problem"
)

// apiPrefix is where the management API, sign-in and preview links live.
// Nothing under it is a Fetch API path, so a request there that no route
// takes answers 404 (or 405), never the Fetch API's answer about its
// apitype.
const apiPrefix = "/api/"

// routeTable knows the registered routes' patterns and methods, to tell a
// path that no route has (404) from one that another method has (405 with
// Allow).
type routeTable struct {
	routes []routePattern
}

type routePattern struct {
	method   string
	segments []string
}

// newRouteTable reads the app's routes but middleware and catch-alls.
func newRouteTable(app *fiber.App) *routeTable {
	t := &routeTable{}
	for _, r := range app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, apiPrefix) || strings.HasSuffix(r.Path, "*") {
			continue
		}
		t.routes = append(t.routes, routePattern{method: r.Method, segments: splitPath(r.Path)})
	}
	return t
}

func splitPath(p string) []string { return strings.Split(strings.Trim(p, "/"), "/") }

// allowed lists the methods that have a route for path, sorted.
func (t *routeTable) allowed(path string) []string {
	segs := splitPath(path)
	var out []string
	for _, r := range t.routes {
		if matchSegments(r.segments, segs) && !slices.Contains(out, r.method) {
			out = append(out, r.method)
		}
	}
	slices.Sort(out)
	return out
}

// matchSegments matches a path against a route's segments: a :param
// matches any one non-empty segment.
func matchSegments(pattern, path []string) bool {
	if len(pattern) != len(path) {
		return false
	}
	for i, p := range pattern {
		if strings.HasPrefix(p, ":") {
			if path[i] == "" {
				return false
			}
			continue
		}
		if p != path[i] {
			return false
		}
	}
	return true
}

// noRoute answers a request under /api/ that no route takes: 405 with
// Allow when another method has a route for the path, 404 otherwise,
// both no-store (handleError: every /api/ error is).
func (s *Server) noRoute(c *fiber.Ctx) error {
	if allow := s.routeTable.allowed(c.Path()); len(allow) > 0 {
		c.Set(fiber.HeaderAllow, strings.Join(allow, ", "))
		return problem.New(problem.MethodNotAllowed, "%s is not allowed on %s; allowed: %s", c.Method(), c.Path(), strings.Join(allow, ", "))
	}
	return problem.NotFoundf("no route %s %s", c.Method(), c.Path())
}

// knownQuery refuses query parameters other than names (400), so that a
// misspelt filter is not silently ignored.
func knownQuery(names ...string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var bad string
		c.Context().QueryArgs().VisitAll(func(k, _ []byte) {
			if bad == "" && !slices.Contains(names, string(k)) {
				bad = string(k)
			}
		})
		if bad != "" {
			return problem.Field(bad, "unknown query parameter; this route takes %s", strings.Join(names, ", "))
		}
		return c.Next()
	}
}
