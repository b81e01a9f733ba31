package archive

import (
	"context"
	"testing"

	"github.com/edgecms/edgecms/internal/pgtest"
)

// global are the tables that hold no rows of an instance: the deployment's
// own state.
var global = map[string]bool{
	"schema_migrations": true, "instances": true, "users": true, "sessions": true, "throttle": true,
	"rate_buckets": true, "event_cursors": true, "event_confirmations": true, "object_changes": true,
	"maintenance_runs": true, "sync_stamped": true, "webhook_awaiting": true,
}

// TestTablesCoverSchema checks that every table of the schema is exported,
// skipped with a reason, or global: a migration that adds a table makes
// this fail until the archive knows what to do with it.
func TestTablesCoverSchema(t *testing.T) {
	t.Parallel()
	db, _ := pgtest.New(t)
	var names []string
	if err := db.SelectContext(context.Background(), &names,
		`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, tb := range tables {
		known[tb.name] = true
	}
	for _, n := range names {
		if _, ok := skipped[n]; !ok && !known[n] && !global[n] {
			t.Errorf("table %s is neither exported (archive.tables), skipped with a reason (archive.skipped), nor global", n)
		}
		delete(known, n)
	}
	for n := range known {
		t.Errorf("archive.tables names %s, which the schema does not have", n)
	}
	for n := range skipped {
		if !contains(names, n) {
			t.Errorf("archive.skipped names %s, which the schema does not have", n)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
