package content

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/schema"
)

// TestAssetKeysMigration puts a database back in the state before
// migration 012 (assets.url, image values holding absolute URLs of the
// upload request's host), applies 012, and checks what it rewrote into
// keys and what it left.
func TestAssetKeysMigration(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.asset(f.inst, 40, 30, "photo.png", "A photo")
	other := f.asset(f.instance("other"), 8, 8, "theirs.png", "")
	f.model("Card", "content", Field{Name: "photo", Type: TypeImage}, Field{Name: "typed", Type: TypeImage},
		Field{Name: "foreign", Type: TypeImage}, Field{Name: "theirs", Type: TypeImage}, Field{Name: "title", Type: TypeText})
	f.container("Cards", "Card")
	id := f.createItem("en-us", "Cards", map[string]any{"title": "T", "photo": map[string]any{"assetID": a.ID}}).ContentID
	f.itemAction("en-us", id, ActionPublish)

	// The URL an upload through 127.0.0.1:8080 was given.
	oldURL := func(key string) string {
		guid, name, _ := strings.Cut(key, "/assets/")
		return "http://127.0.0.1:8080/api/assets/" + guid + "/" + name
	}
	before := map[string]string{
		"title":   `"T"`,
		"photo":   fmt.Sprintf(`{"assetID": %d, "url": %q, "label": "A photo", "filesize": %d, "width": 40, "height": 30}`, a.ID, oldURL(a.Key), a.Size),
		"typed":   fmt.Sprintf(`{"url": %q, "label": "Typed"}`, "https://old.example.com/api/assets/acme/"+a.SHA256+".png"),
		"foreign": `{"url": "https://images.example.net/api/assets/acme/0000000000000000000000000000000000000000000000000000000000000000.png"}`,
		"theirs":  fmt.Sprintf(`{"url": %q}`, oldURL(other.Key)),
	}
	fields, _ := json.Marshal(mapOf(before))
	for _, stmt := range []string{
		`ALTER TABLE assets ADD COLUMN url text`,
		`UPDATE assets SET url = 'http://127.0.0.1:8080/api/assets/' || replace(object_key, '/assets/', '/')`,
		fmt.Sprintf(`UPDATE item_copies SET fields = '%s', published_fields = '%s' WHERE content_id = %d`, fields, fields, id),
		`DELETE FROM schema_migrations WHERE version = 12`,
	} {
		if _, err := f.db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	ms, err := schema.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version == 12 {
			if _, err := f.db.Exec(m.SQL); err != nil {
				t.Fatalf("migration 012: %v", err)
			}
		}
	}

	want := map[string]string{
		"title":   `"T"`,
		"photo":   fmt.Sprintf(`{"assetID": %d, "key": %q, "label": "A photo", "filesize": %d, "width": 40, "height": 30}`, a.ID, a.Key, a.Size),
		"typed":   fmt.Sprintf(`{"assetID": %d, "key": %q, "label": "Typed", "filesize": %d, "width": 40, "height": 30}`, a.ID, a.Key, a.Size),
		"foreign": before["foreign"],
		"theirs":  before["theirs"], // another instance's asset: not this one's to claim
	}
	for _, col := range []string{"fields", "published_fields"} {
		var got []byte
		if err := f.db.Get(&got, `SELECT `+col+` FROM item_copies WHERE content_id = $1`, id); err != nil {
			t.Fatal(err)
		}
		var vals map[string]json.RawMessage
		json.Unmarshal(got, &vals)
		for name, w := range want {
			if !sameJSON(vals[name], []byte(w)) {
				t.Errorf("%s.%s = %s, want %s", col, name, vals[name], w)
			}
		}
	}
	var hasURL bool
	f.db.Get(&hasURL, `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'assets' AND column_name = 'url')`)
	if hasURL {
		t.Errorf("assets.url is still there")
	}
	// Read back, the image has the URL of the public URL.
	f.s.PublicURL = "https://cdn.example.com"
	it := f.item("en-us", id)
	var photo struct{ URL string }
	json.Unmarshal(it.Fields["photo"], &photo)
	if photo.URL != "https://cdn.example.com/"+a.Key {
		t.Errorf("photo url = %q", photo.URL)
	}
}

func mapOf(m map[string]string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		out[k] = json.RawMessage(v)
	}
	return out
}
