// Package archive exports an instance into one portable file and imports it
// again, into another database and object store (edgecms export, edgecms
// import): the backup that survives a move between hosts, Postgres versions
// and stores, where pg_dump plus a copy of the store is the faster backup of
// a whole deployment.
//
// An archive is a tar file (gzip-compressed or not) of JSON Lines, one
// object per table row, and the asset bytes from the object store:
//
//	manifest.json                  format, version, guid, schema, sequence highs
//	tables/<table>/<n>.jsonl       rows of each table, in chunks of about 1 MiB
//	assets/<sha256>.<ext>          the bytes of every asset
//	end.json                       rows per table and assets written: a file
//	                               cut short is refused, whatever its tar
//
// Both directions stream: rows go from the database to the tar in chunks,
// asset bytes from the store to the tar and back, so memory stays flat
// whatever the size of the instance (see the README's figures).
//
// Rows keep their ids (contentID, pageID, assetID, versionID, sync
// positions...), because the Fetch API shows them: an imported instance
// answers byte for byte like the original. The import therefore refuses,
// with a clear error and nothing imported, a database that holds the ids
// already (the original instance, or an earlier import of it). With a new
// guid, asset keys ({guid}/assets/{sha256}.{ext}) are rewritten in the
// assets rows and in the image values of item fields. Webhooks are exported
// without their signing secrets: a webhook that signs is imported disabled,
// and its next save generates a new secret. API keys and tokens are
// exported as their hashes, so the original keys keep working. People
// (users and their roles) are accounts of the deployment, not of an
// instance, and are not exported; nor are the event log, webhook delivery
// history and the publisher's bookkeeping, which the import's republish
// makes again. The versions of every copy and the audit log are exported:
// history and who made it (actors name users and tokens by id, as in the
// original deployment).
package archive

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Format and Version name the archive format in manifest.json. Version
// changes when a reader of the old format could not read the new.
const (
	Format  = "edgecms-export"
	Version = 1
)

// Entry names inside the tar.
const (
	manifestName = "manifest.json"
	endName      = "end.json"
	tablesDir    = "tables/"
	assetsDir    = "assets/"
)

// chunkBytes is the size past which a table's rows go on in a new entry:
// a tar entry's size is written before its body, so a chunk is held in
// memory until it is complete.
const chunkBytes = 1 << 20

// Manifest is the first entry of an archive.
type Manifest struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Guid is the guid of the exported instance.
	Guid string `json:"guid"`
	// CreatedAt is when the instance was created (RFC 3339).
	CreatedAt string `json:"createdAt"`
	// Instance is the instance's row but its id and guid (its settings),
	// as a JSON object.
	Instance json.RawMessage `json:"instance"`
	// Schema is the last database migration applied where it was exported:
	// an archive from a newer schema is refused.
	Schema int `json:"schema"`
	// ExportedAt is when the export's snapshot was taken (RFC 3339).
	ExportedAt string `json:"exportedAt"`
	// Sequences holds, for each sequence the rows took numbers from, the
	// highest number among them: an import moves the sequences past them
	// before it inserts, so that new rows never take an imported id.
	Sequences map[string]int64 `json:"sequences"`
}

// End is the last entry of an archive: what the export wrote, which an
// import checks against what it read.
type End struct {
	Rows   map[string]int64 `json:"rows"`
	Assets int64            `json:"assets"`
}

// Summary tells what an export wrote or an import read.
type Summary struct {
	Guid       string           `json:"guid"`
	Rows       map[string]int64 `json:"rows"`
	Assets     int64            `json:"assets"`
	AssetBytes int64            `json:"assetBytes"`
	// Notes are what an operator must do after an import (webhooks to
	// save again, say).
	Notes []string `json:"notes,omitempty"`
}

// table is one exported table: its rows of an instance, in an order that
// satisfies its foreign keys when inserted in the order of tables.
type table struct {
	name string
	// query selects each row as one JSON object, without instance_id
	// (the import sets its own), for the instance $1.
	query string
	// serial is the column that takes its values from the table's
	// sequence, if any.
	serial string
}

