package fetch

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Comparison rules shared by filters and sorts. A value is a number when it
// reads as a decimal number (-12, 3.5, 1e3), else a time when it reads as
// RFC 3339 or as 2006-01-02T15:04:05[.fff] (UTC) or 2006-01-02, else a
// string. Two numbers compare as numbers, two times as instants, anything
// else as strings compared case-insensitively (lower-cased, then by code
// point).

type class uint8

const (
	classNumber class = iota
	classTime
	classString
)

// scalar is a value classified for comparison.
type scalar struct {
	low   string // lower-cased text
	num   float64
	t     time.Time
	class class
}

// classify classifies a lower-cased text.
func classify(low string) scalar {
	if n, ok := parseNumber(low); ok {
		return scalar{low: low, num: n, class: classNumber}
	}
	if t, ok := parseTime(low); ok {
		return scalar{low: low, t: t, class: classTime}
	}
	return scalar{low: low, class: classString}
}

// scalarOf classifies a decoded JSON value; objects, arrays and null are
// not scalars.
func scalarOf(v any) (scalar, bool) {
	switch v := v.(type) {
	case string:
		return classify(strings.ToLower(v)), true
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return scalar{}, false
		}
		return scalar{low: strconv.FormatFloat(v, 'f', -1, 64), num: v, class: classNumber}, true
	case int:
		return scalar{low: strconv.Itoa(v), num: float64(v), class: classNumber}, true
	case int64:
		return scalar{low: strconv.FormatInt(v, 10), num: float64(v), class: classNumber}, true
	case json.Number:
		return classify(strings.ToLower(string(v))), true
	case bool:
		return scalar{low: strconv.FormatBool(v), class: classString}, true
	}
	return scalar{}, false
}

// parseNumber accepts -?digits(.digits)?([eE][+-]?digits)? with a finite value.
func parseNumber(s string) (float64, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i > start
	}
	if !digits() {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(n, 0) {
		return 0, false
	}
	return n, true
}

// parseTime accepts RFC 3339, 2006-01-02T15:04:05 with optional fraction
// (taken as UTC) and 2006-01-02, with 'T' and 'Z' in either case.
func parseTime(s string) (time.Time, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' || !isDigit(s[0]) || !isDigit(s[5]) || !isDigit(s[8]) {
		return time.Time{}, false
	}
	if len(s) == 10 {
		t, err := time.Parse(time.DateOnly, s)
		return t, err == nil
	}
	if strings.ContainsAny(s, "tz") {
		s = strings.Map(func(r rune) rune {
			if r == 't' || r == 'z' {
				return r - 'a' + 'A'
			}
			return r
		}, s)
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	t, err := time.Parse("2006-01-02T15:04:05", s)
	return t, err == nil
}

// compare orders two scalars by the comparison rules.
func compare(x, y scalar) int {
	switch {
	case x.class != y.class || x.class == classString:
		return strings.Compare(x.low, y.low)
	case x.class == classNumber:
		switch {
		case x.num < y.num:
			return -1
		case x.num > y.num:
			return 1
		}
		return 0
	}
	return x.t.Compare(y.t)
}

// lookup follows a lower-cased dotted path through nested objects, matching
// member names case-insensitively (an exact match first; among several that
// differ only in case, the smallest). A null value counts as missing.
func lookup(item map[string]any, path []string) (any, bool) {
	var cur any = item
	for _, seg := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := m[seg]
		if !ok {
			found := ""
			for k, kv := range m {
				if strings.EqualFold(k, seg) && (!ok || k < found) {
					v, found, ok = kv, k, true
				}
			}
			if !ok {
				return nil, false
			}
		}
		cur = v
	}
	return cur, cur != nil
}

