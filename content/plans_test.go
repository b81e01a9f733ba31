package content

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// maxRowsRead bounds the rows of items and item_copies (index entries and
// table rows, returned or filtered out) a plan may read for one item, one
// item's links or one window of 10 after 20.
const maxRowsRead = 100

// planCase is a statement checked by TestPlansAreIndexDriven, with the
// arguments of one run.
type planCase struct {
	name string
	sql  string
	args []any
	// write is run in a transaction rolled back after EXPLAIN ANALYZE.
	write bool
}

// TestPlansAreIndexDriven checks that the Fetch API's reads of items and
// list windows, and the management writes, read rows by key: on an instance
// of 100,000 items in two locales (and of 1,000: the planner's choices
// change with size), without table statistics and after ANALYZE, in the
// generic plan prepared statements settle on and in custom plans, every
// statement reads at most maxRowsRead rows of items and item_copies
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
	var cases []planCase
	for _, fl := range []struct {
		name                               string
		graph, heads, contents, containers string
		versions, dynamic                  string
		linking, holding                   string
	}{
		{"fetch", fetchItemGraphSQL, fetchItemHeadsSQL, fetchContainerContentsSQL, fetchContainerIDsSQL,
			fetchContainerVersionsSQL, fetchDynamicItemsSQL, fetchLinkingItemsSQL, fetchHoldingPagesSQL},
		{"preview", previewItemGraphSQL, previewItemHeadsSQL, previewContainerContentsSQL, previewContainerIDsSQL,
			previewContainerVersionsSQL, previewDynamicItemsSQL, previewLinkingItemsSQL, previewHoldingPagesSQL},
	} {
		cases = append(cases,
			planCase{name: fl.name + " item depth 1", sql: fl.graph, args: []any{inst, en, pq.Array([]int64{mid}), 2}},
			planCase{name: fl.name + " item depth 5", sql: fl.graph, args: []any{inst, en, pq.Array([]int64{mid}), 6}},
			planCase{name: fl.name + " 10 items depth 1", sql: fl.graph, args: []any{inst, en, pq.Array(idRange(mid, 10)), 2}},
			planCase{name: fl.name + " item heads", sql: fl.heads, args: []any{inst, en, ids}},
			planCase{name: fl.name + " list window", sql: fl.contents, args: []any{inst, en, "posts", 10, 20}},
			planCase{name: fl.name + " whole small list", sql: fl.containers, args: []any{inst, en, pq.Array([]string{"tags"})}},
			planCase{name: fl.name + " small list versions", sql: fl.versions, args: []any{inst, en, pq.Array([]string{"tags", "authors"})}},
			planCase{name: fl.name + " small dynamic list", sql: fl.dynamic, args: []any{inst, en, pq.Array([]int64{tagsID}), pq.Array([]string{"label"})}},
			planCase{name: fl.name + " items linking", sql: fl.linking, args: []any{inst, en, pq.Array([]int64{mid, tags[2]})}},
			planCase{name: fl.name + " pages holding", sql: fl.holding, args: []any{inst, en, pq.Array([]int64{mid, tags[2]})}},
		)
	}
	cases = append(cases,
		planCase{name: "container by name", sql: selectContainerHeadSQL, args: []any{inst, "Posts"}},
		planCase{name: "lock item", sql: lockItemSQL, args: []any{inst, mid}, write: true},
		planCase{name: "item copies", sql: selectCopiesSQL, args: []any{mid}},
		planCase{name: "link check", sql: linkedInContainerSQL, args: []any{inst, "posts", ids}},
		planCase{name: "item states", sql: itemStatesSQL, args: []any{pq.Array([]int64{inst, inst}), pq.Array([]string{en, "fr-ca"}), pq.Array([]int64{mid, mid})}},
		planCase{name: "create item", sql: insertItemSQL, args: []any{inst, int64(3), posts}, write: true},
		planCase{name: "create copy", sql: insertCopySQL, args: []any{first, inst, "fr-ca", Staging, int64(1), `{"title": "x"}`, t0}, write: true},
		planCase{name: "save copy", sql: updateCopySQL, args: []any{mid, en, Published, int64(9), `{"title": "y"}`, t0, int64(9), `{"title": "y"}`, t0, nil, nil}, write: true},
		planCase{name: "unpublish copy", sql: updateCopySQL, args: []any{mid, en, Unpublished, int64(9), `{"title": "y"}`, t0, nil, nil, nil, nil, nil}, write: true},
	)

	conn, err := f.db.Connx(f.ctx)
	f.check(err)
	defer conn.Close()
	// The measure itself: counting a locale's copies reads them all.
	if rows, _ := explainRows(t, f.ctx, conn, "sanity", "auto", planCase{name: "count a locale",
		sql: `SELECT count(*) FROM item_copies WHERE locale = $1`, args: []any{en}}); rows < planItems {
		t.Fatalf("counting a locale's copies reads %d rows, want at least %d: the plans are not measured", rows, planItems)
	}
	for _, stats := range []string{"without statistics", "after ANALYZE"} {
		if stats == "after ANALYZE" {
			_, err := conn.ExecContext(f.ctx, `ANALYZE`)
			f.check(err)
		}
		for i, c := range cases {
			for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
				rows, plan := explainRows(t, f.ctx, conn, fmt.Sprintf("p%d", i), mode, c)
				if rows > maxRowsRead {
					t.Errorf("%s (%s, %s): the plan reads %d rows of items and item_copies, want at most %d:\n%s",
						c.name, stats, mode, rows, maxRowsRead, plan)
				}
			}
		}
	}
}

