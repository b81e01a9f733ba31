package content

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/problem"
)

// Models evolve: PUT /models/{name} replaces a model's field list and
// PUT /page-models/{name} a page model's zones. What the items (pages)
// hold follows in the same transaction: renamed fields (zones) keep their
// values under the new name, in the working and published copies and in
// the versions kept; removed ones drop theirs, which needs force when any
// copy holds a value. A model event per locale then has the publisher
// render again every object that shows the model.

// FieldValueCount says how many items hold a value in a field (or how
// many pages hold components in a zone) that a change would remove.
type FieldValueCount struct {
	Name  string `json:"name"`
	Items int    `json:"items,omitempty"`
	Pages int    `json:"pages,omitempty"`
}

// compatible reports whether values of type from are valid values of type
// to as they are stored.
func compatible(from, to FieldType) bool {
	if from == to {
		return true
	}
	switch {
	case from == TypeText && to == TypeHTML, from == TypeHTML && to == TypeText:
		return true
	case from == TypeNumber && to == TypeDecimal:
		return true
	}
	return false
}

const (
	lockModelSQL = `SELECT id, name, kind, fields, created_at, revision FROM models
		WHERE instance_id = $1 AND lower(name) = lower($2) FOR UPDATE`
	// itemsHoldingSQL counts the items with a value in field $2 in any
	// copy, working or published.
	itemsHoldingSQL = `SELECT count(DISTINCT content_id) FROM item_copies
		WHERE model_id = $1 AND (fields ? $2 OR coalesce(published_fields ? $2, false))`
	renameValuesSQL = `UPDATE item_copies SET
			fields = CASE WHEN fields ? $2 THEN (fields - $2) || jsonb_build_object($3::text, fields -> $2) ELSE fields END,
			published_fields = CASE WHEN published_fields ? $2
				THEN (published_fields - $2) || jsonb_build_object($3::text, published_fields -> $2) ELSE published_fields END
		WHERE model_id = $1 AND (fields ? $2 OR coalesce(published_fields ? $2, false))`
	renameVersionValuesSQL = `UPDATE item_versions v SET fields = (v.fields - $2) || jsonb_build_object($3::text, v.fields -> $2)
		FROM items i WHERE i.content_id = v.content_id AND i.model_id = $1 AND v.fields ? $2`
	dropValuesSQL = `UPDATE item_copies SET fields = fields - $2, published_fields = published_fields - $2
		WHERE model_id = $1 AND (fields ? $2 OR coalesce(published_fields ? $2, false))`
	updateModelSQL = `UPDATE models SET fields = $2, revision = revision + 1 WHERE id = $1
		RETURNING id, name, kind, fields, created_at, revision`
	pathFieldPagesSQL = `SELECT p.page_id FROM pages p JOIN containers c ON c.id = p.dynamic_container_id
		WHERE c.model_id = $1 AND lower(p.dynamic_path_field) = lower($2) ORDER BY p.page_id`
	renamePathFieldSQL = `UPDATE pages p SET dynamic_path_field = $3 FROM containers c
		WHERE c.id = p.dynamic_container_id AND c.model_id = $1 AND lower(p.dynamic_path_field) = lower($2)`
	renameTitleFieldSQL = `UPDATE pages p SET dynamic_title_field = $3 FROM containers c
		WHERE c.id = p.dynamic_container_id AND c.model_id = $1 AND lower(p.dynamic_title_field) = lower($2)`
	clearTitleFieldSQL = `UPDATE pages p SET dynamic_title_field = NULL FROM containers c
		WHERE c.id = p.dynamic_container_id AND c.model_id = $1 AND lower(p.dynamic_title_field) = lower($2)`
)

