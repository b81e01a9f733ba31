package origin

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

type fieldsInput struct {
	Fields map[string]json.RawMessage `json:"fields"`
}

func (s *Server) listItems(c *fiber.Ctx) error {
	ref := c.Query("container")
	if ref == "" {
		return problem.Field("container", "is required: the referenceName of the container to list")
	}
	take, skip, err := paging(c, 50, 250)
	if err != nil {
		return err
	}
	p, err := s.store.Items(c.UserContext(), instance(c), locale(c), ref, take, skip)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) createItem(c *fiber.Ctx) error {
	var in struct {
		ReferenceName string                     `json:"referenceName"`
		Fields        map[string]json.RawMessage `json:"fields"`
	}
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.ReferenceName == "" {
		return problem.Field("referenceName", "is required")
	}
	st, err := s.store.CreateItem(c.UserContext(), instance(c), locale(c), in.ReferenceName, in.Fields)
	if err != nil {
		return err
	}
	return created(c, st)
}

func (s *Server) saveItem(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	var in fieldsInput
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.Fields == nil {
		return problem.Field("fields", "is required")
	}
	st, err := s.store.SaveItem(c.UserContext(), instance(c), locale(c), n, in.Fields)
	if err != nil {
		return err
	}
	return c.JSON(st)
}

// action resolves the :action segment and checks the token may take it.
func action(c *fiber.Ctx) (content.Action, error) {
	a, err := content.ParseAction(c.Params("action"))
	if err != nil {
		return "", err
	}
	return a, allow(c, a.Role())
}
