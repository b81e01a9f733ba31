package client

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// decoder decodes one item; contentID names it in errors.
type decoder struct {
	contentID int64
}

// item decodes it into v, a struct planned by p; path is where the item
// sits in the outer item ("" at the top).
func (d decoder) item(it *Item, p *structPlan, v reflect.Value, path string) error {
	for _, fp := range p.fields {
		var raw json.RawMessage
		var at string
		switch fp.part {
		case partContentID:
			at = "contentID"
			if it.ContentID != 0 {
				raw = strconv.AppendInt(nil, it.ContentID, 10)
			}
		case partProperties:
			at = "properties"
			if it.Properties != (Properties{}) {
				raw, _ = json.Marshal(it.Properties) // a struct of strings and numbers
			}
		case partProperty:
			at = "properties." + fp.name
			raw, _ = it.Properties.member(fp.name)
		case partSEO:
			at, raw = "seo", it.SEO
		case partFields:
			at = "fields"
			if it.Fields != nil {
				raw, _ = json.Marshal(it.Fields) // valid JSON values by name
			}
		case partField:
			at = fp.name
			if k, ok := it.Fields.key(fp.name); ok {
				at, raw = k, it.Fields[k]
			}
		}
		if path != "" {
			at = path + "." + at
		}
		if err := d.value(v.FieldByIndex(fp.index), bytes.TrimSpace(raw), at, fp.goName); err != nil {
			return err
		}
	}
	return nil
}

// member returns the property name (any case) as JSON, or nil when it is
// absent or zero, and whether an item has such a property.
func (p Properties) member(name string) (json.RawMessage, bool) {
	num := func(n int64) (json.RawMessage, bool) {
		if n == 0 {
			return nil, true
		}
		return strconv.AppendInt(nil, n, 10), true
	}
	str := func(s string) (json.RawMessage, bool) {
		if s == "" {
			return nil, true
		}
		b, _ := json.Marshal(s) // a string always marshals
		return b, true
	}
	switch strings.ToLower(name) {
	case "state":
		return num(int64(p.State))
	case "modified":
		return str(p.ModifiedRaw)
	case "versionid":
		return num(p.VersionID)
	case "referencename":
		return str(p.ReferenceName)
	case "definitionname":
		return str(p.DefinitionName)
	case "itemorder":
		return num(int64(p.ItemOrder))
	}
	return nil, false
}

// fail makes the error of raw at path not fitting v.
func (d decoder) fail(v reflect.Value, raw json.RawMessage, path, goName string, err error) error {
	return &DecodeError{ContentID: d.contentID, Path: path, Value: shorten(raw), GoField: goName, GoType: v.Type(), Err: err}
}

// shorten returns raw, cut to about 80 bytes at a rune boundary.
func shorten(raw json.RawMessage) string {
	const max = 80
	if len(raw) <= max {
		return string(raw)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	return string(raw[:cut]) + "…"
}

// value stores raw, the JSON of the item's value at path, in v.
func (d decoder) value(v reflect.Value, raw json.RawMessage, path, goName string) error {
	if noValue(v.Type(), raw) {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		elem := v
		if v.IsNil() {
			elem = reflect.New(v.Type().Elem())
		}
		if err := d.value(elem.Elem(), raw, path, goName); err != nil {
			return err
		}
		v.Set(elem)
		return nil
	}
	t := v.Type()
	switch {
	case t == timeType:
		s, err := scalarText(raw)
		if err == nil {
			var tm time.Time
			if tm, err = parseTime(s); err == nil {
				v.Set(reflect.ValueOf(tm))
				return nil
			}
		}
		return d.fail(v, raw, path, goName, err)
	case t == linkType:
		l, err := linkOf(raw)
		if err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		v.Set(reflect.ValueOf(l))
		return nil
	case reflect.PointerTo(t).Implements(jsonType) || t.Kind() == reflect.Map || t.Kind() == reflect.Interface:
		if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		return nil
	case reflect.PointerTo(t).Implements(textType):
		var s string
		err := json.Unmarshal(raw, &s)
		if err == nil {
			err = v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
		} else {
			err = errors.New("not a string")
		}
		if err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		if raw[0] == '"' {
			s, err := text(raw) // as sent, spaces included
			if err != nil {
				return d.fail(v, raw, path, goName, err)
			}
			v.SetString(s)
			return nil
		}
	case reflect.Struct:
		return d.linked(v, raw, path, goName)
	case reflect.Slice:
		return d.slice(v, raw, path, goName)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
			id, err := idOf(raw)
			if err != nil {
				return d.fail(v, raw, path, goName, err)
			}
			raw = strconv.AppendInt(nil, id, 10)
		}
	}
	s, err := scalarText(raw)
	if err == nil {
		err = setScalar(v, s)
	}
	if err != nil {
		return d.fail(v, raw, path, goName, err)
	}
	return nil
}

