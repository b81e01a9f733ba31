// Package storetest is the conformance suite of store.Store: every
// implementation (folder, S3, memory, and any fake a consumer writes) must
// pass Run, so that the publisher and the edge can rely on the same
// behaviour whatever holds the objects.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// Run runs the conformance tests as subtests of t. newStore returns an
// empty store for one subtest (it may register cleanup with t).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"PutGet", testPutGet},
		{"MetadataRoundTrip", testMetadata},
		{"UnchangedNotRewritten", testUnchanged},
		{"PutListed", testPutListed},
		{"PutListedStale", testPutListedStale},
		{"Overwrite", testOverwrite},
		{"Missing", testMissing},
		{"Delete", testDelete},
		{"InvalidKeys", testInvalidKeys},
		{"InvalidMetadata", testInvalidMetadata},
		{"List", testList},
		{"ListStops", testListStops},
		{"ManyTags", testManyTags},
		{"ManyTagsOnePrefix", testManyTagsOnePrefix},
		{"LargeObject", testLarge},
		{"PutFrom", testPutFrom},
		{"PutFromFile", testPutFromFile},
		{"PutFromBadLength", testPutFromBadLength},
		{"Open", testOpen},
		{"EmptyBody", testEmpty},
		{"ConcurrentPutsSameKey", testConcurrentSameKey},
		{"ConcurrentPutsManyKeys", testConcurrentManyKeys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t))
		})
	}
}

func put(t *testing.T, s store.Store, o store.Object) bool {
	t.Helper()
	written, err := s.Put(context.Background(), o)
	if err != nil {
		t.Fatalf("Put(%s): %v", o.Key, err)
	}
	return written
}

func get(t *testing.T, s store.Store, key string) store.Object {
	t.Helper()
	o, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	return o
}

func stat(t *testing.T, s store.Store, key string) store.Info {
	t.Helper()
	info, err := s.Stat(context.Background(), key)
	if err != nil {
		t.Fatalf("Stat(%s): %v", key, err)
	}
	return info
}

