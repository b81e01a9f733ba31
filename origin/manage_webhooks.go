package origin

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/webhooks"
)

// webhookRoutes registers the webhook management routes: manage role for
// webhooks and their history, full control to rotate a signing secret.
// Registered before the /:locale/... routes (no locale may be named
// "webhook").
func (s *Server) webhookRoutes(r fiber.Router) {
	manage, full := need(content.RoleManage), need(content.RoleFull)
	r.Post("/webhook", manage, s.saveWebhook)
	r.Get("/webhook/list", manage, s.listWebhooks)
	r.Get("/webhook/:id", manage, s.getWebhook)
	r.Delete("/webhook/:id", manage, s.deleteWebhook)
	r.Post("/webhook/:id/rotate-secret", full, s.rotateWebhookSecret)
	r.Get("/webhook/:id/history", manage, s.webhookHistory)
	r.Post("/webhook/:id/test", manage, s.testWebhook)
	r.Post("/webhook/:id/history/:rowKey/redeliver", manage, s.redeliverWebhook)
}

// webhookStore returns the webhooks store, or an Unavailable problem for an
// origin started without one.
func (s *Server) webhookStore() (*webhooks.Store, error) {
	if s.cfg.Webhooks == nil {
		return nil, problem.New(problem.Unavailable, "webhooks are not configured on this origin")
	}
	return s.cfg.Webhooks, nil
}

// saveWebhook creates a webhook (201) or, with rowKey, updates one (200).
func (s *Server) saveWebhook(c *fiber.Ctx) error {
	var in webhooks.Input
	if err := decode(c, &in); err != nil {
		return err
	}
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	w, isNew, err := wh.Save(c.UserContext(), instance(c), in)
	if err != nil {
		return err
	}
	if isNew {
		return created(c, w)
	}
	return c.JSON(w)
}

func (s *Server) listWebhooks(c *fiber.Ctx) error {
	take := 0
	if v := c.Query("take"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > webhooks.MaxTake {
			return problem.Field("take", "must be an integer from 1 to %d", webhooks.MaxTake)
		}
		take = n
	}
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	page, err := wh.Webhooks(c.UserContext(), instance(c), take, c.Query("token"))
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (s *Server) getWebhook(c *fiber.Ctx) error {
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	w, err := wh.Webhook(c.UserContext(), instance(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(w)
}

func (s *Server) deleteWebhook(c *fiber.Ctx) error {
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	if err := wh.Delete(c.UserContext(), instance(c), c.Params("id")); err != nil {
		return err
	}
	return noContent(c)
}

func (s *Server) rotateWebhookSecret(c *fiber.Ctx) error {
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	w, err := wh.RotateSecret(c.UserContext(), instance(c), c.Params("id"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(w)
}

func (s *Server) webhookHistory(c *fiber.Ctx) error {
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	page, err := wh.History(c.UserContext(), instance(c), c.Params("id"), webhooks.HistoryQuery{
		FromDate: c.Query("fromDate"), ToDate: c.Query("toDate"), Take: c.Query("take"), Token: c.Query("token"),
	})
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (s *Server) testWebhook(c *fiber.Ctx) error {
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	d, err := wh.Test(c.UserContext(), instance(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(d)
}

// redeliverWebhook queues a delivery again: 202, the history record.
func (s *Server) redeliverWebhook(c *fiber.Ctx) error {
	wh, err := s.webhookStore()
	if err != nil {
		return err
	}
	d, err := wh.Redeliver(c.UserContext(), instance(c), c.Params("id"), c.Params("rowKey"))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(d)
}
