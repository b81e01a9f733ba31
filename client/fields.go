package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrNoField is matched (with errors.Is) by the error of a Fields accessor
// when the field is absent or null, or, for numbers, booleans and dates, an
// empty string.
var ErrNoField = errors.New("field has no value")

// ErrNotExpanded is matched by the error of Fields.Item and Fields.Items
// when the field holds a reference to linked content instead of the content
// (the request's depth was too small); Fields.Link reads the reference.
// Item.Decode returns it (in a *DecodeError) for a reference the Go value
// cannot hold: a struct without a contentID field, or a whole-list link.
var ErrNotExpanded = errors.New("linked content is not expanded")

// Fields holds the field values of an item by field name, as the server sent
// them. Its accessors find a name exactly, or else case-insensitively, and
// convert the v1 shape (numbers, booleans and dates as strings).
type Fields map[string]json.RawMessage

// Raw returns the value of the field name as sent, and whether it is there.
func (f Fields) Raw(name string) (json.RawMessage, bool) {
	k, ok := f.key(name)
	return f[k], ok
}

// key returns the name under which f holds the field name: name itself, or
// else the first (in byte order) that equals it ignoring case.
func (f Fields) key(name string) (string, bool) {
	if _, ok := f[name]; ok {
		return name, true
	}
	best := ""
	for k := range f {
		if strings.EqualFold(k, name) && (best == "" || k < best) {
			best = k
		}
	}
	return best, best != ""
}

// Has reports whether the field name is present and not null.
func (f Fields) Has(name string) bool {
	_, err := f.value(name)
	return err == nil
}

// value returns the field's JSON, or an error matching ErrNoField.
func (f Fields) value(name string) (json.RawMessage, error) {
	v, ok := f.Raw(name)
	v = bytes.TrimSpace(v)
	if !ok || len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return nil, fmt.Errorf("field %q: %w", name, ErrNoField)
	}
	return v, nil
}

// Decode unmarshals the field name into v.
func (f Fields) Decode(name string, v any) error {
	raw, err := f.value(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("field %q: %w", name, err)
	}
	return nil
}

// String returns a text, rich text (HTML) or link (an HTML anchor) field.
func (f Fields) String(name string) (string, error) {
	var s string
	err := f.Decode(name, &s)
	return s, err
}

// scalar returns the text of a field that holds a number, boolean or date
// either as a JSON string (the v1 shape) or bare.
func (f Fields) scalar(name string) (string, error) {
	raw, err := f.value(name)
	if err != nil {
		return "", err
	}
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("field %q: %w", name, err)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return "", fmt.Errorf("field %q: %w", name, ErrNoField)
		}
	}
	return s, nil
}

// Int returns a whole-number field, sent as "12" or 12.
func (f Fields) Int(name string) (int64, error) {
	s, err := f.scalar(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %q: %q is not a whole number", name, s)
	}
	return n, nil
}

// Float returns a decimal field, sent as "1.5" or 1.5.
func (f Fields) Float(name string) (float64, error) {
	s, err := f.scalar(name)
	if err != nil {
		return 0, err
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("field %q: %q is not a number", name, s)
	}
	return x, nil
}

// Bool returns a boolean field, sent as "true" or true.
func (f Fields) Bool(name string) (bool, error) {
	s, err := f.scalar(name)
	if err != nil {
		return false, err
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("field %q: %q is not a boolean", name, s)
	}
	return b, nil
}

// Time returns a date field (RFC 3339, or without a zone taken as UTC), in
// UTC.
func (f Fields) Time(name string) (time.Time, error) {
	s, err := f.scalar(name)
	if err != nil {
		return time.Time{}, err
	}
	t, err := parseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("field %q: %w", name, err)
	}
	return t, nil
}

// Image is the value of an image field.
type Image struct {
	Label string `json:"label"`
	URL   string `json:"url"`
	// Target is the link target, or nil.
	Target *string `json:"target"`
	// Filesize is the size of the file in bytes.
	Filesize    int64  `json:"filesize"`
	PixelHeight string `json:"pixelHeight"`
	PixelWidth  string `json:"pixelWidth"`
	Height      int    `json:"height"`
	Width       int    `json:"width"`
}

// Image returns an image field.
func (f Fields) Image(name string) (*Image, error) {
	raw, err := f.object(name)
	if err != nil {
		return nil, err
	}
	var img Image
	if err := json.Unmarshal(raw, &img); err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	return &img, nil
}