// noValue reports whether raw holds no value for a Go value of type t:
// absent or null; an empty (or blank) string for a number, boolean or
// date; an empty array for a single linked item.
func noValue(t reflect.Type, raw json.RawMessage) bool {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch raw[0] {
	case '"':
		if t.Kind() == reflect.String || (t != timeType && leaf(t)) {
			return false
		}
		s, err := text(raw)
		return err == nil && strings.TrimSpace(s) == ""
	case '[':
		return t.Kind() == reflect.Struct && !leaf(t) && isEmptyArray(raw)
	}
	return false
}

func isEmptyArray(raw json.RawMessage) bool {
	var arr []json.RawMessage
	return json.Unmarshal(raw, &arr) == nil && len(arr) == 0
}

// text returns the string a JSON string holds.
func text(raw json.RawMessage) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil // no escapes: the bytes between the quotes
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// scalarText returns the text of a number, boolean or date sent as a JSON
// string (the v1 form, trimmed) or bare.
func scalarText(raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		s, err := text(raw)
		return strings.TrimSpace(s), err
	case '{', '[':
		return "", errors.New("not a single value")
	}
	return string(raw), nil
}

// setScalar parses s into v, a string, boolean or number.
func setScalar(v reflect.Value, s string) error {
	t := v.Type()
	switch t.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("not true or false")
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, t.Bits())
		if err != nil {
			return numberError(err, t, "not a whole number")
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, t.Bits())
		if err != nil {
			return numberError(err, t, "not a whole number from 0 up")
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(s, t.Bits())
		if err != nil {
			return numberError(err, t, "not a number")
		}
		v.SetFloat(x)
	default:
		return fmt.Errorf("Decode cannot fill a %v", t)
	}
	return nil
}

// numberError explains why strconv could not parse a number for t.
func numberError(err error, t reflect.Type, what string) error {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("out of range for %v", t)
	}
	return errors.New(what)
}

// shape is what a JSON value of a field stands for.
type shape int

const (
	shapeOther   shape = iota // not an object of linked content
	shapeItem                 // an expanded item: it has fields or properties
	shapeRef                  // an unexpanded single link: {contentid}
	shapeListRef              // an unexpanded list link: {referencename, ...}
)

// shapeOf tells linked content from other values by the keys of an object
// (in any case, as the API's lower-case references have them).
func shapeOf(raw json.RawMessage) shape {
	if len(raw) == 0 || raw[0] != '{' {
		return shapeOther
	}
	var keys struct {
		Fields, Properties, ContentID, ReferenceName json.RawMessage
	}
	switch {
	case json.Unmarshal(raw, &keys) != nil:
		return shapeOther
	case keys.Fields != nil || keys.Properties != nil:
		return shapeItem
	case keys.ContentID != nil:
		return shapeRef
	case keys.ReferenceName != nil:
		return shapeListRef
	}
	return shapeOther
}

// elements splits a JSON array.
func elements(raw json.RawMessage) ([]json.RawMessage, error) {
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, err
	}
	for i := range arr {
		arr[i] = bytes.TrimSpace(arr[i])
	}
	return arr, nil
}

