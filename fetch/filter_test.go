package fetch

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseFilterString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`fields.title[eq]"Hello"`, `fields.title[eq]hello`},
		{`fields.title[eq]"Hello World"`, `fields.title[eq]"hello world"`},
		{`fields.title[EQ]Hello World`, `fields.title[eq]"hello world"`},
		{`fields.title[eq]  Hello  `, `fields.title[eq]hello`},
		{`Fields.Title[Eq]x`, `fields.title[eq]x`},
		{`contentID[le]5`, `contentid[lte]5`},
		{`contentID[ge]5`, `contentid[gte]5`},
		{`contentID[LTE]5`, `contentid[lte]5`},
		{`a[ne]1`, `a[ne]1`},
		{`a[lt]1`, `a[lt]1`},
		{`a[gt]-1.5e3`, `a[gt]-1.5e3`},
		{`a[like]"%Foo%"`, `a[like]"%foo%"`},
		{`a[contains]red`, `a[contains]red`},
		{`fields.tag[in]"B","a",c`, `fields.tag[in]a,b,c`},
		{`fields.tag[in] b , a , b`, `fields.tag[in]a,b`},
		{`fields.tag[in]"a,b"`, `fields.tag[eq]"a,b"`},
		{`a[in]1`, `a[eq]1`},
		{`a[in]1,1`, `a[eq]1`},
		{`a[range]2,2`, `a[eq]2`},
		{`a[range]1,2`, `a[range]1,2`},
		{`x[range]1,10`, `x[range]1,10`},
		{`x[range]"a", "z"`, `x[range]a,z`},
		{`x[eq]"say \"hi\""`, `x[eq]"say \"hi\""`},
		{`x[eq]"a\\b"`, `x[eq]"a\\b"`},
		{`x[eq]""`, `x[eq]""`},
		{`x[eq]x,y`, `x[eq]"x,y"`},
		{`x[eq]café`, `x[eq]"café"`},
		{`x[eq]and`, `x[eq]and`},
		{`x[eq]ORACLE`, `x[eq]oracle`},
		{`x[eq]andy and y[eq]1`, `x[eq]andy and y[eq]1`},
		{`properties.modified[gt]2024-01-01T00:00:00`, `properties.modified[gt]2024-01-01t00:00:00`},
		{`a[eq]1 AND b[eq]2`, `a[eq]1 and b[eq]2`},
		{`b[eq]2 and a[eq]1`, `a[eq]1 and b[eq]2`},
		{`a[eq]1  Or  b[eq]2`, `a[eq]1 or b[eq]2`},
		{"a[eq]1\tOR\nb[eq]2", `a[eq]1 or b[eq]2`},
		// AND binds tighter than OR.
		{`a[eq]1 AND b[eq]2 OR c[eq]3`, `a[eq]1 and b[eq]2 or c[eq]3`},
		{`c[eq]3 OR b[eq]2 AND a[eq]1`, `a[eq]1 and b[eq]2 or c[eq]3`},
		{`a[eq]1 OR b[eq]2 AND c[eq]3 OR d[eq]4`, `a[eq]1 or b[eq]2 and c[eq]3 or d[eq]4`},
		// Brackets.
		{`a[eq]1 AND (b[eq]2 OR c[eq]3)`, `a[eq]1 and (b[eq]2 or c[eq]3)`},
		{`(b[eq]2 OR c[eq]3) AND a[eq]1`, `a[eq]1 and (b[eq]2 or c[eq]3)`},
		{`(a[eq]1 AND b[eq]2) OR c[eq]3`, `a[eq]1 and b[eq]2 or c[eq]3`},
		{`(a[eq]1)`, `a[eq]1`},
		{`((a[eq]1))`, `a[eq]1`},
		{`( a[eq]1 )`, `a[eq]1`},
		{`(a[eq]x )`, `a[eq]x`},
		{`((a[eq]1 and b[eq]2) and c[eq]3)`, `a[eq]1 and b[eq]2 and c[eq]3`},
		{`(a[eq]1 or b[eq]2) or (c[eq]3 or d[eq]4)`, `a[eq]1 or b[eq]2 or c[eq]3 or d[eq]4`},
		{`(a[eq]1)or(b[eq]2)`, `a[eq]1 or b[eq]2`},
		{`a[eq]"x"AND b[eq]1`, `a[eq]x and b[eq]1`},
		{`a[eq]1 and a[eq]1`, `a[eq]1`},
		{`a[eq]1 or (a[eq]1)`, `a[eq]1`},
		{`(a[eq]1 or b[eq]2) and (b[eq]2 or a[eq]1)`, `a[eq]1 or b[eq]2`},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.in)
		if err != nil {
			t.Errorf("ParseFilter(%q) error: %v", tt.in, err)
			continue
		}
		got := f.String()
		if got != tt.want {
			t.Errorf("ParseFilter(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		again, err := ParseFilter(got)
		if err != nil || again.String() != got {
			t.Errorf("ParseFilter(%q) = %v, %v; want it to print %q again", got, again, err, got)
		}
	}
}

