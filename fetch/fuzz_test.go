package fetch

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/problem"
)

// FuzzParse checks, for any request: Parse does not panic; it fails only
// with Invalid or NotFound problems; a parsed request's key is within the key
// charset, starts with its guid, is not too long for an object store; and
// its canonical URL path and query parse back to the same request.
// Seeds are in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add("/acme/fetch/en-us/item/42", "contentLinkDepth=2", "", "")
	f.Add("/fetch/en-us/list/posts", "take=5&filter=a[eq]1", "", "acme")
	f.Fuzz(func(t *testing.T, path, query, host, header string) {
		r, err := Parse(Input{Host: host, Path: path, RawQuery: query, GuidHeader: header})
		if err != nil {
			var pe *problem.Error
			if !errors.As(err, &pe) || (pe.Kind != problem.Invalid && pe.Kind != problem.NotFound) {
				t.Fatalf("Parse error %v is not an Invalid or NotFound problem", err)
			}
			return
		}
		key := r.Key()
		if !keySafeString(key) {
			t.Fatalf("Key %q has a character outside the key charset", key)
		}
		if r.Guid == "" || !strings.HasPrefix(key, r.Guid+"/") {
			t.Fatalf("Key %q does not start with guid %q", key, r.Guid)
		}
		if len(key) > 1024 {
			t.Fatalf("Key %q is longer than 1024 bytes", key)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("Key %q has segment %q", key, seg)
			}
		}
		back, err := Parse(Input{Path: r.URLPath(), RawQuery: r.Query()})
		if err != nil {
			t.Fatalf("Parse(%q, %q) of request %+v: %v", r.URLPath(), r.Query(), r, err)
		}
		if !sameRequest(back, r) || back.Key() != key {
			t.Fatalf("Parse(URLPath, Query) = %+v, want %+v", back, r)
		}
	})
}

// FuzzParseFilter checks, for any filter text: ParseFilter does not panic;
// its errors are SyntaxErrors with an offset within the text; a parsed
// filter's String parses again to the same String, and both match the same
// items. Seeds are in testdata/fuzz/FuzzParseFilter.
func FuzzParseFilter(f *testing.F) {
	f.Add(`fields.title[eq]"Hello" AND (contentID[in]1,2 OR properties.modified[gt]2024-01-01)`)
	items := []map[string]any{
		decodeItem(f, matchItem),
		decodeItem(f, `{"contentID": 1, "a": "1", "b": "x", "c": "2024-01-01T00:00:00", "fields": {"title": "Hi", "tag": "a,b"}}`),
		decodeItem(f, `{"contentID": 2, "a": "and", "b": "X Y", "c": 3, "fields": {"title": "héllo \"q\""}}`),
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("ParseFilter(%q) error %v is not a SyntaxError within the text", s, err)
			}
			return
		}
		canon := flt.String()
		again, err := ParseFilter(canon)
		if err != nil {
			t.Fatalf("ParseFilter(%q) of canonical form of %q: %v", canon, s, err)
		}
		if again.String() != canon {
			t.Fatalf("ParseFilter(%q).String() = %q, want it unchanged (from %q)", canon, again.String(), s)
		}
		for _, it := range items {
			if flt.Match(it) != again.Match(it) {
				t.Fatalf("%q and its canonical form %q match item %v differently", s, canon, it)
			}
		}
	})
}
