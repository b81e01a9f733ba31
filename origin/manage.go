package origin

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

// manageRoutes registers the management API under /api/v1/instance/:guid.
// Routes with fixed first segments come before the /:locale/... routes;
// content refuses locale codes that equal those segments.
func (s *Server) manageRoutes(r fiber.Router) {
	r.Use(noStore, s.authenticate, refuseNULQuery, s.changeContext)
	edit, publish, manage, full := need(content.RoleEdit), need(content.RolePublish), need(content.RoleManage), need(content.RoleFull)

	r.Get("/locales", edit, listAll(s.store.Locales))
	r.Post("/locales", manage, s.createLocale)
	r.Patch("/locales/:code", manage, updateBy(textParam("code"), s.store.UpdateLocale))
	r.Delete("/locales/:code", manage, deleteBy(textParam("code"), s.store.DeleteLocale))

	r.Get("/tokens", full, listAll(s.store.Tokens))
	r.Post("/tokens", full, s.createToken)
	r.Delete("/tokens/:id", full, deleteBy(idParam("id"), s.store.DeleteToken))

	r.Get("/apikeys", manage, listAll(s.store.APIKeys))
	r.Post("/apikeys", manage, s.createAPIKey)
	r.Patch("/apikeys/:id", manage, s.updateAPIKey)
	r.Delete("/apikeys/:id", manage, s.deleteAPIKey)

	r.Get("/models", edit, listAll(s.store.Models))
	r.Post("/models", manage, s.createModel)
	r.Get("/models/:name", edit, s.getModel)
	r.Put("/models/:name", manage, knownQuery("force"), s.updateModel)
	r.Delete("/models/:name", manage, deleteBy(textParam("name"), s.store.DeleteModel))

	r.Get("/containers", edit, listAll(s.store.Containers))
	r.Post("/containers", manage, s.createContainer)
	r.Get("/containers/:ref", edit, getBy(textParam("ref"), s.store.Container))
	r.Delete("/containers/:ref", manage, deleteBy(textParam("ref"), s.store.DeleteContainer))
	r.Put("/containers/:ref/order", publish, s.reorderContainer)

	r.Get("/page-models", edit, listAll(s.store.PageModels))
	r.Post("/page-models", manage, s.createPageModel)
	r.Get("/page-models/:name", edit, s.getPageModel)
	r.Put("/page-models/:name", manage, knownQuery("force"), s.updatePageModel)
	r.Delete("/page-models/:name", manage, deleteBy(textParam("name"), s.store.DeletePageModel))

	r.Get("/settings", full, s.getSettings)
	r.Patch("/settings", full, s.updateSettings)

	r.Get("/audit", manage, knownQuery("fromDate", "toDate", "actor", "take", "skip"), s.listAudit)

	r.Get("/channels", edit, listAll(s.store.Channels))
	r.Post("/channels", manage, s.createChannel)
	r.Patch("/channels/:name", manage, s.updateChannel)
	r.Delete("/channels/:name", manage, deleteBy(textParam("name"), s.store.DeleteChannel))

	s.webhookRoutes(r)
	s.mediaRoutes(r)
	s.instanceUserRoutes(r)

	// The state of an item's or page's copy in every locale (the Studio's
	// locale switcher), whichever locales have one.
	r.Get("/items/:id/copies", edit, getBy(idParam("id"), s.store.ItemCopies))
	r.Get("/pages/:id/copies", edit, getBy(idParam("id"), s.store.PageCopies))

	l := r.Group("/:locale")
	l.Get("/items", edit, knownQuery("container", "q", "state", "sort", "direction", "take", "skip"), s.resolveLocale, s.listItems)
	l.Post("/items", edit, s.resolveLocale, s.createItem)
	l.Get("/items/:id", edit, s.resolveLocale, getWithETag(s.store.Item, func(it content.Item) int64 { return it.VersionID }))
	l.Put("/items/:id", edit, s.resolveLocale, s.saveItem)
	l.Delete("/items/:id", publish, s.resolveLocale, deleteInLocale(s.store.DeleteItem))
	l.Put("/items/:id/schedule", publish, s.resolveLocale, updateInLocale(s.store.ScheduleItem))
	s.versionRoutes(l, edit)
	l.Post("/items/:id/:action", s.resolveLocale, actionInLocale(s.store.ItemAction))

	l.Post("/batch", edit, s.resolveLocale, s.batch)
	l.Get("/pages", edit, knownQuery("channel", "take", "skip"), s.resolveLocale, s.listPages)
	l.Post("/pages", edit, s.resolveLocale, s.createPage)
	l.Get("/pages/:id", edit, s.resolveLocale, getWithETag(s.store.Page, func(p content.Page) int64 { return p.VersionID }))
	l.Put("/pages/:id", edit, s.resolveLocale, s.savePage)
	l.Delete("/pages/:id", publish, s.resolveLocale, deleteInLocale(s.store.DeletePage))
	l.Put("/pages/:id/schedule", publish, s.resolveLocale, updateInLocale(s.store.SchedulePage))
	l.Put("/pages/:id/position", edit, s.resolveLocale, updateInLocale(s.store.MovePage))
	l.Post("/pages/:id/zones/:zone", edit, s.resolveLocale, s.addComponent)
	l.Put("/pages/:id/zones/:zone/order", edit, s.resolveLocale, s.reorderZone)
	l.Delete("/pages/:id/zones/:zone/:contentID", edit, s.resolveLocale, s.removeComponent)
	l.Post("/pages/:id/preview-link", edit, s.resolveLocale, s.previewLink)
	l.Post("/pages/:id/:action", s.resolveLocale, actionInLocale(s.store.PageAction))

	// Last: a path under the instance that no route above takes.
	r.All("/*", s.noRoute)
}