func list(t *testing.T, s store.Store, prefix string) []store.Info {
	t.Helper()
	var out []store.Info
	err := s.List(context.Background(), prefix, func(info store.Info) error {
		out = append(out, info)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return out
}

func keys(infos []store.Info) []string {
	var out []string
	for _, info := range infos {
		out = append(out, info.Key)
	}
	return out
}

// sameInfo compares everything but Modified, which the store sets.
func sameInfo(got, want store.Info) bool {
	return got.Key == want.Key && got.Size == want.Size &&
		got.ContentType == want.ContentType && got.CacheControl == want.CacheControl &&
		got.ETag == want.ETag && slices.Equal(got.Tags, want.Tags)
}

func jsonObject(key, body string, tags ...string) store.Object {
	return store.Object{
		Key:          key,
		Body:         []byte(body),
		ContentType:  "application/json; charset=utf-8",
		CacheControl: "public, max-age=60, s-maxage=31536000",
		Tags:         tags,
	}
}

func testPutGet(t *testing.T, s store.Store) {
	o := jsonObject("g/abc/fetch/en-us/item/12.json", `{"contentID":12}`, "acme.en-us.i:12")
	if !put(t, s, o) {
		t.Errorf("Put of a new object: written = false, want true")
	}
	got := get(t, s, o.Key)
	if got.Key != o.Key || !bytes.Equal(got.Body, o.Body) {
		t.Errorf("Get = %q %q, want %q %q", got.Key, got.Body, o.Key, o.Body)
	}
	if got.Modified.IsZero() {
		t.Errorf("Get: Modified is zero")
	}
}

func testMetadata(t *testing.T, s store.Store) {
	o := store.Object{
		Key:          "a/b@2x,q=80+c~d_e-f.json",
		Body:         []byte(`{"x":"y"}`),
		ContentType:  "application/json",
		CacheControl: "public, max-age=5",
		Tags:         []string{"acme.fr-ca.p:3", "acme.en-us.i:12", "acme.en-us.i:12", "acme.en-us.c:posts"},
		ETag:         `"ignored"`,
	}
	put(t, s, o)
	want := store.Info{
		Key:          o.Key,
		Size:         int64(len(o.Body)),
		ContentType:  "application/json",
		CacheControl: "public, max-age=5",
		ETag:         store.ETag(o.Body),
		Tags:         []string{"acme.en-us.c:posts", "acme.en-us.i:12", "acme.fr-ca.p:3"},
	}
	got := get(t, s, o.Key)
	if !sameInfo(got.Info(), want) {
		t.Errorf("Get = %+v, want %+v", got.Info(), want)
	}
	st := stat(t, s, o.Key)
	if !sameInfo(st, want) || !st.Modified.Equal(got.Modified) {
		t.Errorf("Stat = %+v, want %+v (modified %v)", st, want, got.Modified)
	}
	l := list(t, s, "a/")
	if len(l) != 1 || !sameInfo(l[0], want) || !l[0].Modified.Equal(got.Modified) {
		t.Errorf("List = %+v, want [%+v] (modified %v)", l, want, got.Modified)
	}

	// Defaults: no content type, no cache control, no tags.
	bare := store.Object{Key: "bare", Body: []byte("x")}
	put(t, s, bare)
	got = get(t, s, "bare")
	if got.ContentType != store.DefaultContentType || got.CacheControl != "" || got.Tags != nil {
		t.Errorf("Get(bare) = type %q, cache %q, tags %#v; want %q, \"\", nil",
			got.ContentType, got.CacheControl, got.Tags, store.DefaultContentType)
	}
	if want := `"` + strings.Trim(store.ETag(bare.Body), `"`) + `"`; got.ETag != want || len(want) != 34 {
		t.Errorf("ETag = %s, want a quoted 32-digit hash %s", got.ETag, want)
	}
}

func testUnchanged(t *testing.T, s store.Store) {
	o := jsonObject("k.json", `{"a":1}`, "t:1", "t:2")
	put(t, s, o)
	first := stat(t, s, o.Key)
	// Same bytes and metadata, tags in another order: nothing to write.
	o.Tags = []string{"t:2", "t:1", "t:1"}
	if put(t, s, o) {
		t.Errorf("Put of unchanged object: written = true, want false")
	}
	again := stat(t, s, o.Key)
	if !again.Modified.Equal(first.Modified) || again.ETag != first.ETag {
		t.Errorf("after unchanged Put: modified %v etag %s, want %v %s", again.Modified, again.ETag, first.Modified, first.ETag)
	}
	// Each metadata change is a change.
	changes := []struct {
		name   string
		change func(*store.Object)
	}{
		{"content type", func(o *store.Object) { o.ContentType = "text/plain" }},
		{"cache control", func(o *store.Object) { o.CacheControl = "no-store" }},
		{"tags", func(o *store.Object) { o.Tags = []string{"t:1"} }},
		{"no tags", func(o *store.Object) { o.Tags = nil }},
		{"body", func(o *store.Object) { o.Body = []byte(`{"a":2}`) }},
	}
	for _, c := range changes {
		c.change(&o)
		if !put(t, s, o) {
			t.Errorf("Put after changing %s: written = false, want true", c.name)
		}
		if put(t, s, o) {
			t.Errorf("second Put after changing %s: written = true, want false", c.name)
		}
		want := o.Info()
		want.ETag = store.ETag(o.Body)
		want.Tags = nil
		if len(o.Tags) > 0 {
			want.Tags = slices.Compact(slices.Sorted(slices.Values(o.Tags)))
		}
		if got := stat(t, s, o.Key); !sameInfo(got, want) {
			t.Errorf("after changing %s: Stat = %+v, want %+v", c.name, got, want)
		}
	}
}

func putListed(t *testing.T, s store.Store, o store.Object, listed *store.Info) bool {
	t.Helper()
	written, err := s.PutListed(context.Background(), o, listed)
	if err != nil {
		t.Fatalf("PutListed(%s): %v", o.Key, err)
	}
	return written
}

// listed returns what List says of key, nil when it lists no such object.
func listed(t *testing.T, s store.Store, key string) *store.Info {
	t.Helper()
	for _, info := range list(t, s, key) {
		if info.Key == key {
			return &info
		}
	}
	return nil
}

// testPutListed checks PutListed with fresh listings: it writes new and
// changed objects, as Put would, and leaves unchanged ones (few and many
// tags) as they are.
func testPutListed(t *testing.T, s store.Store) {
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("acme.en-us.i:%d", 100000+i))
	}
	for _, o := range []store.Object{
		jsonObject("l/few.json", `{"a":1}`, "t:2", "t:1"),
		jsonObject("l/many.json", `{"a":1}`, many...),
		jsonObject("l/none.json", `{}`),
	} {
		if l := listed(t, s, o.Key); l != nil {
			t.Fatalf("%s listed before any Put: %+v", o.Key, *l)
		}
		if !putListed(t, s, o, nil) {
			t.Errorf("PutListed of %s, listed absent: written = false, want true", o.Key)
		}
		want := o.Info()
		want.ETag = store.ETag(o.Body)
		want.Tags = nil
		if len(o.Tags) > 0 {
			want.Tags = slices.Sorted(slices.Values(o.Tags))
		}
		got := get(t, s, o.Key)
		if !bytes.Equal(got.Body, o.Body) || !sameInfo(got.Info(), want) {
			t.Errorf("after PutListed of %s: Get = %q %+v, want %q %+v", o.Key, got.Body, got.Info(), o.Body, want)
		}
		first := listed(t, s, o.Key)
		if first == nil || !sameInfo(*first, want) {
			t.Fatalf("after PutListed of %s: listed %+v, want %+v", o.Key, first, want)
		}
		if putListed(t, s, o, first) {
			t.Errorf("PutListed of unchanged %s: written = true, want false", o.Key)
		}
		if put(t, s, o) {
			t.Errorf("Put of %s after PutListed: written = true, want false", o.Key)
		}
		if again := stat(t, s, o.Key); !again.Modified.Equal(first.Modified) {
			t.Errorf("unchanged %s rewritten: modified %v, then %v", o.Key, first.Modified, again.Modified)
		}
		// Each change, listed before it, is written.
		changes := []func(*store.Object){
			func(o *store.Object) { o.Body = []byte(`{"a":2}`) },
			func(o *store.Object) { o.Tags = append(slices.Clone(o.Tags), "t:new") },
			func(o *store.Object) { o.CacheControl = "no-store" },
			func(o *store.Object) { o.ContentType = "text/plain" },
		}
		for i, change := range changes {
			before := listed(t, s, o.Key)
			change(&o)
			if !putListed(t, s, o, before) {
				t.Errorf("PutListed of %s after change %d: written = false, want true", o.Key, i)
			}
			got := get(t, s, o.Key)
			if !bytes.Equal(got.Body, o.Body) || !slices.Equal(got.Tags, slices.Compact(slices.Sorted(slices.Values(o.Tags)))) ||
				got.CacheControl != o.CacheControl || got.ContentType != o.ContentType {
				t.Errorf("after PutListed of %s with change %d: Get = %q %+v", o.Key, i, got.Body, got.Info())
			}
		}
	}
	// Bad input is refused whatever the listing says.
	if _, err := s.PutListed(context.Background(), jsonObject("../x.json", `{}`), nil); !problem.Is(err, problem.Invalid) {
		t.Errorf("PutListed of ../x.json: err = %v, want problem.Invalid", err)
	}
}

