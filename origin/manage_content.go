package origin

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

type fieldsInput struct {
	Fields map[string]json.RawMessage `json:"fields"`
}

func (s *Server) listItems(c *fiber.Ctx) error {
	take, skip, err := paging(c, 50, 500)
	if err != nil {
		return err
	}
	q := content.ItemQuery{Container: c.Query("container"), Q: c.Query("q"), Sort: c.Query("sort"),
		Direction: c.Query("direction"), Take: take, Skip: skip}
	if c.Context().QueryArgs().Has("q") && strings.TrimSpace(q.Q) == "" {
		return problem.Field("q", "must be 1 to %d characters", content.MaxQueryLength)
	}
	if v := c.Query("state"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return problem.Field("state", "must be a state number from 1 to 7")
		}
		q.State = content.State(n)
	}
	p, err := s.store.SearchItems(c.UserContext(), instance(c), locale(c), q)
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
	setETag(c, st.VersionID)
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
