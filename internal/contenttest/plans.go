package contenttest

import (
	"fmt"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/pgtest"
)

// planVersion names what buildPlanInstance makes: change it with the
// builder, so that a template of the old fixture is not reused.
const planVersion = "v1"

// PlanIDs are the rows of a PlanInstance that plan checks name.
type PlanIDs struct {
	// Author is a published item of container "authors"; Tags the three
	// published items of "tags".
	Author int64
	Tags   []int64
	// First is the first published post (it links to Author and Tags).
	First int64
	// Posts and TagsContainer are the ids of containers "posts" and "tags".
	Posts, TagsContainer int64
	// Mid is a post in the middle of the bulk.
	Mid int64
}

// PlanInstance returns a Fixture whose instance holds the models Author,
// Tag and Post with their containers, a few published items, a page with a
// component, and n more posts in en-us and fr-ca inserted in bulk (each
// linking to the author and two tags), for checks of query plans at size.
// Autovacuum is off on the tables the plans read, so that statistics exist
// only once the check runs ANALYZE.
//
// The instance is built once per test run and size, as a template database
// (pgtest.NewFrom) that the plan checks of content, render/source and
// syncstamp clone: a clone is a copy of the files, so it holds the same rows,
// the same storage parameters and, like the built database, no statistics.
func PlanInstance(t testing.TB, n int) (*Fixture, PlanIDs) {
	t.Helper()
	db, _ := pgtest.NewFrom(t, fmt.Sprintf("plan%d%s", n, planVersion), func(t testing.TB, db *sqlx.DB) {
		buildPlanInstance(t, db, n)
	})
	f := open(t, db)
	var ids PlanIDs
	itemsOf := `SELECT i.content_id FROM items i JOIN containers c ON c.id = i.container_id
		WHERE c.instance_id = $1 AND c.reference_name = $2 ORDER BY i.content_id`
	var authors []int64
	f.check(nil, f.DB.SelectContext(f.Ctx, &authors, itemsOf, f.Inst.ID, "authors"))
	f.check(nil, f.DB.SelectContext(f.Ctx, &ids.Tags, itemsOf, f.Inst.ID, "tags"))
	if len(authors) != 1 || len(ids.Tags) != 3 {
		t.Fatalf("plan instance: %d authors and %d tags, want 1 and 3", len(authors), len(ids.Tags))
	}
	ids.Author = authors[0]
	f.check(nil, f.DB.GetContext(f.Ctx, &ids.First, `SELECT min(i.content_id) FROM items i JOIN containers c ON c.id = i.container_id
		WHERE c.instance_id = $1 AND c.reference_name = 'posts'`, f.Inst.ID))
	f.check(nil, f.DB.GetContext(f.Ctx, &ids.Posts, `SELECT id FROM containers WHERE reference_name = 'posts'`))
	f.check(nil, f.DB.GetContext(f.Ctx, &ids.TagsContainer, `SELECT id FROM containers WHERE reference_name = 'tags'`))
	var last int64
	f.check(nil, f.DB.GetContext(f.Ctx, &last, `SELECT max(content_id) FROM items`))
	ids.Mid = last - int64(n/2)
	return f, ids
}

// buildPlanInstance makes what PlanInstance describes on db.
func buildPlanInstance(t testing.TB, db *sqlx.DB, n int) {
	f := On(t, db)
	for _, table := range []string{"items", "item_copies", "containers", "models", "sync_changes", "page_copies", "container_counts"} {
		f.check(f.DB.ExecContext(f.Ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`))
	}
	f.Model("Author", "content", content.Field{Name: "name", Type: content.TypeText})
	f.Container("authors", "Author")
	f.Model("Tag", "content", content.Field{Name: "label", Type: content.TypeText})
	f.Container("tags", "Tag")
	f.Model("Post", "content", content.Field{Name: "title", Type: content.TypeText}, content.Field{Name: "body", Type: content.TypeHTML},
		content.Field{Name: "author", Type: content.TypeItem, Container: "authors"}, content.Field{Name: "tags", Type: content.TypeList, Container: "tags"})
	f.Container("posts", "Post")
	author := f.CreateItem("en-us", "authors", map[string]any{"name": "Ann"}).ContentID
	f.ItemAction("en-us", author, content.ActionPublish)
	var tags []int64
	for _, l := range []string{"a", "b", "c"} {
		id := f.CreateItem("en-us", "tags", map[string]any{"label": l}).ContentID
		f.ItemAction("en-us", id, content.ActionPublish)
		tags = append(tags, id)
	}
	first := f.CreateItem("en-us", "posts", map[string]any{"title": "First", "author": map[string]any{"contentID": author},
		"tags": map[string]any{"contentIDs": tags}}).ContentID
	f.ItemAction("en-us", first, content.ActionPublish)
	f.Pages()
	page := f.CreatePage("en-us", "Home", 0)
	f.AddComponent("en-us", page.PageID, "MainContentZone", "Hello")

	links := fmt.Sprintf(`{"author": {"contentID": %d}, "tags": {"contentIDs": [%d, %d]}}`, author, tags[0], tags[1])
	f.check(f.DB.ExecContext(f.Ctx, `
		WITH c AS (SELECT id, model_id FROM containers WHERE instance_id = $1 AND reference_name = 'posts'),
		ins AS (INSERT INTO items (instance_id, model_id, container_id, item_order)
			SELECT $1, c.model_id, c.id, 10 + g FROM c, generate_series(1, $2) g RETURNING content_id)
		INSERT INTO item_copies (content_id, instance_id, locale, state, version_id, fields, modified,
			published_version_id, published_fields, published_modified)
		SELECT content_id, $1, l, 2, 1, v, now(), 1, v, now()
		FROM ins, unnest(ARRAY['en-us', 'fr-ca']) l,
			LATERAL (SELECT jsonb_build_object('title', 'Post ' || content_id, 'body', '<p>Body</p>') || $3::jsonb AS v) AS x`,
		f.Inst.ID, n, links))
}

// IDRange is the n ids from from on.
func IDRange(from int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func (f *Fixture) check(_ any, err error) {
	f.T.Helper()
	if err != nil {
		f.T.Fatal(err)
	}
}