// Match reports whether a decoded content item (an object such as
// {contentID, properties{...}, fields{...}}) passes the filter. A nil filter
// passes everything.
//
// The property path is looked up member by member, case-insensitively.
// Values compare by the package's rules: as numbers when both sides are
// numbers, as instants when both are times, otherwise as case-insensitive
// strings. like is a case-insensitive substring test; with % or * in the
// value it is a pattern over the whole value where either stands for any
// run of characters. contains splits a string value at commas (or looks
// into an array) and tests its elements for equality. in tests equality
// with any listed value; range is inclusive. A missing, null, object or
// array property matches nothing but ne.
func (f *Filter) Match(item map[string]any) bool {
	if f == nil {
		return true
	}
	if f.Terms != nil {
		for _, t := range f.Terms {
			if t.Match(item) == f.Or {
				return f.Or
			}
		}
		return !f.Or
	}
	path, vals := f.path, f.vals
	if path == nil || len(vals) != len(f.Values) { // not from ParseFilter
		path = strings.Split(strings.ToLower(f.Property), ".")
		vals = make([]scalar, len(f.Values))
		for i, v := range f.Values {
			vals[i] = classify(strings.ToLower(v))
		}
	}
	if len(vals) == 0 || f.Op == Range && len(vals) != 2 {
		return false
	}
	v, ok := lookup(item, path)
	if !ok {
		return f.Op == Ne
	}
	if arr, isArr := v.([]any); isArr && f.Op == Contains {
		for _, e := range arr {
			if x, ok := scalarOf(e); ok && compare(x, vals[0]) == 0 {
				return true
			}
		}
		return false
	}
	x, ok := scalarOf(v)
	if !ok {
		return f.Op == Ne
	}
	switch f.Op {
	case Eq:
		return compare(x, vals[0]) == 0
	case Ne:
		return compare(x, vals[0]) != 0
	case Lt:
		return compare(x, vals[0]) < 0
	case Lte:
		return compare(x, vals[0]) <= 0
	case Gt:
		return compare(x, vals[0]) > 0
	case Gte:
		return compare(x, vals[0]) >= 0
	case Like:
		return like(x.low, vals[0].low)
	case In:
		for _, y := range vals {
			if compare(x, y) == 0 {
				return true
			}
		}
		return false
	case Contains:
		for part := range strings.SplitSeq(x.low, ",") {
			if compare(classify(strings.TrimSpace(part)), vals[0]) == 0 {
				return true
			}
		}
		return false
	case Range:
		return compare(x, vals[0]) >= 0 && compare(x, vals[1]) <= 0
	}
	return false
}

// like matches a lower-cased value against a lower-cased pattern: a
// substring test, or with wildcards (% or *) a match of the whole value.
func like(s, pat string) bool {
	first := strings.IndexAny(pat, "%*")
	if first < 0 {
		return strings.Contains(s, pat)
	}
	last := strings.LastIndexAny(pat, "%*")
	prefix, suffix := pat[:first], pat[last+1:]
	if len(s) < len(prefix)+len(suffix) || !strings.HasPrefix(s, prefix) || !strings.HasSuffix(s, suffix) {
		return false
	}
	mid := s[len(prefix) : len(s)-len(suffix)]
	for _, part := range strings.FieldsFunc(pat[first:last+1], func(r rune) bool { return r == '%' || r == '*' }) {
		i := strings.Index(mid, part)
		if i < 0 {
			return false
		}
		mid = mid[i+len(part):]
	}
	return true
}

// Sorter orders decoded content items by the value at one dotted path, by
// the comparison rules of Match. Values of different classes order numbers
// first, then times, then strings, so that the order is total. Items where
// the value is missing (or null, an object or an array) come last in either
// direction, and equal items keep their order.
type Sorter struct {
	path []string
	desc bool
}

// NewSorter returns a Sorter by sortPath (a dotted path such as
// properties.modified, matched case-insensitively) in direction "asc" or
// "desc" (any case; anything else is asc). An empty sortPath orders nothing.
func NewSorter(sortPath, direction string) Sorter {
	var path []string
	if sortPath != "" {
		path = strings.Split(strings.ToLower(sortPath), ".")
	}
	return Sorter{path: path, desc: strings.EqualFold(direction, "desc")}
}

func (s Sorter) key(item map[string]any) (scalar, bool) {
	if s.path == nil {
		return scalar{}, false
	}
	v, ok := lookup(item, s.path)
	if !ok {
		return scalar{}, false
	}
	return scalarOf(v)
}

func (s Sorter) order(x scalar, okx bool, y scalar, oky bool) int {
	switch {
	case !okx || !oky:
		if okx == oky {
			return 0
		}
		if okx {
			return -1
		}
		return 1
	}
	c := int(x.class) - int(y.class)
	if c == 0 {
		c = compare(x, y)
	}
	if s.desc {
		return -c
	}
	return c
}

// Compare returns a negative number when a sorts before b, a positive one
// when after, and 0 when they are equal, for slices.SortStableFunc.
func (s Sorter) Compare(a, b map[string]any) int {
	x, okx := s.key(a)
	y, oky := s.key(b)
	return s.order(x, okx, y, oky)
}

// Sort sorts items stably, reading each item's value once.
func (s Sorter) Sort(items []map[string]any) {
	if s.path == nil || len(items) < 2 {
		return
	}
	type keyed struct {
		item map[string]any
		key  scalar
		ok   bool
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		k, ok := s.key(it)
		ks[i] = keyed{it, k, ok}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return s.order(a.key, a.ok, b.key, b.ok) })
	for i := range ks {
		items[i] = ks[i].item
	}
}