// linked stores linked content (or, for an object that is not linked
// content, any JSON object) in v, a struct.
func (d decoder) linked(v reflect.Value, raw json.RawMessage, path, goName string) error {
	if raw[0] == '[' {
		arr, err := elements(raw)
		if err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		if len(arr) != 1 {
			return d.fail(v, raw, path, goName, fmt.Errorf("holds %d items; decode it into a slice", len(arr)))
		}
		return d.linked(v, arr[0], path, goName)
	}
	switch sh := shapeOf(raw); {
	case sh == shapeItem || sh == shapeRef:
		var it Item
		if err := json.Unmarshal(raw, &it); err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		p, err := planOf(v.Type())
		if err != nil {
			return err
		}
		if sh == shapeRef && !p.holdsID {
			return d.fail(v, raw, path, goName, fmt.Errorf("%w, and %v has no field for its contentID", ErrNotExpanded, v.Type()))
		}
		return d.item(&it, p, v, path)
	case sh == shapeListRef:
		return d.fail(v, raw, path, goName, fmt.Errorf("%w: a list link; decode it into a slice", ErrNotExpanded))
	case raw[0] == '{':
		if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		return nil
	}
	return d.fail(v, raw, path, goName, errors.New("not an object"))
}

// slice stores an array, linked content or a comma-separated list of ids
// in v, a slice.
func (d decoder) slice(v reflect.Value, raw json.RawMessage, path, goName string) error {
	var arr []json.RawMessage
	switch sh := shapeOf(raw); {
	case raw[0] == '[':
		var err error
		if arr, err = elements(raw); err != nil {
			return d.fail(v, raw, path, goName, err)
		}
	case sh == shapeItem || sh == shapeRef:
		arr = []json.RawMessage{raw}
	case sh == shapeListRef:
		var l Link
		if err := json.Unmarshal(raw, &l); err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		if l.FullList {
			return d.fail(v, raw, path, goName, fmt.Errorf("%w: a whole-list link has no ids (ask for ExpandAll)", ErrNotExpanded))
		}
		for _, id := range l.SortIDs {
			arr = append(arr, fmt.Appendf(nil, `{"contentid":%d}`, id))
		}
	case raw[0] == '"' && isInteger(v.Type().Elem()):
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return d.fail(v, raw, path, goName, err)
		}
		for part := range strings.SplitSeq(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				arr = append(arr, json.RawMessage(strconv.Quote(part)))
			}
		}
	default:
		return d.fail(v, raw, path, goName, errors.New("not a list"))
	}
	out := reflect.MakeSlice(v.Type(), len(arr), len(arr))
	for i, el := range arr {
		if err := d.value(out.Index(i), el, fmt.Sprintf("%s[%d]", path, i), goName); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

func isInteger(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// idOf returns the id an object stands for, for an integer: the contentID
// of linked content (an item, a reference, an array of one item) or the
// galleryid of a gallery.
func idOf(raw json.RawMessage) (int64, error) {
	if raw[0] == '[' {
		arr, err := elements(raw)
		if err != nil {
			return 0, err
		}
		if len(arr) != 1 {
			return 0, fmt.Errorf("holds %d items; decode it into a slice", len(arr))
		}
		raw = arr[0]
	}
	var ids struct {
		ContentID *int64 `json:"contentID"` // matches contentid too
		GalleryID *int64 `json:"galleryid"`
	}
	switch sh := shapeOf(raw); {
	case sh == shapeListRef:
		return 0, errors.New("a list link; decode it into a slice")
	case raw[0] != '{' || json.Unmarshal(raw, &ids) != nil:
	case (sh == shapeItem || sh == shapeRef) && ids.ContentID != nil:
		return *ids.ContentID, nil
	case sh == shapeOther && ids.GalleryID != nil:
		return *ids.GalleryID, nil
	}
	return 0, errors.New("neither linked content nor a gallery")
}

// linkOf reads the reference of linked content, expanded or not.
func linkOf(raw json.RawMessage) (Link, error) {
	if raw[0] == '[' {
		arr, err := elements(raw)
		if err != nil {
			return Link{}, err
		}
		l := Link{SortIDs: []int64{}}
		for _, el := range arr {
			var it Item
			if shapeOf(el) != shapeItem || json.Unmarshal(el, &it) != nil {
				return Link{}, errors.New("not a list of items")
			}
			if l.ReferenceName == "" {
				l.ReferenceName = it.Properties.ReferenceName
			}
			l.SortIDs = append(l.SortIDs, it.ContentID)
		}
		return l, nil
	}
	var l Link
	switch shapeOf(raw) {
	case shapeItem:
		var it Item
		err := json.Unmarshal(raw, &it)
		return Link{ContentID: it.ContentID}, err
	case shapeRef, shapeListRef:
		err := json.Unmarshal(raw, &l)
		return l, err
	}
	return l, errors.New("not linked content")
}
