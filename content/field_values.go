package content

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/problem"
)

// Values are the field values of an item copy, keyed by field name, in the
// stored form: strings for text, html, link and dates (RFC 3339), JSON
// numbers and booleans, and objects for images ({url, label, ...}, with
// assetID when made from an asset), galleries ({galleryID}), item links
// ({contentID}) and list links ({contentIDs: [...]} for a selection, {}
// for the whole container).
type Values map[string]json.RawMessage

// Scan implements sql.Scanner.
func (v *Values) Scan(src any) error { return scanJSON(src, v) }

// Image is the stored value of an image field.
type Image struct {
	URL      string  `json:"url"`
	Label    string  `json:"label,omitempty"`
	Target   *string `json:"target,omitempty"`
	Filesize int64   `json:"filesize,omitempty"`
	Width    int     `json:"width,omitempty"`
	Height   int     `json:"height,omitempty"`
}

// ItemLink is the stored value of an item field.
type ItemLink struct {
	ContentID int64 `json:"contentID"`
}

// ListLink is the stored value of a list field: a selection of contentIDs in
// order, or (nil) the whole container.
type ListLink struct {
	ContentIDs []int64 `json:"contentIDs,omitempty"`
}

// Gallery is the stored value of a gallery field.
type Gallery struct {
	GalleryID int64 `json:"galleryID"`
}

const maxTextBytes = 1 << 20

// strictDecode decodes raw into v, refusing unknown members and trailing data.
func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// normalizeValues validates the field values given on a save against model m
// and returns them in stored form. A JSON null clears a field (it is returned
// as a nil value so that the caller deletes it).
func normalizeValues(ctx context.Context, q sqlx.QueryerContext, inst Instance, m Model, in map[string]json.RawMessage) (Values, error) {
	out := Values{}
	var errs []problem.FieldError
	add := func(name, reason string, args ...any) {
		errs = append(errs, problem.FieldError{Field: "fields." + name, Reason: fmt.Sprintf(reason, args...)})
	}
	for name, raw := range in {
		f, ok := m.Field(name)
		if !ok {
			add(name, "model %q has no field %q", m.Name, name)
			continue
		}
		raw = bytes.TrimSpace(raw)
		if bytes.Equal(raw, []byte("null")) {
			out[f.Name] = nil
			continue
		}
		v, err := normalizeValue(ctx, q, inst, f, raw)
		if err != nil {
			var qe queryError
			if errors.As(err, &qe) {
				return nil, qe.err
			}
			add(f.Name, "%s", err.Error())
			continue
		}
		out[f.Name] = v
	}
	return out, problem.Fields(errs)
}