// testPutListedStale checks PutListed with listings that went stale: an
// object listed as absent but written meanwhile, with the same bytes or
// others, and one listed with other bytes than it now holds: the store
// ends holding the object given, and unchanged bytes are still not
// rewritten. An object listed equal to the one given is left as it is,
// whatever the store holds now.
func testPutListedStale(t *testing.T, s store.Store) {
	o := jsonObject("stale.json", `{"v":1}`, "v:1")
	put(t, s, o)
	first := stat(t, s, o.Key)
	if putListed(t, s, o, nil) {
		t.Errorf("PutListed of an unchanged object listed as absent: written = true, want false")
	}
	if again := stat(t, s, o.Key); !again.Modified.Equal(first.Modified) || again.ETag != first.ETag {
		t.Errorf("unchanged object listed as absent was rewritten")
	}
	o2 := jsonObject("stale.json", `{"v":2}`, "v:2")
	if !putListed(t, s, o2, nil) {
		t.Errorf("PutListed of a changed object listed as absent: written = false, want true")
	}
	if got := get(t, s, o.Key); string(got.Body) != `{"v":2}` || !slices.Equal(got.Tags, []string{"v:2"}) {
		t.Errorf("after PutListed listed as absent: Get = %q %v", got.Body, got.Tags)
	}
	// Listed with the first version; the store holds the second; write
	// the second: nothing to do.
	if putListed(t, s, o2, &first) {
		t.Errorf("PutListed of the stored version, listed with another: written = true, want false")
	}
	// The first again, listed with the first: the listing is trusted
	// (that is what spares the request), so the second stays.
	if putListed(t, s, o, &first) || string(get(t, s, o.Key).Body) != `{"v":2}` {
		t.Errorf("PutListed of an object listed equal to it wrote it")
	}
}