// tables lists the exported tables in insertion order. TestTablesCoverSchema
// checks that every table holding rows of an instance is listed here or in
// skipped.
var tables = []table{
	{name: "locales", query: `SELECT to_jsonb(t) - 'instance_id' FROM locales t WHERE instance_id = $1 ORDER BY position, code`},
	{name: "channels", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM channels t WHERE instance_id = $1 ORDER BY id`},
	{name: "models", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM models t WHERE instance_id = $1 ORDER BY id`},
	{name: "page_models", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM page_models t WHERE instance_id = $1 ORDER BY id`},
	{name: "containers", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM containers t WHERE instance_id = $1 ORDER BY id`},
	{name: "assets", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM assets t WHERE instance_id = $1 ORDER BY id`},
	{name: "galleries", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM galleries t WHERE instance_id = $1 ORDER BY id`},
	{name: "gallery_assets", query: `SELECT to_jsonb(t) FROM gallery_assets t
		WHERE gallery_id IN (SELECT id FROM galleries WHERE instance_id = $1) ORDER BY gallery_id, position, asset_id`},
	{name: "items", serial: "content_id", query: `SELECT to_jsonb(t) - 'instance_id' FROM items t WHERE instance_id = $1 ORDER BY content_id`},
	// Versions before their copies: a copy's trigger (schema/015) then
	// finds its current version kept already and leaves its actor and
	// action as they were.
	{name: "item_versions", query: `SELECT to_jsonb(t) - 'instance_id' FROM item_versions t WHERE instance_id = $1 ORDER BY content_id, locale, version_id`},
	{name: "item_copies", query: `SELECT to_jsonb(t) - 'instance_id' FROM item_copies t WHERE instance_id = $1 ORDER BY content_id, locale`},
	// A page's parent may have a larger id than the page (pages move), so
	// pages go by depth in the tree: every parent before its children.
	{name: "pages", serial: "page_id", query: `WITH RECURSIVE tree AS (
			SELECT page_id, 0 AS depth FROM pages WHERE instance_id = $1 AND parent_id IS NULL
			UNION ALL
			SELECT p.page_id, tree.depth + 1 FROM pages p JOIN tree ON p.parent_id = tree.page_id)
		SELECT to_jsonb(t) - 'instance_id' FROM pages t JOIN tree USING (page_id) ORDER BY tree.depth, t.page_id`},
	{name: "page_versions", query: `SELECT to_jsonb(t) - 'instance_id' FROM page_versions t WHERE instance_id = $1 ORDER BY page_id, locale, version_id`},
	{name: "page_copies", query: `SELECT to_jsonb(t) - 'instance_id' FROM page_copies t WHERE instance_id = $1 ORDER BY page_id, locale`},
	{name: "redirections", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM redirections t WHERE instance_id = $1 ORDER BY id`},
	{name: "redirection_versions", query: `SELECT to_jsonb(t) - 'instance_id' FROM redirection_versions t WHERE instance_id = $1`},
	{name: "api_keys", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM api_keys t WHERE instance_id = $1 ORDER BY id`},
	{name: "tokens", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM tokens t WHERE instance_id = $1 ORDER BY id`},
	// Signing secrets are sealed under the exporting deployment's
	// EDGECMS_SECRET_KEY and are not part of an archive.
	{name: "webhooks", query: `SELECT to_jsonb(t) - 'instance_id' - 'secret' - 'previous_secret' - 'secret_rolled_at'
		FROM webhooks t WHERE instance_id = $1 ORDER BY created_at, id`},
	{name: "sync_changes", query: `SELECT to_jsonb(t) - 'instance_id' FROM sync_changes t WHERE instance_id = $1
		ORDER BY flavour, locale, subject, position`},
	{name: "sync_floors", query: `SELECT to_jsonb(t) - 'instance_id' FROM sync_floors t WHERE instance_id = $1`},
	// Who did what is kept whatever the event log keeps (90 days at
	// least): it moves with the instance.
	{name: "audit", serial: "id", query: `SELECT to_jsonb(t) - 'instance_id' FROM audit t WHERE instance_id = $1 ORDER BY id`},
}

// skipped are the tables with rows of an instance that are not exported,
// and why.
var skipped = map[string]string{
	"events":             "the event log: consumed and trimmed; the import republishes instead",
	"user_roles":         "people are accounts of the deployment, not of an instance",
	"container_counts":   "kept by triggers on item_copies",
	"webhook_deliveries": "delivery history and queue of the deployment",
	"objects":            "the publisher's bookkeeping, made again by the republish",
	"list_members":       "the publisher's bookkeeping, made again by the republish",
	"publish_backlog":    "the publisher's queue of deferred list pages, made again by the republish",
	"publisher_plans":    "the publisher's bookkeeping: the render number of each instance's latest plan",
	"webhook_breakers":   "the dispatchers' state of endpoints that keep timing out, of the deployment",
}

// otherSequences are the sequences that rows take numbers from besides
// the tables' serial columns, with the query of the highest number an
// instance ($1) holds.
var otherSequences = map[string]string{
	"versions": `SELECT greatest(
		(SELECT max(greatest(version_id, coalesce(published_version_id, 0))) FROM item_copies WHERE instance_id = $1),
		(SELECT max(greatest(version_id, coalesce(published_version_id, 0))) FROM page_copies WHERE instance_id = $1),
		(SELECT max(version_id) FROM item_versions WHERE instance_id = $1),
		(SELECT max(version_id) FROM page_versions WHERE instance_id = $1))`,
	"sync_positions": `SELECT greatest(
		(SELECT max(position) FROM sync_changes WHERE instance_id = $1),
		(SELECT max(floor) FROM sync_floors WHERE instance_id = $1))`,
}

// tableIndex returns the position of the table named name in tables.
func tableIndex(name string) (int, bool) {
	for i, t := range tables {
		if t.name == name {
			return i, true
		}
	}
	return 0, false
}

// sequenceName is the Manifest.Sequences name of a table's serial column.
func sequenceName(t table) string { return t.name + "." + t.serial }

var chunkPattern = regexp.MustCompile(`^tables/([a-z_]+)/([0-9]{6})\.jsonl$`)

// chunkName is the entry name of a table's n-th chunk (from 1).
func chunkName(tableName string, n int) string {
	return fmt.Sprintf("%s%s/%06d.jsonl", tablesDir, tableName, n)
}

// parseChunkName returns the table of a chunk entry's name.
func parseChunkName(name string) (string, bool) {
	m := chunkPattern.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// assetName is the name of an asset's entry: its key's last element.
func assetName(key string) string { return assetsDir + key[strings.LastIndexByte(key, '/')+1:] }