func TestParseFilterStructure(t *testing.T) {
	f, err := ParseFilter(`a[eq]1 OR b[eq]2 AND c[in]3,4`)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Or || len(f.Terms) != 2 {
		t.Fatalf("top = %+v, want an OR of two terms", f)
	}
	a, bc := f.Terms[0], f.Terms[1]
	if a.Property != "a" || a.Op != Eq || !reflect.DeepEqual(a.Values, []string{"1"}) {
		t.Errorf("first term = %+v, want a[eq]1", a)
	}
	if bc.Or || len(bc.Terms) != 2 || bc.Terms[1].Op != In || !reflect.DeepEqual(bc.Terms[1].Values, []string{"3", "4"}) {
		t.Errorf("second term = %+v, want b[eq]2 and c[in]3,4", bc)
	}
}

func TestParseFilterErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{``, 0, "expected a property name"},
		{`   `, 3, "expected a property name"},
		{`fields.title`, 12, "expected '['"},
		{`fields.title [eq]1`, 12, "expected '['"},
		{`fields.title[eqq]1`, 13, "unknown operator"},
		{`fields.title[]1`, 13, "unknown operator"},
		{`fields.title[eq`, 13, "expected an operator and ']'"},
		{`fields.title[equalsverymuch]1`, 13, "expected an operator and ']'"},
		{`fields.title[eq]`, 16, "expected a value"},
		{`fields.title[eq]  `, 18, "expected a value"},
		{`a[eq]"abc`, 5, "unterminated string"},
		{`a[eq]"a\nb"`, 7, "unknown escape"},
		{"a[eq]\"a\x01\"", 7, "control character"},
		{"a[eq]a\x01", 6, "control character"},
		{`a[eq]1 AND`, 10, "expected a property name"},
		{`a[eq]1 AND `, 11, "expected a property name"},
		{`a[eq]1 OR OR b[eq]1`, 12, "expected '['"},
		{`(a[eq]1`, 7, "expected ')'"},
		{`a[eq]1)`, 6, "unbalanced ')'"},
		{`a[eq]"1" b`, 9, "expected AND, OR or the end"},
		{`a[eq]1 b[eq]2`, 8, `"[" in a value`},
		{`a[eq]it"s`, 7, `"\"" in a value`},
		{`a[eq]f(x)`, 6, `"(" in a value`},
		{`a[range]1`, 8, "range takes two values"},
		{`a[range]1,2,3`, 8, "range takes two values"},
		{`a[in]1,,2`, 7, "expected a value"},
		{`a[in]1,`, 7, "expected a value"},
		{`a..b[eq]1`, 0, "not a dotted property path"},
		{`.a[eq]1`, 0, "not a dotted property path"},
		{`a.[eq]1`, 0, "not a dotted property path"},
		{`[eq]1`, 0, "expected a property name"},
		{`a$b[eq]1`, 1, "expected '['"},
		{strings.Repeat("(", 40) + "a[eq]1" + strings.Repeat(")", 40), 32, "nested deeper"},
		{"a[eq]\xff", 5, "invalid UTF-8"},
		{strings.Repeat("a", maxFilterLen+1), maxFilterLen, "longer than"},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("ParseFilter(%q) = %v, %v; want a *SyntaxError", tt.in, f, err)
			continue
		}
		if se.Offset != tt.offset || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("ParseFilter(%q) error = %q at %d, want %q at %d", tt.in, se.Msg, se.Offset, tt.msg, tt.offset)
		}
	}
}

const matchItem = `{
	"contentID": 42,
	"properties": {"state": 2, "modified": "2024-03-05T10:20:30.123", "versionID": 7, "referenceName": "posts", "itemOrder": 3},
	"fields": {
		"title": "Hello World", "Count": "15", "price": "9.5", "tags": "red, Green,blue",
		"date": "2024-03-01T00:00:00+00:00", "flag": "true", "bool": true,
		"category": {"contentid": 5}, "list": ["a", "B", 3], "empty": "", "nothing": null,
		"pattern": "50%"
	}
}`