func testOverwrite(t *testing.T, s store.Store) {
	put(t, s, jsonObject("o.json", `{"v":1}`, "v:1"))
	put(t, s, jsonObject("o.json", `{"v":"two"}`, "v:2"))
	got := get(t, s, "o.json")
	if string(got.Body) != `{"v":"two"}` || !slices.Equal(got.Tags, []string{"v:2"}) || got.ETag != store.ETag(got.Body) {
		t.Errorf("Get after overwrite = %q tags %v etag %s", got.Body, got.Tags, got.ETag)
	}
	// Back to the first bytes: written again.
	if !put(t, s, jsonObject("o.json", `{"v":1}`, "v:1")) {
		t.Errorf("Put of the previous version: written = false, want true")
	}
	if got := get(t, s, "o.json"); string(got.Body) != `{"v":1}` || !slices.Equal(got.Tags, []string{"v:1"}) {
		t.Errorf("Get = %q tags %v, want the first version", got.Body, got.Tags)
	}
}

func testMissing(t *testing.T, s store.Store) {
	ctx := context.Background()
	put(t, s, jsonObject("dir/present.json", "{}"))
	for _, key := range []string{"absent.json", "dir/absent.json", "dir", "dir/present.json/x", "nodir/x"} {
		if _, err := s.Get(ctx, key); !problem.Is(err, problem.NotFound) {
			t.Errorf("Get(%q) error = %v, want NotFound", key, err)
		}
		if _, err := s.Stat(ctx, key); !problem.Is(err, problem.NotFound) {
			t.Errorf("Stat(%q) error = %v, want NotFound", key, err)
		}
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	put(t, s, jsonObject("d/1.json", "1"))
	put(t, s, jsonObject("d/2.json", "2"))
	if err := s.Delete(ctx, "d/1.json"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(ctx, "d/1.json"); !problem.Is(err, problem.NotFound) {
		t.Errorf("Get after Delete: error = %v, want NotFound", err)
	}
	if got := keys(list(t, s, "")); !slices.Equal(got, []string{"d/2.json"}) {
		t.Errorf("List after Delete = %v, want [d/2.json]", got)
	}
	for _, key := range []string{"d/1.json", "never.json", "d", "x/y/z"} {
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q) of a missing key: %v", key, err)
		}
	}
	// A deleted key can be put again, and is a write.
	if !put(t, s, jsonObject("d/1.json", "1")) {
		t.Errorf("Put after Delete: written = false, want true")
	}
	if got := get(t, s, "d/2.json"); string(got.Body) != "2" {
		t.Errorf("Get(d/2.json) = %q, want 2", got.Body)
	}
}

// badKeys are keys every store must refuse.
var badKeys = []string{
	"", "/", "/abs.json", "a//b", "a/", "../x", "a/../b", "a/./b", ".", "..",
	".hidden", "a/.hidden", `a\b`, "a\x00b", "a b", "a?b", "a#b", "a%2fb", "a:b",
	"a*b", "é.json", "a\nb", strings.Repeat("k", 513), strings.Repeat("s", 256) + "/x",
}

func testInvalidKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, key := range badKeys {
		if _, err := s.Put(ctx, store.Object{Key: key, Body: []byte("x")}); !problem.Is(err, problem.Invalid) {
			t.Errorf("Put(%q) error = %v, want Invalid", key, err)
		}
		if _, err := s.Get(ctx, key); !problem.Is(err, problem.Invalid) {
			t.Errorf("Get(%q) error = %v, want Invalid", key, err)
		}
		if _, err := s.Stat(ctx, key); !problem.Is(err, problem.Invalid) {
			t.Errorf("Stat(%q) error = %v, want Invalid", key, err)
		}
		if err := s.Delete(ctx, key); !problem.Is(err, problem.Invalid) {
			t.Errorf("Delete(%q) error = %v, want Invalid", key, err)
		}
	}
	if got := list(t, s, ""); len(got) != 0 {
		t.Errorf("List after refused Puts = %v, want none", keys(got))
	}
	// The longest keys and segments are fine.
	for _, key := range []string{strings.Repeat("k", 255), strings.Repeat("a/", 255) + "bc"} {
		put(t, s, store.Object{Key: key, Body: []byte("x")})
		get(t, s, key)
	}
}

