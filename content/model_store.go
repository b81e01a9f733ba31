package content

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

// FieldType is the type of a model field.
type FieldType string

// The field types of a content model.
const (
	TypeText    FieldType = "text"
	TypeHTML    FieldType = "html"
	TypeNumber  FieldType = "number"
	TypeDecimal FieldType = "decimal"
	TypeBoolean FieldType = "boolean"
	TypeDate    FieldType = "date"
	TypeLink    FieldType = "link"
	TypeImage   FieldType = "image"
	TypeGallery FieldType = "gallery"
	TypeItem    FieldType = "item"
	TypeList    FieldType = "list"
)

var fieldTypes = map[FieldType]bool{
	TypeText: true, TypeHTML: true, TypeNumber: true, TypeDecimal: true, TypeBoolean: true, TypeDate: true,
	TypeLink: true, TypeImage: true, TypeGallery: true, TypeItem: true, TypeList: true,
}

// Field is one field of a model.
type Field struct {
	Name string    `json:"name"`
	Type FieldType `json:"type"`
	// Shared fields are constant across languages: saving one in one locale
	// saves it in every connected copy.
	Shared bool `json:"shared,omitempty"`
	// Container is the referenceName of the container linked items come
	// from, for item and list fields.
	Container string `json:"container,omitempty"`
	Required  bool   `json:"required,omitempty"`
	// RenameFrom, in a model update only, names the field this one was
	// called before; its values are kept under the new name. It is not
	// stored.
	RenameFrom string `json:"renameFrom,omitempty"`
}

// Model is a content model (for items in containers) or a component model
// (for components in page zones).
type Model struct {
	ID        int64     `db:"id" json:"id"`
	Name      string    `db:"name" json:"name"`
	Kind      string    `db:"kind" json:"kind"`
	Fields    Fields    `db:"fields" json:"fields"`
	CreatedAt time.Time `db:"created_at" json:"createdAt"`
	// Revision counts the model's changes; it is the model's ETag.
	Revision int64 `db:"revision" json:"revision"`
}

// Fields is a model's field list, stored as JSON.
type Fields []Field

// Scan implements sql.Scanner.
func (f *Fields) Scan(src any) error { return scanJSON(src, f) }

// Field returns the field named name (case-insensitively).
func (m Model) Field(name string) (Field, bool) {
	for _, f := range m.Fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return Field{}, false
}

func scanJSON(src any, dst any) error {
	switch v := src.(type) {
	case []byte:
		return json.Unmarshal(v, dst)
	case string:
		return json.Unmarshal([]byte(v), dst)
	case nil:
		return nil
	}
	return fmt.Errorf("cannot scan %T as JSON", src)
}