func decodeItem(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMatch(t *testing.T) {
	item := decodeItem(t, matchItem)
	tests := []struct {
		filter string
		want   bool
	}{
		{`fields.title[eq]"hello world"`, true},
		{`fields.TITLE[eq]"HELLO WORLD"`, true},
		{`FIELDS.title[eq]hello world`, true},
		{`fields.title[eq]hello`, false},
		{`fields.title[ne]hello`, true},
		{`fields.title[ne]"Hello World"`, false},
		{`fields.missing[eq]x`, false},
		{`fields.missing[ne]x`, true},
		{`fields.missing.deeper[ne]x`, true},
		{`fields.title.deeper[eq]x`, false},
		{`fields.nothing[eq]x`, false},
		{`fields.nothing[ne]x`, true},
		{`fields.category[eq]5`, false},
		{`fields.category[ne]5`, true},
		{`fields.category.contentid[eq]5`, true},
		{`fields.category.contentID[eq]"5"`, true},
		{`fields.empty[eq]""`, true},
		{`fields.empty[ne]""`, false},
		// Numbers compare as numbers when both sides are numbers.
		{`fields.count[gt]9`, true},
		{`fields.count[lt]100`, true},
		{`fields.count[eq]015`, true},
		{`fields.count[eq]15.0`, true},
		{`fields.count[gt]1e1`, true},
		{`fields.count[gt]a`, false},
		{`fields.price[gte]9.5`, true},
		{`fields.price[lt]10`, true},
		{`fields.price[lte]9.49`, false},
		{`contentid[eq]42`, true},
		{`contentID[in]1,42`, true},
		{`contentid[in]1,2`, false},
		{`contentid[range]40,42`, true},
		{`contentid[range]42,42`, true},
		{`contentid[range]43,50`, false},
		{`contentid[range]"40","100"`, true},
		{`properties.state[ne]3`, true},
		// Times compare as instants when both sides are times.
		{`properties.modified[gt]2024-03-05`, true},
		{`properties.modified[lt]2024-03-06`, true},
		{`properties.modified[lt]2024-03-05T10:20:31Z`, true},
		{`properties.modified[lt]2024-03-05T12:21:00+02:00`, true},
		{`properties.modified[lt]2024-03-05T12:20:30+02:00`, false},
		{`properties.modified[gt]"2024-03-05T10:20:30.124"`, false},
		{`properties.modified[range]2024-03-01,2024-04-01`, true},
		{`fields.date[eq]2024-03-01T00:00:00Z`, true},
		{`fields.date[eq]2024-03-01`, true},
		{`fields.date[eq]2024-03-01t00:00:00z`, true},
		// Otherwise case-insensitive strings.
		{`fields.title[gt]a`, true},
		{`fields.title[lt]I`, true},
		{`fields.flag[eq]TRUE`, true},
		{`fields.bool[eq]true`, true},
		{`fields.bool[eq]false`, false},
		{`properties.referenceName[in]Posts,pages`, true},
		// like
		{`fields.title[like]world`, true},
		{`fields.title[like]"O W"`, true},
		{`fields.title[like]xyz`, false},
		{`fields.title[like]"hel%"`, true},
		{`fields.title[like]"%world"`, true},
		{`fields.title[like]"%world%"`, true},
		{`fields.title[like]"h*o w*d"`, true},
		{`fields.title[like]"h%x%d"`, false},
		{`fields.title[like]"world%"`, false},
		{`fields.title[like]"%hello"`, false},
		{`fields.title[like]"%"`, true},
		{`fields.title[like]"hello%world"`, true},
		{`fields.title[like]"hello world%d"`, false},
		{`contentid[like]4`, true},
		// contains
		{`fields.tags[contains]green`, true},
		{`fields.tags[contains]RED`, true},
		{`fields.tags[contains]blue`, true},
		{`fields.tags[contains]gre`, false},
		{`fields.list[contains]b`, true},
		{`fields.list[contains]3`, true},
		{`fields.list[contains]c`, false},
		{`fields.list[eq]a`, false},
		// Groups: AND binds tighter than OR.
		{`contentid[eq]1 and fields.title[like]hello or contentid[eq]42`, true},
		{`contentid[eq]1 and (fields.title[like]hello or contentid[eq]42)`, false},
		{`contentid[eq]42 and fields.title[like]hello and properties.state[eq]2`, true},
		{`contentid[eq]42 and fields.title[like]bye`, false},
		{`contentid[eq]1 or contentid[eq]2`, false},
		{`(contentid[eq]1 or contentid[eq]42) and (fields.count[gt]10 or fields.count[lt]0)`, true},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.filter)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", tt.filter, err)
			continue
		}
		if got := f.Match(item); got != tt.want {
			t.Errorf("ParseFilter(%q).Match(item) = %v, want %v", tt.filter, got, tt.want)
		}
	}
}