func testInvalidMetadata(t *testing.T, s store.Store) {
	bad := []store.Object{
		{Key: "m", ContentType: "text/plain\r\nX-Evil: 1"},
		{Key: "m", CacheControl: "max-age=1\n"},
		{Key: "m", ContentType: "text/plain; charset=é"},
		{Key: "m", Tags: []string{""}},
		{Key: "m", Tags: []string{"a b"}},
		{Key: "m", Tags: []string{strings.Repeat("t", 257)}},
	}
	for _, o := range bad {
		if _, err := s.Put(context.Background(), o); !problem.Is(err, problem.Invalid) {
			t.Errorf("Put(type %q, cache %q, tags %q) error = %v, want Invalid", o.ContentType, o.CacheControl, o.Tags, err)
		}
	}
}

func testList(t *testing.T, s store.Store) {
	// In byte order: '-' < '.' < '/' < '0'.
	all := []string{"a-b", "a.b", "a/1.json", "a/2.json", "a/b-c/4.json", "a/b/3.json", "a0", "ab/5.json", "b/6.json"}
	for _, key := range slices.Backward(all) {
		put(t, s, jsonObject(key, `"`+key+`"`))
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"a/", []string{"a/1.json", "a/2.json", "a/b-c/4.json", "a/b/3.json"}},
		{"a", all[:8]},
		{"a/b", []string{"a/b-c/4.json", "a/b/3.json"}},
		{"a/b/", []string{"a/b/3.json"}},
		{"a/1", []string{"a/1.json"}},
		{"a/1.json", []string{"a/1.json"}},
		{"b/6.json/", nil},
		{"zzz", nil},
		{"../", nil},
		{"a/../", nil},
		{"nope/", nil},
	}
	for _, tc := range tests {
		got := list(t, s, tc.prefix)
		if !slices.Equal(keys(got), tc.want) {
			t.Errorf("List(%q) = %v, want %v", tc.prefix, keys(got), tc.want)
		}
		for _, info := range got {
			body := `"` + info.Key + `"`
			if info.Size != int64(len(body)) || info.ETag != store.ETag([]byte(body)) || info.ContentType != "application/json; charset=utf-8" {
				t.Errorf("List(%q): %+v, want size %d etag %s", tc.prefix, info, len(body), store.ETag([]byte(body)))
			}
		}
	}
}

func testListStops(t *testing.T, s store.Store) {
	for i := range 5 {
		put(t, s, jsonObject(fmt.Sprintf("s/%d", i), "x"))
	}
	stop := errors.New("stop")
	n := 0
	err := s.List(context.Background(), "s/", func(store.Info) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("List with fn failing on the 2nd object: error %v after %d calls, want %v after 2", err, n, stop)
	}
}

func testManyTags(t *testing.T, s store.Store) {
	// An object embedding many items: more tags than fit in S3 user
	// metadata.
	var tags []string
	for i := range 600 {
		tags = append(tags, fmt.Sprintf("acme.en-us.i:%d", 100000+i))
	}
	o := jsonObject("list/many.json", `{"items":[]}`, tags...)
	put(t, s, o)
	if got := get(t, s, o.Key); !slices.Equal(got.Tags, tags) {
		t.Errorf("Get: %d tags, want %d", len(got.Tags), len(tags))
	}
	if got := stat(t, s, o.Key); !slices.Equal(got.Tags, tags) {
		t.Errorf("Stat: %d tags, want %d", len(got.Tags), len(tags))
	}
	if got := list(t, s, "list/"); len(got) != 1 || !slices.Equal(got[0].Tags, tags) {
		t.Errorf("List = %v, want one object with %d tags", keys(got), len(tags))
	}
	if put(t, s, o) {
		t.Errorf("unchanged Put with many tags: written = true, want false")
	}
	// Fewer tags, then many others, then delete.
	o.Tags = tags[:3]
	put(t, s, o)
	if got := get(t, s, o.Key); !slices.Equal(got.Tags, tags[:3]) {
		t.Errorf("Get after fewer tags = %v, want %v", got.Tags, tags[:3])
	}
	o.Tags = tags[100:]
	put(t, s, o)
	if got := get(t, s, o.Key); !slices.Equal(got.Tags, tags[100:]) {
		t.Errorf("Get after other tags: %d tags, want %d", len(got.Tags), len(tags)-100)
	}
	if err := s.Delete(context.Background(), o.Key); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, ""); len(got) != 0 {
		t.Errorf("List after Delete = %v, want none", keys(got))
	}
}

