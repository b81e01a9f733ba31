package publisher

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/store"
)

func TestVerifyFolder(t *testing.T) { t.Parallel(); testVerify(t, folderStore) }
func TestVerifyMinIO(t *testing.T)  { t.Parallel(); testVerify(t, minioStore) }

// testVerify: after a publish, Verify finds the store equal to a fresh
// render; an object with other bytes, one with other tags, a deleted one
// and one nothing renders are each reported, and nothing else; after a
// republish the store is clean again.
func testVerify(t *testing.T, kind storeKind) {
	e := newEnv(t, kind)
	s := e.buildSite()
	p := e.publisher(Config{})
	e.must(p.Drain(e.ctx))

	v, err := p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if len(v.Mismatches) != 0 || v.Stored == 0 || v.Rendered < v.Stored {
		t.Fatalf("Verify after a publish: %d rendered, %d stored, mismatches %+v; want none", v.Rendered, v.Stored, v.Mismatches)
	}

	// Tamper with the store as a lost write, a stale copy or a hand would.
	item := itemRequest(e.guid, "en-us", s.posts[0]).Key()
	o, err := e.store.Get(e.ctx, item)
	e.must(err)
	o.Body = append(o.Body[:len(o.Body)-1:len(o.Body)-1], ' ', '}')
	_, err = e.store.Put(e.ctx, o)
	e.must(err)

	tagged := itemRequest(e.guid, "en-us", s.posts[1]).Key()
	o, err = e.store.Get(e.ctx, tagged)
	e.must(err)
	o.Tags = o.Tags[1:]
	_, err = e.store.Put(e.ctx, o)
	e.must(err)

	list := listRequest(e.guid, "fr-CA", "posts", 10).Key()
	e.must(e.store.Delete(e.ctx, list))

	extra := itemRequest(e.guid, "en-us", 424242).Key()
	_, err = e.store.Put(e.ctx, store.Object{Key: extra, Body: []byte(`{}`), ContentType: delivery.ContentType, CacheControl: delivery.FetchCacheControl})
	e.must(err)

	v, err = p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	var got []string
	for _, m := range v.Mismatches {
		got = append(got, m.Problem+" "+m.Key)
		if m.Detail == "" && m.Problem != Missing {
			t.Errorf("mismatch %+v has no detail", m)
		}
	}
	want := []string{Differs + " " + item, Differs + " " + tagged, Missing + " " + list, Extra + " " + extra}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Verify after tampering:\n got %q\nwant %q", got, want)
	}
	for _, m := range v.Mismatches {
		switch m.Key {
		case item:
			if !strings.HasPrefix(m.Detail, "body") {
				t.Errorf("%s: detail %q, want the body named", m.Key, m.Detail)
			}
		case tagged:
			if !strings.HasPrefix(m.Detail, "tags") {
				t.Errorf("%s: detail %q, want the tags named", m.Key, m.Detail)
			}
		}
	}
	if n := v.Count(Differs) + v.Count(Missing) + v.Count(Extra); n != len(v.Mismatches) {
		t.Errorf("counts add up to %d of %d mismatches", n, len(v.Mismatches))
	}

	// Verify changed nothing; a republish repairs every object.
	again, err := p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if fmt.Sprint(again.Mismatches) != fmt.Sprint(v.Mismatches) {
		t.Errorf("a second Verify found %+v, the first %+v", again.Mismatches, v.Mismatches)
	}
	e.must(p.Republish(e.ctx, e.guid, nil))
	v, err = p.Verify(e.ctx, e.guid, nil)
	e.must(err)
	if len(v.Mismatches) != 0 {
		t.Errorf("Verify after a republish: %+v; want none", v.Mismatches)
	}
	e.check(t)
}