var (
	namePattern      = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)
	fieldNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,63}$`)
)

const (
	insertModelSQL = `INSERT INTO models (instance_id, name, kind, fields) VALUES ($1, $2, $3, $4)
		RETURNING id, name, kind, fields, created_at, revision`
	selectModelsSQL = `SELECT id, name, kind, fields, created_at, revision FROM models WHERE instance_id = $1 ORDER BY id`
	selectModelSQL  = `SELECT id, name, kind, fields, created_at, revision FROM models WHERE instance_id = $1 AND lower(name) = lower($2)`
	modelUsedSQL    = `SELECT EXISTS (SELECT 1 FROM containers WHERE model_id = $1) OR EXISTS (SELECT 1 FROM items WHERE model_id = $1)`
	deleteModelSQL  = `DELETE FROM models WHERE id = $1`
	// Other models link to a container by name inside their field lists.
	containerLinkedSQL = `SELECT m.name FROM models m, jsonb_array_elements(m.fields) f
		WHERE m.instance_id = $1 AND lower(f->>'container') = lower($2) LIMIT 1`
)

// CreateModel validates and creates a content or component model.
func (s *Store) CreateModel(ctx context.Context, inst Instance, m Model) (Model, error) {
	var out Model
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := validateModel(ctx, tx, inst, &m); err != nil {
			return err
		}
		fields, _ := json.Marshal(m.Fields)
		err := tx.GetContext(ctx, &out, insertModelSQL, inst.ID, m.Name, m.Kind, fields)
		if pg.IsUniqueViolation(err) {
			return problem.Conflictf("a model named %q already exists", m.Name)
		}
		return err
	})
	if err != nil {
		return Model{}, fmt.Errorf("create model: %w", err)
	}
	return out, nil
}

func validateModel(ctx context.Context, tx *sqlx.Tx, inst Instance, m *Model) error {
	var errs []problem.FieldError
	add := func(field, reason string, args ...any) {
		errs = append(errs, problem.FieldError{Field: field, Reason: fmt.Sprintf(reason, args...)})
	}
	if !namePattern.MatchString(m.Name) {
		add("name", "must be 1 to 64 letters, digits or underscores, starting with a letter")
	}
	if m.Kind != "content" && m.Kind != "component" {
		add("kind", `must be "content" or "component"`)
	}
	if len(m.Fields) == 0 {
		add("fields", "a model needs at least one field")
	}
	if len(m.Fields) > 200 {
		add("fields", "a model has at most 200 fields")
	}
	seen := map[string]bool{}
	for i := range m.Fields {
		f := &m.Fields[i]
		f.RenameFrom = ""
		at := fmt.Sprintf("fields[%d]", i)
		if !fieldNamePattern.MatchString(f.Name) {
			add(at+".name", "must be 1 to 64 letters or digits, starting with a letter")
		} else if seen[strings.ToLower(f.Name)] {
			add(at+".name", "duplicate field name %q", f.Name)
		}
		seen[strings.ToLower(f.Name)] = true
		if !fieldTypes[f.Type] {
			add(at+".type", "unknown type %q; one of text, html, number, decimal, boolean, date, link, image, gallery, item, list", f.Type)
			continue
		}
		if f.Type == TypeItem || f.Type == TypeList {
			if f.Container == "" {
				add(at+".container", "item and list fields need the referenceName of a container")
				continue
			}
			// The container may not exist yet (a model that links to
			// its own container, or two that link to each other): saving
			// a link to it answers 400 until it does.
			c, err := containerByName(ctx, tx, inst, f.Container)
			if problem.Is(err, problem.NotFound) {
				if !namePattern.MatchString(f.Container) {
					add(at+".container", "must be a container's referenceName: 1 to 64 letters, digits or underscores, starting with a letter")
				}
			} else if err != nil {
				return err
			} else {
				f.Container = c.ReferenceName
			}
		} else if f.Container != "" {
			add(at+".container", "only item and list fields link to a container")
		}
	}
	// Rendering adds companion fields beside links (<name>ID, <name>_ValueField);
	// a field of that name would collide with them.
	for i, f := range m.Fields {
		for _, g := range m.Fields {
			if (g.Type == TypeItem && strings.EqualFold(f.Name, g.Name+"ID")) ||
				(g.Type == TypeList && strings.EqualFold(f.Name, g.Name+"_ValueField")) {
				add(fmt.Sprintf("fields[%d].name", i), "collides with the companion field of link field %q", g.Name)
			}
		}
	}
	return problem.Fields(errs)
}

// Models lists an instance's models.
func (s *Store) Models(ctx context.Context, inst Instance) ([]Model, error) {
	ms := []Model{}
	err := s.db.SelectContext(ctx, &ms, selectModelsSQL, inst.ID)
	return ms, err
}

// Model returns the model named name (case-insensitively).
func (s *Store) Model(ctx context.Context, inst Instance, name string) (Model, error) {
	return modelByName(ctx, s.db, inst, name)
}

func modelByName(ctx context.Context, q sqlx.QueryerContext, inst Instance, name string) (Model, error) {
	var m Model
	if err := sqlx.GetContext(ctx, q, &m, selectModelSQL, inst.ID, name); err != nil {
		return Model{}, notFound(err, "model %q not found", name)
	}
	return m, nil
}

// DeleteModel deletes a model that no container, item or component uses.
func (s *Store) DeleteModel(ctx context.Context, inst Instance, name string) error {
	return s.transact(ctx, func(tx *sqlx.Tx) error {
		m, err := modelByName(ctx, tx, inst, name)
		if err != nil {
			return err
		}
		var used bool
		if err := tx.GetContext(ctx, &used, modelUsedSQL, m.ID); err != nil {
			return err
		}
		if used {
			return problem.Conflictf("model %q is used by containers or items", m.Name)
		}
		_, err = tx.ExecContext(ctx, deleteModelSQL, m.ID)
		return err
	})
}

// Container is a named list of items of one content model.
type Container struct {
	ID            int64     `db:"id" json:"-"`
	ReferenceName string    `db:"reference_name" json:"referenceName"`
	ModelID       int64     `db:"model_id" json:"-"`
	Model         string    `db:"model" json:"model"`
	ItemCount     int       `db:"item_count" json:"itemCount"`
	CreatedAt     time.Time `db:"created_at" json:"createdAt"`
}

const (
	containerColumns = `c.id, c.reference_name, c.model_id, m.name AS model, c.created_at`
	// itemCountColumn counts a container's items, which only the
	// management API's reads show: writes look containers up by key and
	// never count them.
	itemCountColumn     = `, (SELECT count(*) FROM items i WHERE i.container_id = c.id) AS item_count`
	insertContainerSQL  = `INSERT INTO containers (instance_id, reference_name, model_id) VALUES ($1, $2, $3) RETURNING id`
	selectContainersSQL = `SELECT ` + containerColumns + itemCountColumn + ` FROM containers c JOIN models m ON m.id = c.model_id
		WHERE c.instance_id = $1 ORDER BY c.id`
	containerByNameWhere = ` FROM containers c JOIN models m ON m.id = c.model_id
		WHERE c.instance_id = $1 AND lower(c.reference_name) = lower($2)`
	selectContainerSQL     = `SELECT ` + containerColumns + itemCountColumn + containerByNameWhere
	selectContainerHeadSQL = `SELECT ` + containerColumns + containerByNameWhere
	// A container is used while an item of it has a live copy or a
	// dynamic page shows it; items deleted in every locale go with it.
	containerUsedSQL = `SELECT EXISTS (SELECT 1 FROM items i JOIN item_copies c ON c.content_id = i.content_id
			WHERE i.container_id = $1 AND c.state <> 3)
		OR EXISTS (SELECT 1 FROM pages WHERE dynamic_container_id = $1)`
	deleteContainerItemsSQL = `DELETE FROM items WHERE container_id = $1`
	deleteContainerSQL      = `DELETE FROM containers WHERE id = $1`
)

// CreateContainer creates a container of items of a content model.
func (s *Store) CreateContainer(ctx context.Context, inst Instance, referenceName, model string) (Container, error) {
	var c Container
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		var errs []problem.FieldError
		if !namePattern.MatchString(referenceName) {
			errs = append(errs, problem.FieldError{Field: "referenceName", Reason: "must be 1 to 64 letters, digits or underscores, starting with a letter"})
		}
		if strings.TrimSpace(model) == "" {
			errs = append(errs, problem.FieldError{Field: "model", Reason: "is required"})
		}
		if err := problem.Fields(errs); err != nil {
			return err
		}
		m, err := modelByName(ctx, tx, inst, model)
		if err != nil {
			return err
		}
		if m.Kind != "content" {
			return problem.Field("model", "model %q is a component model; containers hold content models", m.Name)
		}
		var id int64
		if err := tx.GetContext(ctx, &id, insertContainerSQL, inst.ID, referenceName, m.ID); err != nil {
			if pg.IsUniqueViolation(err) {
				return problem.Conflictf("a container named %q already exists", referenceName)
			}
			return err
		}
		c, err = containerByName(ctx, tx, inst, referenceName)
		return err
	})
	if err != nil {
		return Container{}, fmt.Errorf("create container: %w", err)
	}
	return c, nil
}

// Containers lists an instance's containers.
func (s *Store) Containers(ctx context.Context, inst Instance) ([]Container, error) {
	cs := []Container{}
	err := s.db.SelectContext(ctx, &cs, selectContainersSQL, inst.ID)
	return cs, err
}

// Container returns the container with the reference name (case-insensitively).
func (s *Store) Container(ctx context.Context, inst Instance, referenceName string) (Container, error) {
	var c Container
	if err := s.db.GetContext(ctx, &c, selectContainerSQL, inst.ID, referenceName); err != nil {
		return Container{}, notFound(err, "container %q not found", referenceName)
	}
	return c, nil
}

// containerByName returns the container with the reference name
// (case-insensitively) without its ItemCount, for writes: it reads the
// container's row by key, whatever the number of its items.
func containerByName(ctx context.Context, q sqlx.QueryerContext, inst Instance, name string) (Container, error) {
	var c Container
	if err := sqlx.GetContext(ctx, q, &c, selectContainerHeadSQL, inst.ID, name); err != nil {
		return Container{}, notFound(err, "container %q not found", name)
	}
	return c, nil
}

// DeleteContainer deletes a container whose items are all deleted (in
// every locale: they go with it), that backs no dynamic page and is
// linked from no model field. It writes a whole-list Deleted
// event per locale, so that the container's list answers are withdrawn.
func (s *Store) DeleteContainer(ctx context.Context, inst Instance, referenceName string) error {
	return s.transact(ctx, func(tx *sqlx.Tx) error {
		c, err := containerByName(ctx, tx, inst, referenceName)
		if err != nil {
			return err
		}
		var used bool
		if err := tx.GetContext(ctx, &used, containerUsedSQL, c.ID); err != nil {
			return err
		}
		if used {
			return problem.Conflictf("container %q holds items that are not deleted, or backs a dynamic page", c.ReferenceName)
		}
		var model string
		err = tx.GetContext(ctx, &model, containerLinkedSQL, inst.ID, c.ReferenceName)
		if err == nil {
			return problem.Conflictf("container %q is linked from a field of model %q", c.ReferenceName, model)
		} else if problem.KindOf(notFound(err, "")) != problem.NotFound {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteContainerItemsSQL, c.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteContainerSQL, c.ID); err != nil {
			return err
		}
		return appendListEvents(ctx, tx, inst, c.ReferenceName, s.now())
	})
}