// testManyTagsOnePrefix checks a tag list too long for S3 user metadata
// whose tags share a long prefix, as the publisher's do.
func testManyTagsOnePrefix(t *testing.T, s store.Store) {
	var tags []string
	for i := range 80 {
		tags = append(tags, fmt.Sprintf("bench688022.en-us.i:%d", 100000+i*37))
	}
	tags = append(tags, "bench688022.en-us.c:posts", "bench688022.en-us.i:1")
	want := slices.Sorted(slices.Values(tags))
	o := jsonObject("list/prefixed.json", `{"items":[]}`, tags...)
	if !put(t, s, o) {
		t.Errorf("Put: written = false")
	}
	if got := get(t, s, o.Key); !slices.Equal(got.Tags, want) {
		t.Errorf("Get: tags %v, want %v", got.Tags, want)
	}
	if got := stat(t, s, o.Key); !slices.Equal(got.Tags, want) {
		t.Errorf("Stat: tags %v, want %v", got.Tags, want)
	}
	l := listed(t, s, o.Key)
	if l == nil || !slices.Equal(l.Tags, want) {
		t.Fatalf("List: %+v, want tags %v", l, want)
	}
	if put(t, s, o) || putListed(t, s, o, l) {
		t.Errorf("unchanged Put or PutListed: written = true, want false")
	}
	// One tag less, then only the shared part and one more: both read back.
	for _, ts := range [][]string{want[1:], {"bench688022.en-us.", "bench688022.en-us.i:1"}} {
		o.Tags = ts
		if !put(t, s, o) {
			t.Errorf("Put with tags %d..: written = false", len(ts))
		}
		if got := get(t, s, o.Key); !slices.Equal(got.Tags, ts) {
			t.Errorf("Get: tags %v, want %v", got.Tags, ts)
		}
	}
}

func testLarge(t *testing.T, s store.Store) {
	body := make([]byte, 6<<20+123)
	rand.Read(body)
	o := store.Object{Key: "media/big.bin", Body: body, ContentType: "application/octet-stream"}
	if !put(t, s, o) {
		t.Errorf("Put: written = false")
	}
	got := get(t, s, o.Key)
	if !bytes.Equal(got.Body, body) || got.ETag != store.ETag(body) {
		t.Errorf("Get: %d bytes etag %s, want %d bytes etag %s", len(got.Body), got.ETag, len(body), store.ETag(body))
	}
	if info := stat(t, s, o.Key); info.Size != int64(len(body)) {
		t.Errorf("Stat: size %d, want %d", info.Size, len(body))
	}
	if put(t, s, o) {
		t.Errorf("unchanged Put: written = true")
	}
}

