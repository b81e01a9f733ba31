package origin

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
)

// listPages answers a window of the locale's pages in tree order (parents
// before children, siblings in order), with how many there are.
func (s *Server) listPages(c *fiber.Ctx) error {
	take, skip, err := paging(c, 50, 500)
	if err != nil {
		return err
	}
	ps, err := s.store.Pages(c.UserContext(), instance(c), locale(c), c.Query("channel"))
	if err != nil {
		return err
	}
	out := struct {
		Items      []content.Page `json:"items"`
		TotalCount int            `json:"totalCount"`
	}{Items: []content.Page{}, TotalCount: len(ps)}
	if skip < len(ps) {
		out.Items = ps[skip:min(skip+take, len(ps))]
	}
	return c.JSON(out)
}

func (s *Server) createPage(c *fiber.Ctx) error {
	var in content.PageInput
	if err := decode(c, &in); err != nil {
		return err
	}
	p, err := s.store.CreatePage(c.UserContext(), instance(c), locale(c), in)
	if err != nil {
		return err
	}
	return created(c, p)
}

func (s *Server) addComponent(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	var in struct {
		Module string                     `json:"module"`
		Fields map[string]json.RawMessage `json:"fields"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	cid, pos, err := s.store.AddComponent(c.UserContext(), instance(c), locale(c), n, c.Params("zone"), in.Module, in.Fields)
	if err != nil {
		return err
	}
	return created(c, fiber.Map{"contentID": cid, "position": pos})
}

func (s *Server) removeComponent(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	cid, err := id(c, "contentID")
	if err != nil {
		return err
	}
	if err := s.store.RemoveComponent(c.UserContext(), instance(c), locale(c), n, c.Params("zone"), cid); err != nil {
		return err
	}
	return noContent(c)
}

func (s *Server) reorderZone(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	var in idList
	if err := decode(c, &in); err != nil {
		return err
	}
	if err := s.store.ReorderZone(c.UserContext(), instance(c), locale(c), n, c.Params("zone"), in.ContentIDs); err != nil {
		return err
	}
	return noContent(c)
}

func (s *Server) savePage(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	var in content.PageInput
	if err := decode(c, &in); err != nil {
		return err
	}
	p, err := s.store.SavePage(c.UserContext(), instance(c), locale(c), n, in)
	if err != nil {
		return err
	}
	setETag(c, p.VersionID)
	return c.JSON(p)
}