// UpdateModel replaces the field list of the model named name. A field
// keeps its values when it keeps its name or names its old name in
// RenameFrom; a type may change only between compatible types (text and
// html, number to decimal); a field left out is removed with its values,
// which needs force when items hold some (409 listing how many). The
// model's name and kind do not change.
func (s *Store) UpdateModel(ctx context.Context, inst Instance, name string, fields []Field, force bool) (Model, error) {
	var out Model
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		var cur Model
		if err := tx.GetContext(ctx, &cur, lockModelSQL, inst.ID, name); err != nil {
			return notFound(err, "model %q not found", name)
		}
		if err := checkIfMatch(ctx, cur.Revision, true); err != nil {
			return err
		}
		plan, err := planFields(cur, fields)
		if err != nil {
			return err
		}
		next := Model{ID: cur.ID, Name: cur.Name, Kind: cur.Kind, Fields: append(Fields{}, fields...)}
		if err := validateModel(ctx, tx, inst, &next); err != nil {
			return err
		}
		// Values that would be dropped.
		var holding []FieldValueCount
		for _, f := range plan.removed {
			var n int
			if err := tx.GetContext(ctx, &n, itemsHoldingSQL, cur.ID, f.Name); err != nil {
				return err
			}
			if n > 0 {
				holding = append(holding, FieldValueCount{Name: f.Name, Items: n})
			}
		}
		for _, c := range plan.containerChanged {
			var n int
			if err := tx.GetContext(ctx, &n, itemsHoldingSQL, cur.ID, c); err != nil {
				return err
			}
			if n > 0 {
				return problem.Conflictf("field %q links to another container now, and %d items link to items of the old one; add a new field instead", c, n)
			}
		}
		if len(holding) > 0 && !force {
			return &problem.Error{Kind: problem.Conflict,
				Detail: fmt.Sprintf("removing field %q drops the values of %d items (and %d more fields); send ?force=true to remove anyway", holding[0].Name, holding[0].Items, len(holding)-1),
				Extra:  map[string]any{"fields": holding}}
		}
		if force && len(holding) == 0 {
			return problem.Field("force", "nothing to force: no field removed holds values")
		}
		// Dynamic pages name a path field and a title field of the model.
		for _, f := range plan.removed {
			var pages []int64
			if err := tx.SelectContext(ctx, &pages, pathFieldPagesSQL, cur.ID, f.Name); err != nil {
				return err
			}
			if len(pages) > 0 {
				return problem.Conflictf("field %q is the path field of dynamic page %d; change the page first", f.Name, pages[0])
			}
			if _, err := tx.ExecContext(ctx, clearTitleFieldSQL, cur.ID, f.Name); err != nil {
				return err
			}
		}
		// The model first: the search vectors of the copies rewritten
		// below are made from the model's fields as they are now.
		raw, _ := json.Marshal(next.Fields)
		if err := tx.GetContext(ctx, &out, updateModelSQL, cur.ID, raw); err != nil {
			return err
		}
		for _, r := range plan.renamed {
			if nf, _ := next.Field(r[1]); nf.Type != TypeText {
				var pages []int64
				if err := tx.SelectContext(ctx, &pages, pathFieldPagesSQL, cur.ID, r[0]); err != nil {
					return err
				}
				if len(pages) > 0 {
					return problem.Conflictf("field %q is the path field of dynamic page %d and must stay text", r[0], pages[0])
				}
			}
			if r[0] == r[1] {
				continue
			}
			for _, q := range []string{renameValuesSQL, renameVersionValuesSQL, renamePathFieldSQL, renameTitleFieldSQL} {
				if _, err := tx.ExecContext(ctx, q, cur.ID, r[0], r[1]); err != nil {
					return err
				}
			}
		}
		for _, f := range plan.removed {
			if _, err := tx.ExecContext(ctx, dropValuesSQL, cur.ID, f.Name); err != nil {
				return err
			}
		}
		return appendModelEvents(ctx, tx, inst, eventlog.SubjectModel, out.Name, s.now())
	})
	if err != nil {
		return Model{}, fmt.Errorf("update model %q: %w", name, err)
	}
	return out, nil
}

// fieldPlan is how a new field list maps onto the current one.
type fieldPlan struct {
	renamed          [][2]string // old name, new name (the same when kept)
	removed          []Field
	containerChanged []string // old names of link fields whose container changes
}

