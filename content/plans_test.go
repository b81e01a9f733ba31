package content

import (
	"fmt"
	"testing"

	"github.com/edgecms/edgecms/internal/plancheck"
	"github.com/lib/pq"
)

// TestPlansAreIndexDriven checks that the management writes read rows by
// key (render/source and syncstamp check their reads likewise): on an instance
// of 100,000 items in two locales (and of 1,000: the planner's choices
// change with size), without table statistics and after ANALYZE, in the
// generic plan prepared statements settle on and in custom plans, every
// statement reads at most plancheck.MaxRowsRead rows of items and item_copies
// (EXPLAIN ANALYZE, summed over the plan's nodes). A plan that reads the
// items of a locale or an instance for one item fails, whatever made the
// planner choose it.
func TestPlansAreIndexDriven(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1_000, 100_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			checkPlans(t, n)
		})
	}
}

// checkPlans is TestPlansAreIndexDriven on an instance of n items.
func checkPlans(t *testing.T, planItems int) {
	f := newFixture(t)
	// No statistics until the test asks for them, even where autovacuum
	// runs.
	for _, table := range []string{"items", "item_copies", "containers", "models", "sync_changes", "page_copies", "container_counts"} {
		if _, err := f.db.ExecContext(f.ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	f.model("Author", "content", Field{Name: "name", Type: TypeText})
	f.container("authors", "Author")
	f.model("Tag", "content", Field{Name: "label", Type: TypeText})
	f.container("tags", "Tag")
	f.model("Post", "content", Field{Name: "title", Type: TypeText}, Field{Name: "body", Type: TypeHTML},
		Field{Name: "author", Type: TypeItem, Container: "authors"}, Field{Name: "tags", Type: TypeList, Container: "tags"})
	f.container("posts", "Post")
	author := f.createItem("en-us", "authors", map[string]any{"name": "Ann"}).ContentID
	f.itemAction("en-us", author, ActionPublish)
	var tags []int64
	for _, l := range []string{"a", "b", "c"} {
		id := f.createItem("en-us", "tags", map[string]any{"label": l}).ContentID
		f.itemAction("en-us", id, ActionPublish)
		tags = append(tags, id)
	}
	first := f.createItem("en-us", "posts", map[string]any{"title": "First", "author": map[string]any{"contentID": author},
		"tags": map[string]any{"contentIDs": tags}}).ContentID
	f.itemAction("en-us", first, ActionPublish)
	f.pages()
	page := f.createPage("en-us", "Home", 0)
	f.addComponent("en-us", page.PageID, "MainContentZone", "Hello")

	links := fmt.Sprintf(`{"author": {"contentID": %d}, "tags": {"contentIDs": [%d, %d]}}`, author, tags[0], tags[1])
	if _, err := f.db.ExecContext(f.ctx, `
		WITH c AS (SELECT id, model_id FROM containers WHERE instance_id = $1 AND reference_name = 'posts'),
		ins AS (INSERT INTO items (instance_id, model_id, container_id, item_order)
			SELECT $1, c.model_id, c.id, 10 + g FROM c, generate_series(1, $2) g RETURNING content_id)
		INSERT INTO item_copies (content_id, instance_id, locale, state, version_id, fields, modified,
			published_version_id, published_fields, published_modified)
		SELECT content_id, $1, l, 2, 1, v, now(), 1, v, now()
		FROM ins, unnest(ARRAY['en-us', 'fr-ca']) l,
			LATERAL (SELECT jsonb_build_object('title', 'Post ' || content_id, 'body', '<p>Body</p>') || $3::jsonb AS v) AS x`,
		f.inst.ID, planItems, links); err != nil {
		t.Fatal(err)
	}
	var posts, tagsID, last int64
	f.check(f.db.GetContext(f.ctx, &posts, `SELECT id FROM containers WHERE reference_name = 'posts'`))
	f.check(f.db.GetContext(f.ctx, &tagsID, `SELECT id FROM containers WHERE reference_name = 'tags'`))
	f.check(f.db.GetContext(f.ctx, &last, `SELECT max(content_id) FROM items`))
	mid := last - int64(planItems/2)

	inst, en, ids := f.inst.ID, "en-us", pq.Array([]int64{mid, mid + 1, author})
	plancheck.Check(t, f.ctx, f.db, planItems, []plancheck.Case{
		{Name: "container by name", SQL: selectContainerHeadSQL, Args: []any{inst, "Posts"}},
		{Name: "lock item", SQL: lockItemSQL, Args: []any{inst, mid}, Write: true},
		{Name: "item copies", SQL: selectCopiesSQL, Args: []any{mid}},
		{Name: "link check", SQL: linkedInContainerSQL, Args: []any{inst, "posts", ids}},
		{Name: "create item", SQL: insertItemSQL, Args: []any{inst, int64(3), posts}, Write: true},
		{Name: "create copy", SQL: insertCopySQL, Args: []any{first, inst, "fr-ca", int(Staging), int64(1), `{"title": "x"}`, t0}, Write: true},
		{Name: "save copy", SQL: updateCopySQL, Args: []any{mid, en, int(Published), int64(9), `{"title": "y"}`, t0, int64(9), `{"title": "y"}`, t0, nil, nil}, Write: true},
		{Name: "unpublish copy", SQL: updateCopySQL, Args: []any{mid, en, int(Unpublished), int64(9), `{"title": "y"}`, t0, nil, nil, nil, nil, nil}, Write: true},
	})
}

func (f *fixture) check(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}
