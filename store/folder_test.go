package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/edgecms/edgecms/problem"
)

func newFolder(t *testing.T, root string, now func() time.Time) *folder {
	t.Helper()
	f, err := openFolder(root, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFolderLayout checks what a web server serving the folder sees: the
// body as a plain world-readable file at <root>/<key>, and no metadata or
// temporary files beside it.
func TestFolderLayout(t *testing.T) {
	root := t.TempDir()
	f := newFolder(t, root, nil)
	ctx := context.Background()
	body := []byte(`{"contentID":12}`)
	if _, err := f.Put(ctx, Object{Key: "g/abc/item/12.json", Body: body, ContentType: "application/json", Tags: []string{"acme.en-us.i:12"}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "g", "abc", "item", "12.json")
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(body) {
		t.Fatalf("ReadFile(%s) = %q, %v; want %q", path, got, err, body)
	}
	fi, _ := os.Stat(path)
	if perm := fi.Mode().Perm(); perm != 0o644 {
		t.Errorf("body mode = %v, want 0644", perm)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder of the body holds %d entries, want only the body", len(entries))
	}
	var sc sidecar
	data, err := os.ReadFile(filepath.Join(root, ".edgecms", "meta", "g", "abc", "item", "12.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	if sc.Current == nil || sc.Current.Hash != contentHash(body) || sc.Current.ContentType != "application/json" ||
		!slices.Equal(sc.Current.Tags, []string{"acme.en-us.i:12"}) || sc.Previous != nil {
		t.Errorf("sidecar = %s", data)
	}
}

// TestFolderClock checks that Modified comes from the clock, to the second,
// and stays when nothing is written.
func TestFolderClock(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 900, time.UTC)
	f := newFolder(t, t.TempDir(), func() time.Time { return now })
	ctx := context.Background()
	o := Object{Key: "k", Body: []byte("1")}
	f.Put(ctx, o)
	now = now.Add(time.Hour)
	f.Put(ctx, o) // unchanged
	got, err := f.Stat(ctx, "k")
	if want := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC); err != nil || !got.Modified.Equal(want) {
		t.Errorf("Modified = %v, %v; want %v", got.Modified, err, want)
	}
	o.Body = []byte("2")
	f.Put(ctx, o)
	got, _ = f.Stat(ctx, "k")
	if want := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC); !got.Modified.Equal(want) {
		t.Errorf("Modified after a change = %v, want %v", got.Modified, want)
	}
}

// TestFolderInterruptedPut simulates crashes between the two renames of a
// Put, and a body replaced behind the store's back.
func TestFolderInterruptedPut(t *testing.T) {
	ctx := context.Background()
	f := newFolder(t, t.TempDir(), nil)
	v1 := Object{Key: "x.json", Body: []byte(`"one"`), ContentType: "application/json", Tags: []string{"v:1"}}
	v2 := Object{Key: "x.json", Body: []byte(`"two!"`), ContentType: "text/plain", Tags: []string{"v:2"}}
	if _, err := f.Put(ctx, v1); err != nil {
		t.Fatal(err)
	}
	// Crash after the sidecar rename: the sidecar names v2 current, the
	// body is still v1. Readers see v1 whole.
	renameSidecarOnly(t, f, v2)
	got, err := f.Get(ctx, "x.json")
	if err != nil || string(got.Body) != `"one"` || got.ContentType != "application/json" || !slices.Equal(got.Tags, []string{"v:1"}) {
		t.Fatalf("Get after interrupted Put = %q %q %v, %v; want v1 whole", got.Body, got.ContentType, got.Tags, err)
	}
	// Putting v2 again completes it.
	if written, err := f.Put(ctx, v2); err != nil || !written {
		t.Fatalf("Put(v2) = %v, %v; want written", written, err)
	}
	got, err = f.Get(ctx, "x.json")
	if err != nil || string(got.Body) != `"two!"` || got.ContentType != "text/plain" {
		t.Fatalf("Get after repair = %q %q, %v; want v2", got.Body, got.ContentType, err)
	}

	// A body that matches no metadata (two interrupted Puts, or a hand
	// edit) is an error, not a guess, until the object is put again.
	if err := os.WriteFile(f.bodyPath("x.json"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = f.Get(ctx, "x.json")
	if err == nil || problem.Is(err, problem.NotFound) {
		t.Fatalf("Get of a torn object: error = %v, want an internal error", err)
	}
	if _, err := f.Stat(ctx, "x.json"); err == nil {
		t.Errorf("Stat of a torn object: no error")
	}
	if written, err := f.Put(ctx, v2); err != nil || !written {
		t.Fatalf("Put(v2) over a torn object = %v, %v; want written", written, err)
	}
	if got, err := f.Get(ctx, "x.json"); err != nil || string(got.Body) != `"two!"` {
		t.Errorf("Get after repair = %q, %v; want v2", got.Body, err)
	}

	// The same for unreadable metadata.
	if err := os.WriteFile(f.metaPath("x.json"), []byte("{trunc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(ctx, "x.json"); err == nil || problem.Is(err, problem.NotFound) {
		t.Fatalf("Get with bad metadata: error = %v, want an internal error", err)
	}
	if written, err := f.Put(ctx, v2); err != nil || !written {
		t.Fatalf("Put(v2) over bad metadata = %v, %v; want written", written, err)
	}
	if got, err := f.Get(ctx, "x.json"); err != nil || string(got.Body) != `"two!"` || got.ContentType != "text/plain" {
		t.Errorf("Get after repair = %q %q, %v; want v2", got.Body, got.ContentType, err)
	}
}

// renameSidecarOnly does the first half of a Put of o.
func renameSidecarOnly(t *testing.T, f *folder, o Object) {
	t.Helper()
	o, err := prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(f.metaPath(o.Key))
	entry := &metaEntry{Hash: contentHash(o.Body), Size: int64(len(o.Body)), ContentType: o.ContentType, Tags: o.Tags, Modified: second(time.Now())}
	tmp, err := writeSidecarTemp(filepath.Dir(f.metaPath(o.Key)), entry, old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f.metaPath(o.Key)); err != nil {
		t.Fatal(err)
	}
}

// TestFolderKeyClash checks that a key below another key's body, which a
// file system cannot hold, is a conflict and not a mess.
func TestFolderKeyClash(t *testing.T) {
	ctx := context.Background()
	f := newFolder(t, t.TempDir(), nil)
	if _, err := f.Put(ctx, Object{Key: "a", Body: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Put(ctx, Object{Key: "a/b", Body: []byte("b")}); !problem.Is(err, problem.Conflict) {
		t.Errorf("Put(a/b) with a present: error = %v, want Conflict", err)
	}
	if _, err := f.Put(ctx, Object{Key: "c/d", Body: []byte("d")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Put(ctx, Object{Key: "c", Body: []byte("c")}); !problem.Is(err, problem.Conflict) {
		t.Errorf("Put(c) with c/d present: error = %v, want Conflict", err)
	}
	if err := f.Delete(ctx, "c"); err != nil {
		t.Errorf("Delete(c), a folder: %v", err)
	}
	if _, err := f.Get(ctx, "c/d"); err != nil {
		t.Errorf("Get(c/d) after Delete(c): %v", err)
	}
}

// TestFolderIgnoresStrangers checks that List skips files that are not
// objects: no sidecar, or a name that is not a key.
func TestFolderIgnoresStrangers(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	f := newFolder(t, root, nil)
	if _, err := f.Put(ctx, Object{Key: "ok", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stray", "with space", ".tmp-123", "index.html"} {
		os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644)
	}
	var got []string
	f.List(ctx, "", func(i Info) error { got = append(got, i.Key); return nil })
	if !slices.Equal(got, []string{"ok"}) {
		t.Errorf("List = %v, want [ok]", got)
	}
	if _, err := f.Get(ctx, "stray"); !problem.Is(err, problem.NotFound) {
		t.Errorf("Get(stray) error = %v, want NotFound", err)
	}
}