// testPutFrom stores bodies read from readers of known and unknown size:
// the same object as Put would store, and unchanged bodies are not
// rewritten, whichever way they come.
func testPutFrom(t *testing.T, s store.Store) {
	ctx := context.Background()
	body := make([]byte, 3<<20+7)
	rand.Read(body)
	o := store.Object{Key: "media/a.png", ContentType: "image/png", CacheControl: "public, max-age=31536000, immutable"}
	written, err := s.PutFrom(ctx, o, bytes.NewReader(body), int64(len(body)))
	if err != nil || !written {
		t.Fatalf("PutFrom of a new object = %v, %v; want true, nil", written, err)
	}
	want := store.Info{Key: o.Key, Size: int64(len(body)), ContentType: o.ContentType, CacheControl: o.CacheControl, ETag: store.ETag(body)}
	got := get(t, s, o.Key)
	if !bytes.Equal(got.Body, body) || !sameInfo(got.Info(), want) {
		t.Errorf("Get after PutFrom = %d bytes %+v, want %d bytes %+v", len(got.Body), got.Info(), len(body), want)
	}
	first := stat(t, s, o.Key)
	if written, err := s.PutFrom(ctx, o, io.MultiReader(bytes.NewReader(body)), -1); err != nil || written {
		t.Errorf("PutFrom of the same body, size unknown = %v, %v; want false, nil", written, err)
	}
	withBody := o
	withBody.Body = body
	if put(t, s, withBody) {
		t.Errorf("Put of the body PutFrom stored: written = true, want false")
	}
	if again := stat(t, s, o.Key); !again.Modified.Equal(first.Modified) {
		t.Errorf("unchanged body rewritten: modified %v, then %v", first.Modified, again.Modified)
	}
	// Metadata changes are changes, as for Put.
	o.CacheControl = "no-store"
	if written, err := s.PutFrom(ctx, o, bytes.NewReader(body), int64(len(body))); err != nil || !written {
		t.Errorf("PutFrom with a new cache control = %v, %v; want true, nil", written, err)
	}
	// An empty body, size unknown.
	if written, err := s.PutFrom(ctx, store.Object{Key: "media/empty"}, strings.NewReader(""), -1); err != nil || !written {
		t.Errorf("PutFrom of an empty body = %v, %v; want true, nil", written, err)
	}
	if got := get(t, s, "media/empty"); len(got.Body) != 0 || got.ETag != store.ETag(nil) {
		t.Errorf("Get(media/empty) = %q %s", got.Body, got.ETag)
	}
}

