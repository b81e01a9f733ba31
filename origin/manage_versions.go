package origin

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

// changeContext puts into the request's context what the content store
// records or checks with a change: the actor, the audit note of a request
// that may change something, and the If-Match precondition. A change that
// does not go through the content store's transactions (webhooks, users)
// gets its audit row once it succeeded.
func (s *Server) changeContext(c *fiber.Ctx) error {
	actor := Actor(c)
	ctx := content.WithActor(c.UserContext(), actor)
	var note *content.AuditNote
	if !safeMethod(c.Method()) {
		path := strings.TrimPrefix(c.Path(), "/api/v1/instance/"+c.Params("guid"))
		note = &content.AuditNote{InstanceID: instance(c).ID, Actor: actor, Path: path,
			Action: c.Method() + " " + numbers.ReplaceAllString(path, "/{id}$1")}
		ctx = content.WithAudit(ctx, note)
	}
	if v := c.Get(fiber.HeaderIfMatch); v != "" {
		m, err := content.ParseIfMatch(v)
		if err != nil {
			return err
		}
		ctx = content.WithIfMatch(ctx, m)
	}
	c.SetUserContext(ctx)
	err := c.Next()
	if note != nil && err == nil && c.Response().StatusCode() < 400 {
		// The change is made; a failure to record it is logged, not
		// answered.
		if err := s.store.WriteAudit(context.WithoutCancel(ctx), note); err != nil {
			s.log.Error("audit", "path", c.Path(), "err", err)
		}
	}
	return err
}

// numbers matches the id segments of a path, which an audit action
// replaces, so that actions group by route.
var numbers = regexp.MustCompile(`/[0-9]+(/|$)`)

// setETag answers the version of the copy as its entity tag, which a
// later change sends back in If-Match.
func setETag(c *fiber.Ctx, version int64) {
	c.Set(fiber.HeaderETag, `"`+strconv.FormatInt(version, 10)+`"`)
}

// getWithETag answers GET of one item or page copy by its id, with the
// ETag of the version it holds (what a later change sends in If-Match).
func getWithETag[T any](load func(context.Context, content.Instance, string, int64) (T, error), version func(T) int64) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := id(c, "id")
		if err != nil {
			return err
		}
		v, err := load(c.UserContext(), instance(c), locale(c), n)
		if err != nil {
			return err
		}
		setETag(c, version(v))
		return c.JSON(v)
	}
}

// versionRoutes registers the versions, restore and discard routes of
// items (kind "items") or pages under the locale group.
func (s *Server) versionRoutes(l fiber.Router, edit fiber.Handler) {
	l.Get("/items/:id/versions", edit, knownQuery("take", "skip"), s.resolveLocale, s.listVersions(s.store.ItemVersions))
	l.Get("/items/:id/versions/:version", edit, s.resolveLocale, s.getVersion(func(ctx context.Context, inst content.Instance, loc string, id, v int64) (any, error) {
		return s.store.ItemVersion(ctx, inst, loc, id, v)
	}))
	l.Post("/items/:id/versions/:version/restore", edit, s.resolveLocale, s.restoreVersion(s.store.RestoreItemVersion))
	l.Post("/items/:id/discard", edit, s.resolveLocale, s.discard(s.store.DiscardItem))
	l.Get("/pages/:id/versions", edit, knownQuery("take", "skip"), s.resolveLocale, s.listVersions(s.store.PageVersions))
	l.Get("/pages/:id/versions/:version", edit, s.resolveLocale, s.getVersion(func(ctx context.Context, inst content.Instance, loc string, id, v int64) (any, error) {
		return s.store.PageVersion(ctx, inst, loc, id, v)
	}))
	l.Post("/pages/:id/versions/:version/restore", edit, s.resolveLocale, s.restoreVersion(s.store.RestorePageVersion))
	l.Post("/pages/:id/discard", edit, s.resolveLocale, s.discard(s.store.DiscardPage))
}

func (s *Server) listVersions(call func(context.Context, content.Instance, string, int64, int, int) (content.VersionPage, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := id(c, "id")
		if err != nil {
			return err
		}
		take, skip, err := paging(c, 50, 500)
		if err != nil {
			return err
		}
		p, err := call(c.UserContext(), instance(c), locale(c), n, take, skip)
		if err != nil {
			return err
		}
		return c.JSON(p)
	}
}

// copyVersion reads the item or page id and the version of a versions path.
func copyVersion(c *fiber.Ctx) (copyID, version int64, err error) {
	if copyID, err = id(c, "id"); err != nil {
		return 0, 0, err
	}
	version, err = id(c, "version")
	return copyID, version, err
}

func (s *Server) getVersion(call func(context.Context, content.Instance, string, int64, int64) (any, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, v, err := copyVersion(c)
		if err != nil {
			return err
		}
		out, err := call(c.UserContext(), instance(c), locale(c), n, v)
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

func (s *Server) restoreVersion(call func(context.Context, content.Instance, string, int64, int64) (content.Status, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, v, err := copyVersion(c)
		if err != nil {
			return err
		}
		st, err := call(c.UserContext(), instance(c), locale(c), n, v)
		if err != nil {
			return err
		}
		setETag(c, st.VersionID)
		return c.JSON(st)
	}
}

func (s *Server) discard(call func(context.Context, content.Instance, string, int64) (content.Status, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := id(c, "id")
		if err != nil {
			return err
		}
		st, err := call(c.UserContext(), instance(c), locale(c), n)
		if err != nil {
			return err
		}
		setETag(c, st.VersionID)
		return c.JSON(st)
	}
}

// listAudit answers who did what in the instance, newest first.
func (s *Server) listAudit(c *fiber.Ctx) error {
	take, skip, err := paging(c, 50, 500)
	if err != nil {
		return err
	}
	q := content.AuditQuery{Actor: c.Query("actor"), Take: take, Skip: skip}
	for name, dst := range map[string]**time.Time{"fromDate": &q.From, "toDate": &q.To} {
		if v := c.Query(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return problem.Field(name, "must be an RFC 3339 date like 2026-01-31T09:30:00Z")
			}
			*dst = &t
		}
	}
	if q.From != nil && q.To != nil && !q.From.Before(*q.To) {
		return problem.Field("toDate", "must be after fromDate")
	}
	p, err := s.store.Audit(c.UserContext(), instance(c), q)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// batch takes one workflow action on many items and pages, all or nothing.
func (s *Server) batch(c *fiber.Ctx) error {
	if c.Get(fiber.HeaderIfMatch) != "" {
		return problem.Field("If-Match", "a batch names many copies; If-Match applies to one")
	}
	var in struct {
		Action string  `json:"action"`
		Items  []int64 `json:"items"`
		Pages  []int64 `json:"pages"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	a, err := content.ParseBatchAction(in.Action)
	if err != nil {
		return err
	}
	if err := allow(c, a.Role()); err != nil {
		return err
	}
	out, err := s.store.ApplyBatch(c.UserContext(), instance(c), locale(c), content.Batch{Action: a, Items: in.Items, Pages: in.Pages})
	if err != nil {
		return err
	}
	return c.JSON(out)
}
