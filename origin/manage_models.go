package origin

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

// force reads ?force=true|false.
func force(c *fiber.Ctx) (bool, error) {
	v := c.Query("force")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, problem.Field("force", "must be true or false")
	}
	return b, nil
}

func (s *Server) getModel(c *fiber.Ctx) error {
	m, err := s.store.Model(c.UserContext(), instance(c), c.Params("name"))
	if err != nil {
		return err
	}
	setETag(c, m.Revision)
	return c.JSON(m)
}

func (s *Server) updateModel(c *fiber.Ctx) error {
	f, err := force(c)
	if err != nil {
		return err
	}
	var in struct {
		Fields []content.Field `json:"fields"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.Fields == nil {
		return problem.Field("fields", "is required: the whole new field list")
	}
	m, err := s.store.UpdateModel(c.UserContext(), instance(c), c.Params("name"), in.Fields, f)
	if err != nil {
		return err
	}
	setETag(c, m.Revision)
	return c.JSON(m)
}

func (s *Server) getPageModel(c *fiber.Ctx) error {
	pm, err := s.store.PageModel(c.UserContext(), instance(c), c.Params("name"))
	if err != nil {
		return err
	}
	setETag(c, pm.Revision)
	return c.JSON(pm)
}

func (s *Server) updatePageModel(c *fiber.Ctx) error {
	f, err := force(c)
	if err != nil {
		return err
	}
	var in struct {
		Zones []content.ZoneChange `json:"zones"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.Zones == nil {
		return problem.Field("zones", "is required: the whole new zone list")
	}
	pm, err := s.store.UpdatePageModel(c.UserContext(), instance(c), c.Params("name"), in.Zones, f)
	if err != nil {
		return err
	}
	setETag(c, pm.Revision)
	return c.JSON(pm)
}