// planFields matches the new fields with the current ones.
func planFields(cur Model, fields []Field) (fieldPlan, error) {
	var p fieldPlan
	used := map[string]bool{} // lower-case old names taken
	var errs []problem.FieldError
	for i, f := range fields {
		at := fmt.Sprintf("fields[%d]", i)
		from := f.Name
		if f.RenameFrom != "" {
			from = f.RenameFrom
			old, ok := cur.Field(from)
			if !ok {
				errs = append(errs, problem.FieldError{Field: at + ".renameFrom", Reason: fmt.Sprintf("model %q has no field %q", cur.Name, from)})
				continue
			}
			if other, ok := cur.Field(f.Name); ok && !strings.EqualFold(other.Name, old.Name) {
				return p, problem.Conflictf("cannot rename %q to %q: model %q has a field %q; remove it first", old.Name, f.Name, cur.Name, other.Name)
			}
			from = old.Name
		}
		old, ok := cur.Field(from)
		if !ok {
			continue // a new field
		}
		if used[strings.ToLower(old.Name)] {
			errs = append(errs, problem.FieldError{Field: at, Reason: fmt.Sprintf("field %q is already kept or renamed by another entry", old.Name)})
			continue
		}
		used[strings.ToLower(old.Name)] = true
		if !compatible(old.Type, f.Type) {
			return p, problem.Conflictf("field %q cannot change from %s to %s (allowed: text and html, number to decimal); add a new field instead", old.Name, old.Type, f.Type)
		}
		if (f.Type == TypeItem || f.Type == TypeList) && !strings.EqualFold(old.Container, f.Container) {
			p.containerChanged = append(p.containerChanged, old.Name)
		}
		p.renamed = append(p.renamed, [2]string{old.Name, f.Name})
	}
	if err := problem.Fields(errs); err != nil {
		return p, err
	}
	for _, f := range cur.Fields {
		if !used[strings.ToLower(f.Name)] {
			p.removed = append(p.removed, f)
		}
	}
	return p, nil
}

// appendModelEvents writes a model (or page model) event for every locale.
func appendModelEvents(ctx context.Context, tx *sqlx.Tx, inst Instance, subject eventlog.Subject, name string, now time.Time) error {
	var locales []string
	if err := tx.SelectContext(ctx, &locales, selectLocaleCodesSQL, inst.ID); err != nil {
		return err
	}
	for _, l := range locales {
		e := eventlog.Event{State: eventlog.Deleted, Subject: subject, Locale: ptr(l), ReferenceName: ptr(name), ChangeDate: now}
		if err := appendEvent(ctx, tx, inst, e); err != nil {
			return err
		}
	}
	return nil
}

// ZoneChange is one zone of a page model update: its name, and the name it
// had when it is renamed. It decodes from a string (the name) or an
// object {name, renameFrom}.
type ZoneChange struct {
	Name       string `json:"name"`
	RenameFrom string `json:"renameFrom,omitempty"`
}

// UnmarshalJSON accepts a zone name or {name, renameFrom}.
func (z *ZoneChange) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*z = ZoneChange{Name: s}
		return nil
	}
	type plain ZoneChange
	var p plain
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("a zone is a name or {name, renameFrom}: %w", err)
	}
	*z = ZoneChange(p)
	return nil
}

const (
	lockPageModelSQL = `SELECT id, name, zones, created_at, revision FROM page_models
		WHERE instance_id = $1 AND lower(name) = lower($2) FOR UPDATE`
	// pagesHoldingSQL counts the pages of a page model with components in
	// zone $2, in a working or published copy.
	pagesHoldingSQL = `SELECT count(DISTINCT c.page_id) FROM page_copies c JOIN pages p ON p.page_id = c.page_id
		WHERE p.page_model_id = $1 AND (jsonb_array_length(coalesce(c.zones -> $2, '[]')) > 0
			OR jsonb_array_length(coalesce(c.published_zones -> $2, '[]')) > 0)`
	renameZoneSQL = `UPDATE page_copies c SET
			zones = (c.zones - $2) || jsonb_build_object($3::text, coalesce(c.zones -> $2, '[]')),
			published_zones = CASE WHEN c.published_zones IS NULL THEN NULL
				ELSE (c.published_zones - $2) || jsonb_build_object($3::text, coalesce(c.published_zones -> $2, '[]')) END
		FROM pages p WHERE p.page_id = c.page_id AND p.page_model_id = $1`
	renameVersionZoneSQL = `UPDATE page_versions v SET zones = (v.zones - $2) || jsonb_build_object($3::text, v.zones -> $2)
		FROM pages p WHERE p.page_id = v.page_id AND p.page_model_id = $1 AND v.zones ? $2`
	addZoneSQL = `UPDATE page_copies c SET zones = c.zones || jsonb_build_object($2::text, '[]'::jsonb),
			published_zones = CASE WHEN c.published_zones IS NULL THEN NULL
				ELSE c.published_zones || jsonb_build_object($2::text, '[]'::jsonb) END
		FROM pages p WHERE p.page_id = c.page_id AND p.page_model_id = $1 AND NOT c.zones ? $2`
	dropZoneSQL = `UPDATE page_copies c SET zones = c.zones - $2, published_zones = c.published_zones - $2
		FROM pages p WHERE p.page_id = c.page_id AND p.page_model_id = $1`
	updatePageModelSQL = `UPDATE page_models SET zones = $2, revision = revision + 1 WHERE id = $1
		RETURNING id, name, zones, created_at, revision`
)

