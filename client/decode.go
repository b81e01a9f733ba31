package client

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
)

// Decode stores the item in v, which must be a non-nil pointer to a
// struct. Each exported field of the struct receives one part of the item,
// named by its `edgecms` tag or, without a tag, by the Go field's name:
//
//	type Post struct {
//		ContentID  int64             // the item's contentID
//		Properties client.Properties // its properties
//		Modified   time.Time `edgecms:"properties.modified"`
//		Title      string            // the field "title" (or "Title")
//		Minutes    int       `edgecms:"readingMinutes"`
//		Author     *Author           // a linked item, decoded the same way
//		AuthorID   int64             // the companion field "authorID"
//		Tags       []Tag             // a linked list
//		TagIDs     []int64   `edgecms:"tags_ValueField"`
//		Internal   string    `edgecms:"-"` // left alone
//	}
//
// A name is looked up among the item's fields exactly, or else ignoring
// case, except for these names of the item's own members (matched ignoring
// case): contentID, properties (all of them), properties.<name> (one of
// them: state, modified, versionID, referenceName, definitionName,
// itemOrder), seo and fields (all the fields, as a Fields map). A content
// field with one of these names is reached as fields.<name>. An untagged
// embedded struct has its fields decoded as if they were the outer
// struct's, as encoding/json does; embedding Item gets every member of the
// item.
//
// Values are converted to the Go type of the struct field:
//
//   - string: text, rich text (HTML), link (an HTML anchor) fields; a bare
//     number or boolean gives its JSON text.
//   - integers, floats, bool: the v1 string forms ("42", "4.5", "true")
//     and bare JSON values alike.
//   - time.Time: dates and properties.modified (RFC 3339, or without a
//     zone taken as UTC), in UTC.
//   - a struct (or pointer to one) for linked content: an expanded item is
//     decoded into it by these same rules; an unexpanded reference
//     ({contentid}) gives a struct holding only its contentID, and is an
//     error matching ErrNotExpanded when the struct has no place for a
//     contentID. A link expanded as an array of one item (with
//     expandAllContentLinks) is that item.
//   - a slice of structs for linked lists: the expanded items in the order
//     sent; an unexpanded selection ({referencename, sortids}) gives one
//     element per id holding only its contentID; an unexpanded whole-list
//     link ({referencename, fulllist}) has no ids and is an error matching
//     ErrNotExpanded (ask for ExpandAll).
//   - an integer, or a slice of integers, from linked content: the
//     contentID(s) of the link, expanded or not; from the comma-separated
//     companion <name>_ValueField, its ids; from an image gallery field
//     ({galleryid}), the gallery's id (for Client.Gallery).
//   - Link: the reference of linked content; from expanded content, the
//     contentID of an item or the ids of a list.
//   - any other struct or pointer to one, from an object that is not
//     linked content (an image, a gallery), and maps, interfaces,
//     json.RawMessage and types implementing json.Unmarshaler: through
//     encoding/json, so Image, Gallery or your own types with json tags
//     work. Types implementing encoding.TextUnmarshaler take JSON strings.
//
// Like encoding/json, Decode leaves a struct field as it is when the item
// has no value for it: the field is absent or null, a number, boolean or
// date is an empty string, or a single link is an empty array. Members of
// the item that no struct field names are ignored.
//
// A value that does not fit its Go field is a *DecodeError naming the
// item's field, the value sent and the Go field; Decode stops at the first
// one. A struct that cannot receive an item at all (a tag naming a path
// Decode does not know, a field of a type it cannot fill such as a
// channel) is an error too, whatever the item holds.
func (it *Item) Decode(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("edgecms: Item.Decode needs a non-nil pointer to a struct, not %T", v)
	}
	p, err := planOf(rv.Elem().Type())
	if err != nil {
		return err
	}
	d := decoder{contentID: it.ContentID}
	return d.item(it, p, rv.Elem(), "")
}

// DecodeError is a value of an item that does not fit the Go field it is
// decoded into.
type DecodeError struct {
	// ContentID is the item being decoded.
	ContentID int64
	// Path names the value in the item: a field ("readingMinutes"), a
	// member ("properties.modified"), or a value inside linked content
	// ("author.name", "tags[1].title").
	Path string
	// Value is the value as sent (JSON), shortened to about 80 bytes.
	Value string
	// GoField is the struct field ("Post.Minutes") and GoType its type.
	GoField string
	GoType  reflect.Type
	// Err says why the value does not fit; ErrNotExpanded for linked
	// content that was not expanded and cannot be held as a reference.
	Err error
}

// Error reads, for example, `edgecms: item 42: field "readingMinutes" =
// "4.5" does not fit Post.Minutes (int): not a whole number`.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("edgecms: item %d: field %q = %s does not fit %s (%v): %v",
		e.ContentID, e.Path, e.Value, e.GoField, e.GoType, e.Err)
}

// Unwrap returns the reason.
func (e *DecodeError) Unwrap() error { return e.Err }

// GetItem reads the item contentID of locale (Client.Item) and decodes it
// into a new T, a struct type (see Item.Decode).
func GetItem[T any](ctx context.Context, c *Client, locale string, contentID int64, opts ItemOptions) (*T, error) {
	it, err := c.Item(ctx, locale, contentID, opts)
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := it.Decode(v); err != nil {
		return nil, err
	}
	return v, nil
}

