// Package plancheck checks that SQL statements read rows by key: it runs
// each prepared, under generic and custom plans, with EXPLAIN ANALYZE, and
// counts the rows its plan reads from items and item_copies (an index's
// entries count as its table's). The tests of the packages that own the
// statements (content, render/source, syncstamp) run it on an instance of
// 1,000 and of 100,000 items (contenttest.PlanInstance), without table
// statistics and after ANALYZE.
package plancheck

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

// MaxRowsRead bounds the rows of items and item_copies (index entries and
// table rows, returned or filtered out) a plan may read for one item, one
// item's links or one window of 10 after 20.
const MaxRowsRead = 100

// Case is a statement to check, with the arguments of one run.
type Case struct {
	Name string
	SQL  string
	Args []any
	// Write is run in a transaction rolled back after EXPLAIN ANALYZE.
	Write bool
}

// Check runs every case on db without statistics and after ANALYZE, in the
// generic plan prepared statements settle on and in custom plans, and fails
// t for each plan that reads more than MaxRowsRead rows of items and
// item_copies. It first checks that the measure works: counting a locale's
// copies must read at least planItems rows.
func Check(t *testing.T, ctx context.Context, db *sqlx.DB, planItems int, cases []Case) {
	t.Helper()
	conn, err := db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if rows, _ := explainRows(t, ctx, conn, "sanity", "auto", Case{Name: "count a locale",
		SQL: `SELECT count(*) FROM item_copies WHERE locale = $1`, Args: []any{"en-us"}}); rows < planItems {
		t.Fatalf("counting a locale's copies reads %d rows, want at least %d: the plans are not measured", rows, planItems)
	}
	for _, stats := range []string{"without statistics", "after ANALYZE"} {
		if stats == "after ANALYZE" {
			if _, err := conn.ExecContext(ctx, `ANALYZE`); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range cases {
			for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
				rows, plan := explainRows(t, ctx, conn, fmt.Sprintf("p%d", i), mode, c)
				if rows > MaxRowsRead {
					t.Errorf("%s (%s, %s): the plan reads %d rows of items and item_copies, want at most %d:\n%s",
						c.Name, stats, mode, rows, MaxRowsRead, plan)
				}
			}
		}
	}
}

// explainRows runs c's statement, prepared, under the plan cache mode
// given, with EXPLAIN ANALYZE, and returns the rows its plan read from
// items and item_copies, and the plan.
func explainRows(t *testing.T, ctx context.Context, conn *sqlx.Conn, name, mode string, c Case) (int, string) {
	t.Helper()
	lits := make([]string, len(c.Args))
	for i, a := range c.Args {
		lits[i] = sqlLiteral(t, a)
	}
	run := func(q string) string {
		var out string
		if err := conn.QueryRowContext(ctx, q).Scan(&out); err != nil {
			t.Fatalf("%s: %s: %v", c.Name, q, err)
		}
		return out
	}
	exec := func(q string) {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %s: %v", c.Name, q, err)
		}
	}
	exec(`SET plan_cache_mode = ` + mode)
	exec(`PREPARE ` + name + ` AS ` + c.SQL)
	defer exec(`DEALLOCATE ` + name)
	if c.Write {
		exec(`BEGIN`)
		defer exec(`ROLLBACK`)
	}
	out := run(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ` + name + `(` + strings.Join(lits, ", ") + `)`)
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("%s: EXPLAIN output %s: %v", c.Name, out, err)
	}
	var lines []string
	if err := conn.SelectContext(ctx, &lines, `EXPLAIN (COSTS OFF) EXECUTE `+name+`(`+strings.Join(lits, ", ")+`)`); err != nil {
		t.Fatalf("%s: %v", c.Name, err)
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