// GalleryID returns the gallery of an image gallery field ({galleryid}),
// for Client.Gallery.
func (f Fields) GalleryID(name string) (int64, error) {
	raw, err := f.object(name)
	if err != nil {
		return 0, err
	}
	var g struct {
		GalleryID *int64 `json:"galleryid"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return 0, fmt.Errorf("field %q: %w", name, err)
	}
	if g.GalleryID == nil {
		return 0, fmt.Errorf("field %q: not a gallery (no galleryid)", name)
	}
	return *g.GalleryID, nil
}

// object returns a field that must be a JSON object.
func (f Fields) object(name string) (json.RawMessage, error) {
	raw, err := f.value(name)
	if err != nil {
		return nil, err
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("field %q: not an object", name)
	}
	return raw, nil
}

// Link is an unexpanded reference to linked content, with lower-case keys
// as the API sends it: {"contentid": 12} for a single item, or
// {"referencename": "posts", "fulllist": true} or
// {"referencename": "posts", "sortids": "3,1,2"} for a list.
type Link struct {
	// ContentID is the linked item of a single link, or 0.
	ContentID int64 `json:"contentid,omitempty"`
	// ReferenceName is the container of a list link.
	ReferenceName string `json:"referencename,omitempty"`
	// FullList is true when the link stands for the whole container.
	FullList bool `json:"fulllist,omitempty"`
	// SortIDs are the chosen items of a selection, in order.
	SortIDs []int64 `json:"-"`
}

// UnmarshalJSON decodes a reference; sortids may be a comma-separated
// string or an array of numbers.
func (l *Link) UnmarshalJSON(b []byte) error {
	type plain Link
	var aux struct {
		plain
		SortIDs json.RawMessage `json:"sortids"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*l = Link(aux.plain)
	ids, err := parseIDs(aux.SortIDs)
	if err != nil {
		return fmt.Errorf("sortids: %w", err)
	}
	l.SortIDs = ids
	return nil
}

// parseIDs reads "3,1,2" or [3,1,2]; null or "" is none.
func parseIDs(raw json.RawMessage) ([]int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '[' {
		var ids []int64
		err := json.Unmarshal(raw, &ids)
		return ids, err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	var ids []int64
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a list of ids", s)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Link returns the reference held by a linked-content field that was not
// expanded. A field holding expanded content is an error: read it with Item
// or Items.
func (f Fields) Link(name string) (*Link, error) {
	raw, err := f.object(name)
	if err != nil {
		return nil, err
	}
	if shapeOf(raw) == shapeItem {
		return nil, fmt.Errorf("field %q holds expanded content; read it with Item or Items", name)
	}
	var l Link
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	return &l, nil
}

// linkedItem decodes one element of linked content that must be expanded.
func linkedItem(name string, raw json.RawMessage) (Item, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return Item{}, fmt.Errorf("field %q: not linked content", name)
	}
	if shapeOf(raw) != shapeItem {
		return Item{}, fmt.Errorf("field %q: %w", name, ErrNotExpanded)
	}
	var it Item
	if err := json.Unmarshal(raw, &it); err != nil {
		return Item{}, fmt.Errorf("field %q: %w", name, err)
	}
	return it, nil
}

// Item returns the expanded item of a single-link field. The API sends it as
// an object, or (with expandAllContentLinks) as an array of one item; an
// empty array has no value. A reference that was not expanded is
// ErrNotExpanded.
func (f Fields) Item(name string) (*Item, error) {
	raw, err := f.value(name)
	if err != nil {
		return nil, err
	}
	if raw[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		switch len(arr) {
		case 0:
			return nil, fmt.Errorf("field %q: %w", name, ErrNoField)
		case 1:
			raw = bytes.TrimSpace(arr[0])
		default:
			return nil, fmt.Errorf("field %q holds %d items; read it with Items", name, len(arr))
		}
	}
	it, err := linkedItem(name, raw)
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// Items returns the expanded items of a list-link field: an array of items,
// or a single item object as a list of one. An empty array is an empty list.
// A reference that was not expanded is ErrNotExpanded.
func (f Fields) Items(name string) ([]Item, error) {
	raw, err := f.value(name)
	if err != nil {
		return nil, err
	}
	if raw[0] != '[' {
		it, err := linkedItem(name, raw)
		if err != nil {
			return nil, err
		}
		return []Item{it}, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	items := make([]Item, 0, len(arr))
	for _, el := range arr {
		it, err := linkedItem(name, bytes.TrimSpace(el))
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}