const localLocale = "locale"

// resolveLocale turns the :locale path segment into a configured locale code.
func (s *Server) resolveLocale(c *fiber.Ctx) error {
	l, err := s.store.Locale(c.UserContext(), instance(c), c.Params("locale"))
	if err != nil {
		return err
	}
	c.Locals(localLocale, l.Code)
	return c.Next()
}

func locale(c *fiber.Ctx) string { return c.Locals(localLocale).(string) }

func created(c *fiber.Ctx, v any) error { return c.Status(fiber.StatusCreated).JSON(v) }

func noContent(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) }

// paging reads take (1..max, default def) and skip (>= 0) from the query.
func paging(c *fiber.Ctx, def, max int) (take, skip int, err error) {
	take, skip = def, 0
	if v := c.Query("take"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > max {
			return 0, 0, problem.Field("take", "must be an integer from 1 to %d", max)
		}
		take = n
	}
	if v := c.Query("skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, problem.Field("skip", "must be an integer >= 0")
		}
		skip = n
	}
	return take, skip, nil
}

func (s *Server) createLocale(c *fiber.Ctx) error {
	var in struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	l, err := s.store.CreateLocale(c.UserContext(), instance(c), content.Locale{Code: in.Code, Name: in.Name})
	if err != nil {
		return err
	}
	return created(c, l)
}