func idRange(from int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// explainRows runs c's statement, prepared, under the plan cache mode
// given, with EXPLAIN ANALYZE, and returns the rows its plan read from
// items and item_copies, and the plan.
func explainRows(t *testing.T, ctx context.Context, conn *sqlx.Conn, name, mode string, c planCase) (int, string) {
	t.Helper()
	lits := make([]string, len(c.args))
	for i, a := range c.args {
		lits[i] = sqlLiteral(t, a)
	}
	run := func(q string) string {
		var out string
		if err := conn.QueryRowContext(ctx, q).Scan(&out); err != nil {
			t.Fatalf("%s: %s: %v", c.name, q, err)
		}
		return out
	}
	exec := func(q string) {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %s: %v", c.name, q, err)
		}
	}
	exec(`SET plan_cache_mode = ` + mode)
	exec(`PREPARE ` + name + ` AS ` + c.sql)
	defer exec(`DEALLOCATE ` + name)
	if c.write {
		exec(`BEGIN`)
		defer exec(`ROLLBACK`)
	}
	out := run(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ` + name + `(` + strings.Join(lits, ", ") + `)`)
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("%s: EXPLAIN output %s: %v", c.name, out, err)
	}
	var lines []string
	if err := conn.SelectContext(ctx, &lines, `EXPLAIN (COSTS OFF) EXECUTE `+name+`(`+strings.Join(lits, ", ")+`)`); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	text := strings.Join(lines, "\n")
	return plans[0].Plan.rowsRead(), text
}

// planNode is a node of EXPLAIN's JSON output.
type planNode struct {
	Type            string     `json:"Node Type"`
	Relation        string     `json:"Relation Name"`
	Index           string     `json:"Index Name"`
	Rows            float64    `json:"Actual Rows"`
	Loops           float64    `json:"Actual Loops"`
	RemovedByFilter float64    `json:"Rows Removed by Filter"`
	RemovedByCheck  float64    `json:"Rows Removed by Index Recheck"`
	Plans           []planNode `json:"Plans"`
}

// rowsRead sums the rows the node and its children read from items and
// item_copies (an index's entries count as its table's).
func (n planNode) rowsRead() int {
	rows := 0
	if isItemTable(n.Relation) || isItemTable(n.Index) {
		rows += int((n.Rows + n.RemovedByFilter + n.RemovedByCheck) * n.Loops)
	}
	for _, c := range n.Plans {
		rows += c.rowsRead()
	}
	return rows
}

// isItemTable reports whether a relation is items or item_copies, or one
// of their indexes.
func isItemTable(rel string) bool {
	return rel == "items" || rel == "item_copies" || strings.HasPrefix(rel, "items_") || strings.HasPrefix(rel, "item_copies_")
}

// sqlLiteral writes v as an SQL literal.
func sqlLiteral(t *testing.T, v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int, int64:
		return fmt.Sprint(x)
	case State:
		return fmt.Sprint(int(x))
	case string:
		return pq.QuoteLiteral(x)
	case driver.Valuer:
		s, err := x.Value()
		if err != nil {
			t.Fatal(err)
		}
		return pq.QuoteLiteral(s.(string))
	}
	if tm, ok := v.(interface{ Format(string) string }); ok {
		return pq.QuoteLiteral(tm.Format("2006-01-02T15:04:05.999999Z07:00"))
	}
	t.Fatalf("no literal for %T", v)
	return ""
}

func (f *fixture) check(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}