func normalizeValue(ctx context.Context, q sqlx.QueryerContext, inst Instance, f Field, raw json.RawMessage) (json.RawMessage, error) {
	switch f.Type {
	case TypeText, TypeHTML, TypeLink:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("must be a string")
		}
		if len(s) > maxTextBytes {
			return nil, fmt.Errorf("must be at most %d bytes", maxTextBytes)
		}
		return json.Marshal(s)
	case TypeNumber, TypeDecimal:
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&n); err != nil || raw[0] == '"' {
			return nil, fmt.Errorf("must be a number")
		}
		if f.Type == TypeNumber {
			if _, err := n.Int64(); err != nil {
				return nil, fmt.Errorf("must be a whole number")
			}
		} else if _, err := n.Float64(); err != nil {
			return nil, fmt.Errorf("must be a number")
		}
		return json.RawMessage(n.String()), nil
	case TypeBoolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("must be true or false")
		}
		return json.Marshal(b)
	case TypeDate:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("must be an RFC 3339 date string")
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, fmt.Errorf("must be an RFC 3339 date like 2026-01-31T09:30:00+01:00")
		}
		return json.Marshal(t.Format(time.RFC3339))
	case TypeImage:
		if hasAssetID(raw) {
			return normalizeAssetImage(ctx, q, inst, raw)
		}
		var img Image
		if err := strictDecode(raw, &img); err != nil {
			return nil, fmt.Errorf("must be an object {url, label?, target?, filesize?, width?, height?}: %v", err)
		}
		u, err := url.Parse(img.URL)
		if img.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https" && !strings.HasPrefix(img.URL, "/")) {
			return nil, fmt.Errorf("url must be an http(s) URL or an absolute path")
		}
		if img.Filesize < 0 || img.Width < 0 || img.Height < 0 {
			return nil, fmt.Errorf("filesize, width and height must not be negative")
		}
		return json.Marshal(img)
	case TypeGallery:
		var g Gallery
		if err := strictDecode(raw, &g); err != nil || g.GalleryID <= 0 {
			return nil, fmt.Errorf("must be an object {galleryID} with a positive id")
		}
		if err := checkGallery(ctx, q, inst, g.GalleryID); err != nil {
			return nil, err
		}
		return json.Marshal(g)
	case TypeItem:
		var l ItemLink
		if err := strictDecode(raw, &l); err != nil || l.ContentID <= 0 {
			return nil, fmt.Errorf("must be an object {contentID} with a positive id")
		}
		if err := checkLinked(ctx, q, inst, f, []int64{l.ContentID}); err != nil {
			return nil, err
		}
		return json.Marshal(l)
	case TypeList:
		var l ListLink
		if err := strictDecode(raw, &l); err != nil {
			return nil, fmt.Errorf("must be an object {contentIDs: [...]} or {} for the whole container")
		}
		if l.ContentIDs != nil && len(l.ContentIDs) == 0 {
			return nil, fmt.Errorf("an empty selection: send null to clear the field, or {} for the whole container")
		}
		seen := map[int64]bool{}
		for _, id := range l.ContentIDs {
			if id <= 0 || seen[id] {
				return nil, fmt.Errorf("contentIDs must be distinct positive ids")
			}
			seen[id] = true
		}
		if l.ContentIDs == nil {
			if _, err := containerByName(ctx, q, inst, f.Container); problem.Is(err, problem.NotFound) {
				return nil, fmt.Errorf("container %q does not exist yet", f.Container)
			} else if err != nil {
				return nil, queryError{err}
			}
		}
		if err := checkLinked(ctx, q, inst, f, l.ContentIDs); err != nil {
			return nil, err
		}
		return json.Marshal(l)
	}
	return nil, fmt.Errorf("unsupported field type %q", f.Type)
}

// queryError marks a database failure met while validating a value, so that
// it is returned as such rather than as an invalid field.
type queryError struct{ err error }

func (e queryError) Error() string { return e.err.Error() }

// linkedInContainerSQL returns which of the ids $3 are items of the
// container named $2, looking each up by key (see the item reads in
// render/source/reader.go), never the container's items.
const linkedInContainerSQL = `SELECT i.content_id FROM (SELECT DISTINCT unnest((SELECT $3::bigint[])) AS id) AS t
	CROSS JOIN LATERAL (SELECT i.content_id, i.instance_id, i.container_id FROM items i
		WHERE i.content_id = t.id LIMIT 1) AS i
	CROSS JOIN LATERAL (SELECT 1 FROM containers c
		WHERE c.id = i.container_id AND lower(c.reference_name) = lower($2) LIMIT 1) AS c
	WHERE i.instance_id = $1`

// checkLinked checks that every id is an item of the field's container.
func checkLinked(ctx context.Context, q sqlx.QueryerContext, inst Instance, f Field, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var found []int64
	if err := sqlx.SelectContext(ctx, q, &found, linkedInContainerSQL, inst.ID, f.Container, pq.Array(ids)); err != nil {
		return queryError{err}
	}
	have := map[int64]bool{}
	for _, id := range found {
		have[id] = true
	}
	for _, id := range ids {
		if !have[id] {
			return fmt.Errorf("item %d is not in container %q", id, f.Container)
		}
	}
	return nil
}

// merge applies normalized changes to current values: a nil value deletes.
func merge(current, changes Values) Values {
	out := Values{}
	for k, v := range current {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// missingRequired returns an Invalid problem naming the required fields of m
// that vals lacks (or holds as an empty string).
func missingRequired(m Model, vals Values) error {
	var errs []problem.FieldError
	for _, f := range m.Fields {
		v, ok := vals[f.Name]
		if f.Required && (!ok || string(v) == `""`) {
			errs = append(errs, problem.FieldError{Field: "fields." + f.Name, Reason: "is required"})
		}
	}
	return problem.Fields(errs)
}