func (s *Server) createToken(c *fiber.Ctx) error {
	var in struct {
		Name string       `json:"name"`
		Role content.Role `json:"role"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	t, secret, err := s.store.CreateToken(c.UserContext(), instance(c), in.Name, in.Role)
	if err != nil {
		return err
	}
	return created(c, fiber.Map{"id": t.ID, "name": t.Name, "role": t.Role, "createdAt": t.CreatedAt, "token": secret})
}

func (s *Server) createAPIKey(c *fiber.Ctx) error {
	var in struct {
		Name      *string    `json:"name"`
		Type      string     `json:"type"`
		ExpiresAt *time.Time `json:"expiresAt"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	k, secret, err := s.store.CreateAPIKey(c.UserContext(), instance(c), content.APIKeyInput{Name: in.Name, Type: in.Type, ExpiresAt: in.ExpiresAt})
	if err != nil {
		return err
	}
	return created(c, fiber.Map{"id": k.ID, "name": k.Name, "type": k.Type, "expiresAt": k.ExpiresAt, "enabled": k.Enabled, "createdAt": k.CreatedAt, "key": secret})
}

func (s *Server) updateAPIKey(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	var in struct {
		Name      *string         `json:"name"`
		Enabled   *bool           `json:"enabled"`
		ExpiresAt json.RawMessage `json:"expiresAt"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	upd := content.APIKeyInput{Name: in.Name, Enabled: in.Enabled}
	switch string(in.ExpiresAt) {
	case "":
	case "null":
		upd.ClearExpiry = true
	default:
		var t time.Time
		if err := json.Unmarshal(in.ExpiresAt, &t); err != nil {
			return problem.Field("expiresAt", "must be an RFC 3339 date or null")
		}
		upd.ExpiresAt = &t
	}
	k, err := s.store.UpdateAPIKey(c.UserContext(), instance(c), n, upd)
	if err != nil {
		return err
	}
	s.keys.forget(instance(c).Guid)
	return c.JSON(k)
}

func (s *Server) deleteAPIKey(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	if err := s.store.DeleteAPIKey(c.UserContext(), instance(c), n); err != nil {
		return err
	}
	s.keys.forget(instance(c).Guid)
	return noContent(c)
}

func (s *Server) createModel(c *fiber.Ctx) error {
	var in struct {
		Name   string          `json:"name"`
		Kind   string          `json:"kind"`
		Fields []content.Field `json:"fields"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	m, err := s.store.CreateModel(c.UserContext(), instance(c), content.Model{Name: in.Name, Kind: in.Kind, Fields: in.Fields})
	if err != nil {
		return err
	}
	return created(c, m)
}

func (s *Server) createContainer(c *fiber.Ctx) error {
	var in struct {
		ReferenceName string `json:"referenceName"`
		Model         string `json:"model"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	ct, err := s.store.CreateContainer(c.UserContext(), instance(c), in.ReferenceName, in.Model)
	if err != nil {
		return err
	}
	return created(c, ct)
}

type idList struct {
	ContentIDs []int64 `json:"contentIDs"`
}

func (s *Server) reorderContainer(c *fiber.Ctx) error {
	var in idList
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.ContentIDs == nil {
		return problem.Field("contentIDs", "is required")
	}
	if err := s.store.ReorderContainer(c.UserContext(), instance(c), c.Params("ref"), in.ContentIDs); err != nil {
		return err
	}
	return noContent(c)
}

func (s *Server) createPageModel(c *fiber.Ctx) error {
	var in struct {
		Name  string   `json:"name"`
		Zones []string `json:"zones"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	pm, err := s.store.CreatePageModel(c.UserContext(), instance(c), in.Name, in.Zones)
	if err != nil {
		return err
	}
	return created(c, pm)
}

func (s *Server) createChannel(c *fiber.Ctx) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	ch, err := s.store.CreateChannel(c.UserContext(), instance(c), in.Name)
	if err != nil {
		return err
	}
	return created(c, ch)
}

func (s *Server) getSettings(c *fiber.Ctx) error {
	st, err := s.store.Settings(c.UserContext(), instance(c))
	if err != nil {
		return err
	}
	return c.JSON(st)
}

func (s *Server) updateSettings(c *fiber.Ctx) error {
	var in content.SettingsUpdate
	if err := decode(c, &in); err != nil {
		return err
	}
	st, err := s.store.UpdateSettings(c.UserContext(), instance(c), in)
	if err != nil {
		return err
	}
	return c.JSON(st)
}