// testPutFromFile stores the rest of a file from its current offset, large
// enough that an S3 store uploads it in parts.
func testPutFromFile(t *testing.T, s store.Store) {
	ctx := context.Background()
	body := make([]byte, 17<<20+3)
	rand.Read(body)
	f, err := os.CreateTemp(t.TempDir(), "body")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append([]byte("skipped"), body...)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(int64(len("skipped")), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	o := store.Object{Key: "media/big.pdf", ContentType: "application/pdf"}
	if written, err := s.PutFrom(ctx, o, f, -1); err != nil || !written {
		t.Fatalf("PutFrom(file) = %v, %v; want true, nil", written, err)
	}
	got := get(t, s, o.Key)
	if !bytes.Equal(got.Body, body) || got.ETag != store.ETag(body) {
		t.Errorf("Get: %d bytes etag %s, want %d bytes etag %s", len(got.Body), got.ETag, len(body), store.ETag(body))
	}
}

// testPutFromBadLength checks that a body of another length than announced
// is refused and writes nothing.
func testPutFromBadLength(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, c := range []struct {
		body string
		size int64
	}{{"0123456789", 9}, {"0123456789", 11}} {
		_, err := s.PutFrom(ctx, store.Object{Key: "bad/len"}, strings.NewReader(c.body), c.size)
		if !problem.Is(err, problem.Invalid) {
			t.Errorf("PutFrom of %d bytes announced as %d: err = %v, want problem.Invalid", len(c.body), c.size, err)
		}
		if _, err := s.Stat(ctx, "bad/len"); !problem.Is(err, problem.NotFound) {
			t.Errorf("after the refused PutFrom: Stat err = %v, want problem.NotFound", err)
		}
	}
	if _, err := s.PutFrom(ctx, store.Object{Key: "bad/body", Body: []byte("x")}, strings.NewReader("x"), 1); !problem.Is(err, problem.Invalid) {
		t.Errorf("PutFrom with a Body: err = %v, want problem.Invalid", err)
	}
	if _, err := s.PutFrom(ctx, store.Object{Key: "../x"}, strings.NewReader("x"), 1); !problem.Is(err, problem.Invalid) {
		t.Errorf("PutFrom of ../x: err = %v, want problem.Invalid", err)
	}
}

// testOpen reads objects through Open: the body and the metadata Stat
// gives, one whole version even when the object is replaced while the
// reader is open, and the errors of Get.
func testOpen(t *testing.T, s store.Store) {
	ctx := context.Background()
	old := make([]byte, 256<<10)
	rand.Read(old)
	o := store.Object{Key: "media/open.jpg", Body: old, ContentType: "image/jpeg", Tags: []string{"a"}}
	put(t, s, o)
	rc, info, err := s.Open(ctx, o.Key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if st := stat(t, s, o.Key); !sameInfo(info, st) || !info.Modified.Equal(st.Modified) {
		t.Errorf("Open's info = %+v, Stat = %+v", info, st)
	}
	o.Body = bytes.Repeat([]byte("n"), 1000)
	put(t, s, o)
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, old) {
		t.Errorf("reading what Open gave, after a Put: %d bytes, %v; want the %d bytes opened", len(got), err, len(old))
	}
	rc, info, err = s.Open(ctx, o.Key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got, _ = io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, o.Body) || info.ETag != store.ETag(o.Body) || info.Size != int64(len(o.Body)) {
		t.Errorf("Open after the Put = %q %+v, want the new body", got, info)
	}
	if _, _, err := s.Open(ctx, "media/missing.jpg"); !problem.Is(err, problem.NotFound) {
		t.Errorf("Open of a missing object: err = %v, want problem.NotFound", err)
	}
	if _, _, err := s.Open(ctx, "../x"); !problem.Is(err, problem.Invalid) {
		t.Errorf("Open of ../x: err = %v, want problem.Invalid", err)
	}
}

func testEmpty(t *testing.T, s store.Store) {
	put(t, s, store.Object{Key: "empty", ContentType: "text/plain"})
	got := get(t, s, "empty")
	if len(got.Body) != 0 || got.ETag != store.ETag(nil) || got.ContentType != "text/plain" {
		t.Errorf("Get(empty) = %q %s %q", got.Body, got.ETag, got.ContentType)
	}
}

// version i of a contended object: a body whose size and content depend on
// i, and metadata naming i, so that a reader can tell a torn object.
func version(key string, i int) store.Object {
	body := fmt.Sprintf(`{"writer":%d,"pad":"%s"}`, i, strings.Repeat("x", 100+i*997%5000))
	return store.Object{
		Key:          key,
		Body:         []byte(body),
		ContentType:  fmt.Sprintf("application/json; writer=%d", i),
		CacheControl: fmt.Sprintf("max-age=%d", i),
		Tags:         []string{fmt.Sprintf("w:%d", i)},
	}
}

// checkVersion reports whether o is one whole version.
func checkVersion(o store.Object) error {
	var i int
	if _, err := fmt.Sscanf(string(o.Body), `{"writer":%d,`, &i); err != nil {
		return fmt.Errorf("body %.40q is not a version", o.Body)
	}
	want := version(o.Key, i)
	if !bytes.Equal(o.Body, want.Body) || o.ContentType != want.ContentType ||
		o.CacheControl != want.CacheControl || !slices.Equal(o.Tags, want.Tags) || o.ETag != store.ETag(want.Body) {
		return fmt.Errorf("torn object: body of writer %d with type %q cache %q tags %v etag %s", i, o.ContentType, o.CacheControl, o.Tags, o.ETag)
	}
	return nil
}

func testConcurrentSameKey(t *testing.T, s store.Store) {
	ctx := context.Background()
	const key, writers, rounds = "hot/item.json", 8, 5
	put(t, s, version(key, 0))
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	done := make(chan struct{})
	for w := 1; w <= writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				if _, err := s.Put(ctx, version(key, w*100+r)); err != nil {
					errs <- err
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				o, err := s.Get(ctx, key)
				if err == nil {
					err = checkVersion(o)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := checkVersion(get(t, s, key)); err != nil {
		t.Errorf("final object: %v", err)
	}
	if got := keys(list(t, s, "")); !slices.Equal(got, []string{key}) {
		t.Errorf("List = %v, want [%s]", got, key)
	}
}

func testConcurrentManyKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := version(fmt.Sprintf("many/%03d.json", i), i)
			if _, err := s.Put(ctx, o); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := list(t, s, "many/")
	if len(got) != n {
		t.Fatalf("List: %d objects, want %d", len(got), n)
	}
	for i, info := range got {
		want := version(fmt.Sprintf("many/%03d.json", i), i)
		if info.Key != want.Key || info.ETag != store.ETag(want.Body) || info.ContentType != want.ContentType {
			t.Errorf("List[%d] = %+v, want %s", i, info, want.Key)
		}
	}
}