func TestMatchHandBuilt(t *testing.T) {
	item := decodeItem(t, matchItem)
	tests := []struct {
		f    *Filter
		want bool
	}{
		{nil, true},
		{&Filter{Property: "Fields.Title", Op: Eq, Values: []string{"HELLO WORLD"}}, true},
		{&Filter{Property: "contentID", Op: Gt, Values: []string{"41"}}, true},
		{&Filter{Property: "contentID", Op: Range, Values: []string{"41"}}, false},
		{&Filter{Property: "contentID", Op: Eq}, false},
		{&Filter{Or: true, Terms: []*Filter{
			{Property: "contentID", Op: Eq, Values: []string{"1"}},
			{Property: "contentID", Op: Eq, Values: []string{"42"}},
		}}, true},
	}
	for _, tt := range tests {
		if got := tt.f.Match(item); got != tt.want {
			t.Errorf("%v.Match(item) = %v, want %v", tt.f, got, tt.want)
		}
	}
}

func TestMatchJSONNumbers(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"contentID": 42, "fields": {"n": 1.5}}`))
	dec.UseNumber()
	var item map[string]any
	if err := dec.Decode(&item); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`contentid[eq]42.0`, `fields.n[gt]1`, `fields.n[lt]2`} {
		f, err := ParseFilter(s)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Match(item) {
			t.Errorf("ParseFilter(%q).Match(json.Number item) = false, want true", s)
		}
	}
}

func TestSorter(t *testing.T) {
	items := func() []map[string]any {
		return []map[string]any{
			decodeItem(t, `{"contentID": 1, "fields": {"v": "10"}}`),
			decodeItem(t, `{"contentID": 2, "fields": {"v": "9"}}`),
			decodeItem(t, `{"contentID": 3, "fields": {}}`),
			decodeItem(t, `{"contentID": 4, "fields": {"v": "banana"}}`),
			decodeItem(t, `{"contentID": 5, "fields": {"v": "Apple"}}`),
			decodeItem(t, `{"contentID": 6, "fields": {"v": "2024-01-01T00:00:00"}}`),
			decodeItem(t, `{"contentID": 7, "fields": {"v": "9"}}`),
			decodeItem(t, `{"contentID": 8, "fields": {"v": null}}`),
			decodeItem(t, `{"contentID": 9, "fields": {"v": "2023-12-31"}}`),
		}
	}
	ids := func(items []map[string]any) []int {
		var out []int
		for _, it := range items {
			out = append(out, int(it["contentID"].(float64)))
		}
		return out
	}
	tests := []struct {
		path, dir string
		want      []int
	}{
		{"fields.v", "asc", []int{2, 7, 1, 9, 6, 5, 4, 3, 8}},
		{"FIELDS.V", "DESC", []int{4, 5, 6, 9, 1, 2, 7, 3, 8}},
		{"fields.v", "", []int{2, 7, 1, 9, 6, 5, 4, 3, 8}},
		{"contentID", "desc", []int{9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"fields.none", "asc", []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"", "desc", []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
	}
	for _, tt := range tests {
		s := NewSorter(tt.path, tt.dir)
		got := items()
		s.Sort(got)
		if !reflect.DeepEqual(ids(got), tt.want) {
			t.Errorf("Sort by %q %q = %v, want %v", tt.path, tt.dir, ids(got), tt.want)
		}
		// Compare agrees with Sort.
		for i := 1; i < len(got); i++ {
			if s.Compare(got[i-1], got[i]) > 0 {
				t.Errorf("Sort by %q %q: Compare(%v, %v) > 0", tt.path, tt.dir, got[i-1], got[i])
			}
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	item := decodeItem(b, matchItem)
	f, err := ParseFilter(`fields.title[like]hello and (properties.modified[gt]2024-01-01 or fields.count[gte]10)`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !f.Match(item) {
			b.Fatal("no match")
		}
	}
}