// UpdatePageModel replaces the zones of the page model named name, with
// the rules of UpdateModel: a zone matched by name or renameFrom keeps its
// components; a zone left out is removed, which needs force when pages
// hold components in it (their components leave the pages).
func (s *Store) UpdatePageModel(ctx context.Context, inst Instance, name string, zones []ZoneChange, force bool) (PageModel, error) {
	var out PageModel
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		var cur PageModel
		if err := tx.GetContext(ctx, &cur, lockPageModelSQL, inst.ID, name); err != nil {
			return notFound(err, "page model %q not found", name)
		}
		if err := checkIfMatch(ctx, cur.Revision, true); err != nil {
			return err
		}
		has := func(z string) (string, bool) {
			for _, c := range cur.Zones {
				if strings.EqualFold(c, z) {
					return c, true
				}
			}
			return "", false
		}
		names := make([]string, len(zones))
		for i, z := range zones {
			names[i] = z.Name
		}
		if err := validateZones(names); err != nil {
			return err
		}
		used := map[string]bool{}
		var renamed [][2]string
		var added []string
		var errs []problem.FieldError
		for i, z := range zones {
			from := z.Name
			if z.RenameFrom != "" {
				old, ok := has(z.RenameFrom)
				if !ok {
					errs = append(errs, problem.FieldError{Field: fmt.Sprintf("zones[%d].renameFrom", i), Reason: fmt.Sprintf("page model %q has no zone %q", cur.Name, z.RenameFrom)})
					continue
				}
				if other, ok := has(z.Name); ok && other != old {
					return problem.Conflictf("cannot rename zone %q to %q: page model %q has a zone %q; remove it first", old, z.Name, cur.Name, other)
				}
				from = old
			}
			old, ok := has(from)
			if !ok {
				added = append(added, z.Name)
				continue
			}
			if used[old] {
				errs = append(errs, problem.FieldError{Field: fmt.Sprintf("zones[%d]", i), Reason: fmt.Sprintf("zone %q is already kept or renamed by another entry", old)})
				continue
			}
			used[old] = true
			renamed = append(renamed, [2]string{old, z.Name})
		}
		if err := problem.Fields(errs); err != nil {
			return err
		}
		var removed []string
		var holding []FieldValueCount
		for _, z := range cur.Zones {
			if used[z] {
				continue
			}
			removed = append(removed, z)
			var n int
			if err := tx.GetContext(ctx, &n, pagesHoldingSQL, cur.ID, z); err != nil {
				return err
			}
			if n > 0 {
				holding = append(holding, FieldValueCount{Name: z, Pages: n})
			}
		}
		if len(holding) > 0 && !force {
			return &problem.Error{Kind: problem.Conflict,
				Detail: fmt.Sprintf("removing zone %q takes the components of %d pages (and %d more zones); send ?force=true to remove anyway", holding[0].Name, holding[0].Pages, len(holding)-1),
				Extra:  map[string]any{"zones": holding}}
		}
		if force && len(holding) == 0 {
			return problem.Field("force", "nothing to force: no zone removed holds components")
		}
		for _, r := range renamed {
			if r[0] == r[1] {
				continue
			}
			for _, q := range []string{renameZoneSQL, renameVersionZoneSQL} {
				if _, err := tx.ExecContext(ctx, q, cur.ID, r[0], r[1]); err != nil {
					return err
				}
			}
		}
		for _, z := range removed {
			if _, err := tx.ExecContext(ctx, dropZoneSQL, cur.ID, z); err != nil {
				return err
			}
		}
		for _, z := range added {
			if _, err := tx.ExecContext(ctx, addZoneSQL, cur.ID, z); err != nil {
				return err
			}
		}
		if err := tx.GetContext(ctx, &out, updatePageModelSQL, cur.ID, pq.StringArray(names)); err != nil {
			return err
		}
		return appendModelEvents(ctx, tx, inst, eventlog.SubjectPageModel, out.Name, s.now())
	})
	if err != nil {
		return PageModel{}, fmt.Errorf("update page model %q: %w", name, err)
	}
	return out, nil
}