// ListOf is one page of a container's items, decoded.
type ListOf[T any] struct {
	Items []T
	// TotalCount is the number of items matching the request's filter in
	// the whole container, not only on this page.
	TotalCount int
}

// GetList reads one page of the container referenceName (Client.List) and
// decodes its items into T, a struct type (see Item.Decode).
func GetList[T any](ctx context.Context, c *Client, locale, referenceName string, opts ListOptions) (*ListOf[T], error) {
	l, err := c.List(ctx, locale, referenceName, opts)
	if err != nil {
		return nil, err
	}
	items, err := decodeAll[T](l.Items)
	if err != nil {
		return nil, err
	}
	return &ListOf[T]{Items: items, TotalCount: l.TotalCount}, nil
}

// GetAllItems reads the whole container referenceName (Client.AllItems)
// and decodes its items into T, a struct type (see Item.Decode).
func GetAllItems[T any](ctx context.Context, c *Client, locale, referenceName string, opts ListOptions) ([]T, error) {
	all, err := c.AllItems(ctx, locale, referenceName, opts)
	if err != nil {
		return nil, err
	}
	return decodeAll[T](all)
}

func decodeAll[T any](items []Item) ([]T, error) {
	out := make([]T, len(items))
	for i := range items {
		if err := items[i].Decode(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// part is the member of an item a struct field receives.
type part int

const (
	partField      part = iota // a field, by name
	partContentID              // contentID
	partProperties             // properties
	partProperty               // properties.<name>
	partSEO                    // seo
	partFields                 // fields, all of them
)

// fieldPlan says where one struct field comes from.
type fieldPlan struct {
	index  []int
	goName string // "Post.Minutes"
	part   part
	name   string // the field or property name
}

// structPlan is how an item decodes into a struct type.
type structPlan struct {
	fields []fieldPlan
	// holdsID is true when a field receives the contentID, so that an
	// unexpanded reference has somewhere to go.
	holdsID bool
}

var plans sync.Map // reflect.Type -> planResult

type planResult struct {
	p   *structPlan
	err error
}

// planOf returns the plan of struct type t, made once.
func planOf(t reflect.Type) (*structPlan, error) {
	if r, ok := plans.Load(t); ok {
		return r.(planResult).p, r.(planResult).err
	}
	p := &structPlan{}
	err := p.add(t, nil)
	if err != nil {
		p = nil
	}
	plans.Store(t, planResult{p, err})
	return p, err
}

// add plans the fields of struct type t, found at index in the outer
// struct.
func (p *structPlan) add(t reflect.Type, index []int) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("edgecms")
		if tag == "-" {
			continue
		}
		at := append(append([]int(nil), index...), i)
		if sf.Anonymous && !tagged && sf.Type.Kind() == reflect.Struct && !leaf(sf.Type) {
			if err := p.add(sf.Type, at); err != nil {
				return err
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		goName := sf.Name
		if t.Name() != "" {
			goName = t.Name() + "." + sf.Name
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" {
			return fmt.Errorf("edgecms: %s: tag %q: Decode knows no options (%q)", goName, tag, opts)
		}
		if name == "" {
			name = sf.Name
		}
		fp, err := planField(name)
		if err != nil {
			return fmt.Errorf("edgecms: %s: %w", goName, err)
		}
		if err := fillable(sf.Type); err != nil {
			return fmt.Errorf("edgecms: %s: %w", goName, err)
		}
		fp.index, fp.goName = at, goName
		p.fields = append(p.fields, fp)
		p.holdsID = p.holdsID || fp.part == partContentID
	}
	return nil
}

// planField reads the name of a tag (or a Go field).
func planField(name string) (fieldPlan, error) {
	head, rest, dotted := strings.Cut(name, ".")
	switch {
	case dotted && strings.EqualFold(head, "properties"):
		if _, known := (Properties{}).member(rest); !known {
			return fieldPlan{}, fmt.Errorf("%q: an item's properties are state, modified, versionID, referenceName, definitionName and itemOrder", name)
		}
		return fieldPlan{part: partProperty, name: rest}, nil
	case dotted && strings.EqualFold(head, "fields") && rest != "":
		return fieldPlan{part: partField, name: rest}, nil
	case dotted:
		return fieldPlan{}, fmt.Errorf("%q is neither properties.<name> nor fields.<name>", name)
	case strings.EqualFold(name, "contentID"):
		return fieldPlan{part: partContentID}, nil
	case strings.EqualFold(name, "properties"):
		return fieldPlan{part: partProperties}, nil
	case strings.EqualFold(name, "seo"):
		return fieldPlan{part: partSEO}, nil
	case strings.EqualFold(name, "fields"):
		return fieldPlan{part: partFields}, nil
	}
	return fieldPlan{part: partField, name: name}, nil
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
	linkType = reflect.TypeFor[Link]()
	jsonType = reflect.TypeFor[json.Unmarshaler]()
	textType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// leaf reports whether t is filled as one value rather than field by
// field: time.Time, json.RawMessage, Link and types that unmarshal
// themselves.
func leaf(t reflect.Type) bool {
	switch t {
	case timeType, rawType, linkType:
		return true
	}
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonType) || pt.Implements(textType)
}

// fillable checks that Decode can fill a value of type t.
func fillable(t reflect.Type) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if leaf(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Array, reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return fmt.Errorf("Decode cannot fill a %v", t)
	}
	return nil
}
