package archive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/archive"
	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/store"
)

// entry is one entry of a tar held in memory.
type entry struct {
	name string
	body []byte
}

func readTar(t *testing.T, data []byte) []entry {
	t.Helper()
	var out []entry
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out = append(out, entry{h.Name, b})
	}
}

func writeTar(es []entry) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range es {
		tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg})
		tw.Write(e.body)
	}
	tw.Close()
	return b.Bytes()
}

// edit returns the archive with fn applied to the body of the first entry
// whose name matches pattern.
func edit(t *testing.T, data []byte, pattern string, fn func([]byte) []byte) []byte {
	t.Helper()
	es := readTar(t, data)
	re := regexp.MustCompile(pattern)
	for i, e := range es {
		if re.MatchString(e.name) {
			es[i].body = fn(append([]byte(nil), e.body...))
			return writeTar(es)
		}
	}
	t.Fatalf("no entry matches %s", pattern)
	return nil
}

// TestBadArchives imports archives cut short, damaged or made up into a
// fresh database and store: each is refused with an error that says what
// is wrong, and leaves no instance, no row and no asset bytes behind; the
// archive itself, gzip-compressed, then imports.
func TestBadArchives(t *testing.T) {
	t.Parallel()
	src := newSource(t)
	good, err := os.ReadFile(src.export(t))
	if err != nil {
		t.Fatal(err)
	}
	es := readTar(t, good)
	var withoutEnd []entry
	for _, e := range es {
		if e.name != "end.json" {
			withoutEnd = append(withoutEnd, e)
		}
	}
	var assetAt int
	for i, e := range es {
		if strings.HasPrefix(e.name, "assets/") {
			assetAt = i
			break
		}
	}
	swapped := append([]entry(nil), es...)
	swapped[1], swapped[len(swapped)-5] = swapped[len(swapped)-5], swapped[1]

	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a tar archive"},
		{"not a tar", bytes.Repeat([]byte("edgecms "), 200), "not a tar archive"},
		{"a tar of something else", writeTar([]entry{{"hello.txt", []byte("hi")}}), "not an archive of edgecms export"},
		{"cut in half", good[:len(good)/2], "cut short"},
		{"cut before its end record", writeTar(withoutEnd), "cut short"},
		{"cut in an asset", writeTar(es[:assetAt+1])[:len(writeTar(es[:assetAt+1]))-1500], "cut short"},
		{"asset bytes changed", edit(t, good, `^assets/.*\.png$`, func(b []byte) []byte { b[len(b)/2] ^= 1; return b }), "damaged"},
		{"row not JSON", edit(t, good, `^tables/items/`, func(b []byte) []byte { return append(b, "{\"content_id\": 9\n"...) }), "not a JSON object"},
		{"row count changed", edit(t, good, `^end\.json$`, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"items": 50`), []byte(`"items": 51`), 1)
		}), "the archive is damaged"},
		{"a row removed", edit(t, good, `^tables/redirections/`, func([]byte) []byte { return nil }), "the archive is damaged"},
		{"newer schema", edit(t, good, `^manifest\.json$`, func(b []byte) []byte {
			return regexp.MustCompile(`"schema": \d+`).ReplaceAll(b, []byte(`"schema": 999`))
		}), "upgrade edgecms"},
		{"newer format", edit(t, good, `^manifest\.json$`, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"version": 1`), []byte(`"version": 2`), 1)
		}), "newer edgecms"},
		{"entries out of order", writeTar(swapped), "out of order"},
		{"unknown column", edit(t, good, `^tables/locales/`, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"code"`), []byte(`"kode"`), 1)
		}), `column "kode"`},
		{"a missing item", edit(t, good, `^tables/items/`, func(b []byte) []byte {
			_, rest, _ := bytes.Cut(b, []byte("\n"))
			return rest
		}), "rows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dst := newSite(t)
			_, err := archive.Import(ctx, dst.db, dst.objects, bytes.NewReader(tc.data), archive.ImportOptions{})
			if err == nil {
				t.Fatal("Import succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Import = %v, want an error saying %q", err, tc.want)
			}
			t.Logf("%v", err)
			if !errors.Is(err, archive.ErrArchive) {
				t.Errorf("Import = %v, want an ErrArchive", err)
			}
			assertEmpty(t, dst)
		})
	}

	t.Run("gzip", func(t *testing.T) {
		t.Parallel()
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(good)
		zw.Close()
		dst := newSite(t)
		sum, err := archive.Import(context.Background(), dst.db, dst.objects, &z, archive.ImportOptions{})
		if err != nil || sum.Rows["items"] != 50 {
			t.Fatalf("Import(gzip) = %+v, %v", sum, err)
		}
	})

	t.Run("rows of another instance", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		dst := newSite(t)
		// Another instance whose ids are beyond the archive's.
		for _, seq := range []string{"channels.id", "models.id", "containers.id", "items.content_id", "api_keys.id", "tokens.id"} {
			table, col, _ := strings.Cut(seq, ".")
			if _, err := dst.db.Exec(`SELECT setval(pg_get_serial_sequence($1, $2), 10000)`, table, col); err != nil {
				t.Fatal(err)
			}
		}
		other, err := dst.cs.CreateInstance(ctx, "other", []content.Locale{{Code: "en-us", Name: "English"}})
		if err != nil {
			t.Fatal(err)
		}
		dst.manageAs(other)
		data := edit(t, good, `^tables/item_copies/`, func(b []byte) []byte {
			return regexp.MustCompile(`"content_id": 1,`).ReplaceAll(b, []byte(`"content_id": 10001,`))
		})
		_, err = archive.Import(ctx, dst.db, dst.objects, bytes.NewReader(data), archive.ImportOptions{})
		if err == nil || !strings.Contains(err.Error(), "outside the archive's instance") {
			t.Fatalf("Import = %v, want rows outside the instance refused", err)
		}
		var n int
		dst.db.Get(&n, `SELECT count(*) FROM item_copies`)
		if n != 1 {
			t.Errorf("%d item copies after the refused import, want the other instance's 1", n)
		}
	})
}

// manageAs gives inst one item (content_id 10001) with a copy in en-us.
func (s *site) manageAs(inst content.Instance) {
	s.t.Helper()
	ctx := context.Background()
	_, token, err := s.cs.CreateToken(ctx, inst, "t", content.RoleFull)
	if err != nil {
		s.t.Fatal(err)
	}
	s.manage(inst.Guid, token, "POST", "/models", map[string]any{"name": "Note", "kind": "content", "fields": []map[string]any{{"name": "title", "type": "text"}}}, nil)
	s.manage(inst.Guid, token, "POST", "/containers", map[string]any{"referenceName": "notes", "model": "Note"}, nil)
	var item struct {
		ContentID int64 `json:"contentID"`
	}
	s.manage(inst.Guid, token, "POST", "/en-us/items", map[string]any{"referenceName": "notes", "fields": map[string]any{"title": "mine"}}, &item)
	if item.ContentID != 10001 {
		s.t.Fatalf("the other instance's item is %d, want 10001", item.ContentID)
	}
}

// assertEmpty checks that a refused import left nothing behind.
func assertEmpty(t *testing.T, s *site) {
	t.Helper()
	for _, table := range []string{"instances", "locales", "items", "item_copies", "assets", "api_keys", "webhooks", "sync_changes"} {
		var n int
		if err := s.db.Get(&n, `SELECT count(*) FROM `+table); err != nil || n != 0 {
			t.Errorf("%d rows in %s after a refused import (%v)", n, table, err)
		}
	}
	var keys []string
	s.objects.List(context.Background(), "", func(i store.Info) error { keys = append(keys, i.Key); return nil })
	if len(keys) > 0 {
		t.Errorf("a refused import left %v in the store", keys)
	}
}

// TestInstanceSettings exports an instance whose row has a setting beyond
// its id, guid and creation time (a column a migration may add, made here
// by the test) and imports it: the setting comes along.
func TestInstanceSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dst := newSite(t), newSite(t)
	for _, s := range []*site{src, dst} {
		if _, err := s.db.Exec(`ALTER TABLE instances ADD COLUMN test_limit integer`); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := src.cs.CreateInstance(ctx, "settings", []content.Locale{{Code: "en-us", Name: "English"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.db.Exec(`UPDATE instances SET test_limit = 7 WHERE id = $1`, inst.ID); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := archive.Export(ctx, src.db, src.objects, "settings", &b); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Import(ctx, dst.db, dst.objects, &b, archive.ImportOptions{Guid: "settings-2"}); err != nil {
		t.Fatal(err)
	}
	var limit int
	var created, want string
	if err := dst.db.QueryRow(`SELECT test_limit, created_at::text FROM instances WHERE guid = 'settings-2'`).Scan(&limit, &created); err != nil {
		t.Fatal(err)
	}
	src.db.QueryRow(`SELECT created_at::text FROM instances WHERE guid = 'settings'`).Scan(&want)
	if limit != 7 || created != want {
		t.Errorf("imported instance: test_limit %d, created %s; want 7, %s", limit, created, want)
	}
}
