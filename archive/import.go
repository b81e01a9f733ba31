package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// ImportOptions are the choices of an import.
type ImportOptions struct {
	// Guid is the guid of the new instance; empty keeps the archive's.
	Guid string
	// TempDir is where asset bytes are spooled while their hash is
	// checked, before they go to the store; empty is os.TempDir().
	TempDir string
}

// Limits of what an import holds in memory at once.
const (
	maxManifestBytes = 1 << 20
	maxRowBytes      = 64 << 20 // one row (a JSON object on one line)
	batchRows        = 500
	batchBytes       = 1 << 20
)

const (
	insertInstanceSQL = `INSERT INTO instances (guid, created_at) VALUES ($1, $2) RETURNING id`
	// instanceSettingsSQL sets columns of the new instance ($1) from the
	// archive's instance row ($2): %s is their list of "c = r.c".
	instanceSettingsSQL = `UPDATE instances i SET %s FROM json_populate_record(NULL::instances, $2::json) r WHERE i.id = $1`
	tableColumnsSQL     = `SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`
	// setSerialSQL and setSequenceSQL move a sequence forward (never
	// back) to $2, so that it hands out numbers above the imported ones.
	setSerialSQL = `SELECT setval(s, $3) FROM (SELECT pg_get_serial_sequence($1, $2)::regclass AS s) x
		WHERE $3 > coalesce(pg_sequence_last_value(s), 0)`
	setSequenceSQL = `SELECT setval(s, $2) FROM (SELECT $1::regclass AS s) x
		WHERE $2 > coalesce(pg_sequence_last_value(s), 0)`
	// rekeyAssetsSQL and rekeyImagesSQL move asset keys from the prefix
	// $2 ({old guid}/assets/) to $3 ({new guid}/assets/) in instance $1:
	// the assets rows, and the image values of item fields (top-level
	// values with an assetID, as content stores them).
	rekeyAssetsSQL = `UPDATE assets SET object_key = $3::text || substr(object_key, length($2::text) + 1)
		WHERE instance_id = $1 AND starts_with(object_key, $2::text)`
	rekeyImagesSQL = `UPDATE item_copies SET
		fields = coalesce((SELECT jsonb_object_agg(e.key, CASE
				WHEN jsonb_typeof(e.value) = 'object' AND e.value ? 'assetID' AND starts_with(e.value->>'key', $2::text)
				THEN jsonb_set(e.value, '{key}', to_jsonb($3::text || substr(e.value->>'key', length($2::text) + 1)))
				ELSE e.value END) FROM jsonb_each(fields) e), '{}'::jsonb),
		published_fields = CASE WHEN published_fields IS NULL THEN NULL ELSE coalesce((SELECT jsonb_object_agg(e.key, CASE
				WHEN jsonb_typeof(e.value) = 'object' AND e.value ? 'assetID' AND starts_with(e.value->>'key', $2::text)
				THEN jsonb_set(e.value, '{key}', to_jsonb($3::text || substr(e.value->>'key', length($2::text) + 1)))
				ELSE e.value END) FROM jsonb_each(published_fields) e), '{}'::jsonb) END
		WHERE instance_id = $1 AND (strpos(fields::text, $2::text) > 0 OR strpos(coalesce(published_fields::text, ''), $2::text) > 0)`
	// rekeyItemVersionsSQL and rekeyPageVersionsSQL move asset keys in
	// the versions kept, where image values may sit deeper (a page
	// version's components): every JSON string that starts with the old
	// prefix.
	rekeyItemVersionsSQL = `UPDATE item_versions SET fields = replace(fields::text, '"' || $2::text, '"' || $3::text)::jsonb
		WHERE instance_id = $1 AND strpos(fields::text, '"' || $2::text) > 0`
	rekeyPageVersionsSQL = `UPDATE page_versions SET components = replace(components::text, '"' || $2::text, '"' || $3::text)::jsonb
		WHERE instance_id = $1 AND strpos(components::text, '"' || $2::text) > 0`
	importedAssetKeysSQL = `SELECT DISTINCT object_key FROM assets WHERE instance_id = $1 ORDER BY object_key`
	// disableUnsignedSQL turns off the webhooks that sign their deliveries
	// but came without a secret: their next save generates one.
	disableUnsignedSQL = `UPDATE webhooks SET enabled = false
		WHERE instance_id = $1 AND secure AND secret IS NULL AND enabled RETURNING id`
)

// owned are the conditions that an imported row (r) of a table only refers
// to rows of the new instance ($2): an archive names rows by id, and an id
// that is another instance's must not attach the archive's rows to it.
// A batch whose rows do not all pass is refused. The statement does not
// see its own rows, so a page's parent may also be in its batch.
var owned = map[string]string{
	"containers":     `EXISTS (SELECT 1 FROM models m WHERE m.id = r.model_id AND m.instance_id = $2)`,
	"gallery_assets": `EXISTS (SELECT 1 FROM galleries g WHERE g.id = r.gallery_id AND g.instance_id = $2) AND EXISTS (SELECT 1 FROM assets a WHERE a.id = r.asset_id AND a.instance_id = $2)`,
	"items": `EXISTS (SELECT 1 FROM models m WHERE m.id = r.model_id AND m.instance_id = $2)
		AND (r.container_id IS NULL OR EXISTS (SELECT 1 FROM containers c WHERE c.id = r.container_id AND c.instance_id = $2))`,
	"item_copies":   `EXISTS (SELECT 1 FROM items i WHERE i.content_id = r.content_id AND i.instance_id = $2)`,
	"item_versions": `EXISTS (SELECT 1 FROM items i WHERE i.content_id = r.content_id AND i.instance_id = $2)`,
	"page_versions": `EXISTS (SELECT 1 FROM pages p WHERE p.page_id = r.page_id AND p.instance_id = $2)`,
	"pages": `EXISTS (SELECT 1 FROM channels c WHERE c.id = r.channel_id AND c.instance_id = $2)
		AND EXISTS (SELECT 1 FROM page_models m WHERE m.id = r.page_model_id AND m.instance_id = $2)
		AND (r.parent_id IS NULL OR EXISTS (SELECT 1 FROM pages p WHERE p.page_id = r.parent_id AND p.instance_id = $2)
			OR r.parent_id IN (SELECT b.page_id FROM json_populate_recordset(NULL::pages, $1::json) b))
		AND (r.dynamic_container_id IS NULL OR EXISTS (SELECT 1 FROM containers c WHERE c.id = r.dynamic_container_id AND c.instance_id = $2))`,
	"page_copies": `EXISTS (SELECT 1 FROM pages p WHERE p.page_id = r.page_id AND p.instance_id = $2)`,
}

// ErrArchive marks an archive that cannot be imported as it is: not an
// archive, cut short, damaged, or from a newer edgecms.
var ErrArchive = errors.New("bad archive")

func badArchive(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrArchive, fmt.Sprintf(format, args...))
}

// Import reads an archive (a tar, gzip-compressed or not) from r into a new
// instance of db, writing the asset bytes to objects. It imports all of it
// in one transaction, or nothing: an archive cut short or damaged, rows
// whose ids this database holds already, or a guid in use leave the
// database as it was (asset bytes written before the failure are deleted
// again; they are content-addressed, so any that stay are harmless). It
// writes no event and does not take the event writers' lock (schema 005),
// so however long it runs it holds back no reader of the event log. It
// does not render anything: the caller republishes the instance (the
// edgecms import command does).
func Import(ctx context.Context, db *sqlx.DB, objects store.Store, r io.Reader, opt ImportOptions) (sum Summary, err error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return sum, badArchive("gzip: %v", err)
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	im := &importer{db: db, objects: objects, tr: tar.NewReader(r), opt: opt, seen: map[string]bool{}}
	defer func() {
		if err != nil {
			im.release()
		}
	}()
	return im.run(ctx)
}

// importer is the state of one import.
type importer struct {
	db      *sqlx.DB
	objects store.Store
	tr      *tar.Reader
	opt     ImportOptions

	tx       *sqlx.Tx
	manifest Manifest
	guid     string // the new instance's
	instID   int64
	sum      Summary
	written  []string        // keys this import wrote to the store
	seen     map[string]bool // asset entry names read
}

func (im *importer) run(ctx context.Context) (Summary, error) {
	if err := im.readManifest(); err != nil {
		return im.sum, err
	}
	var schemaVersion int
	if err := im.db.GetContext(ctx, &schemaVersion, schemaVersionSQL); err != nil {
		return im.sum, fmt.Errorf("import: schema version: %w", err)
	}
	if im.manifest.Schema > schemaVersion {
		return im.sum, badArchive("it was exported at schema version %d, and this database is at %d: upgrade edgecms and run edgecms migrate first",
			im.manifest.Schema, schemaVersion)
	}
	im.guid = im.manifest.Guid
	if im.opt.Guid != "" {
		g, err := content.NormalizeGuid(im.opt.Guid)
		if err != nil {
			return im.sum, fmt.Errorf("--guid: %w", err)
		}
		im.guid = g
	}
	im.sum = Summary{Guid: im.guid, Rows: map[string]int64{}}

	tx, err := im.db.BeginTxx(ctx, nil)
	if err != nil {
		return im.sum, fmt.Errorf("import: %w", err)
	}
	im.tx = tx
	defer tx.Rollback()
	err = tx.QueryRowxContext(ctx, insertInstanceSQL, im.guid, im.manifest.CreatedAt).Scan(&im.instID)
	if pqCode(err) == "23505" {
		return im.sum, problem.Conflictf("instance %q exists already: import with --guid NEW, or delete it first", im.guid)
	}
	if err != nil {
		return im.sum, fmt.Errorf("import: create instance %q: %w", im.guid, err)
	}
	if err := im.instanceSettings(ctx); err != nil {
		return im.sum, err
	}
	// Sequences first, so that rows created meanwhile by a running
	// origin take numbers above the archive's.
	if err := im.setSequences(ctx, im.manifest.Sequences); err != nil {
		return im.sum, err
	}
	end, err := im.readEntries(ctx)
	if err != nil {
		return im.sum, err
	}
	if err := im.finish(ctx, end); err != nil {
		return im.sum, err
	}
	if err := tx.Commit(); err != nil {
		return im.sum, fmt.Errorf("import: commit: %w", err)
	}
	return im.sum, nil
}

// instanceSettings copies the columns of the archive's instance row that
// this schema has (settings added by later migrations) to the new
// instance; the id, guid and creation time are set already.
func (im *importer) instanceSettings(ctx context.Context) error {
	if len(im.manifest.Instance) == 0 {
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(im.manifest.Instance, &keys); err != nil {
		return badArchive("%s: instance: %v", manifestName, err)
	}
	cols, err := im.columns(ctx, "instances")
	if err != nil {
		return err
	}
	var set []string
	for _, c := range cols {
		if _, ok := keys[c]; ok && c != "id" && c != "guid" && c != "created_at" {
			set = append(set, pq.QuoteIdentifier(c)+" = r."+pq.QuoteIdentifier(c))
		}
	}
	for k := range keys {
		if !slices.Contains(cols, k) {
			return badArchive("%s: instance column %q, which this schema does not have", manifestName, k)
		}
	}
	if len(set) == 0 {
		return nil
	}
	q := fmt.Sprintf(instanceSettingsSQL, strings.Join(set, ", "))
	if _, err := im.tx.ExecContext(ctx, q, im.instID, string(im.manifest.Instance)); err != nil {
		return fmt.Errorf("import: instance settings: %w", err)
	}
	return nil
}

// readManifest reads the first entry, which must be the manifest.
func (im *importer) readManifest() error {
	h, err := im.tr.Next()
	if err != nil {
		return badArchive("not a tar archive of edgecms export (%v)", err)
	}
	if h.Name != manifestName {
		return badArchive("first entry is %q, not %s: not an archive of edgecms export", h.Name, manifestName)
	}
	body, err := readSmall(im.tr, h)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, &im.manifest); err != nil {
		return badArchive("%s: %v", manifestName, err)
	}
	m := im.manifest
	if m.Format != Format {
		return badArchive("%s: format %q, want %q", manifestName, m.Format, Format)
	}
	if m.Version < 1 || m.Version > Version {
		return badArchive("format version %d; this edgecms reads version %d: import it with a newer edgecms", m.Version, Version)
	}
	if _, err := content.NormalizeGuid(m.Guid); err != nil {
		return badArchive("%s: bad guid %q", manifestName, m.Guid)
	}
	if _, err := time.Parse(time.RFC3339Nano, m.CreatedAt); err != nil {
		return badArchive("%s: bad createdAt %q", manifestName, m.CreatedAt)
	}
	return nil
}

// readEntries reads the tables and assets up to the end record, which it
// returns.
func (im *importer) readEntries(ctx context.Context) (End, error) {
	last := -1 // index in tables of the last table read
	assets := false
	for {
		h, err := im.tr.Next()
		if err == io.EOF {
			return End{}, badArchive("it ends before %s: the file was cut short", endName)
		}
		if err != nil {
			return End{}, badArchive("%v (the file may be cut short or damaged)", err)
		}
		switch {
		case h.Name == endName:
			body, err := readSmall(im.tr, h)
			if err != nil {
				return End{}, err
			}
			var end End
			if err := json.Unmarshal(body, &end); err != nil {
				return End{}, badArchive("%s: %v", endName, err)
			}
			if _, err := im.tr.Next(); err != io.EOF {
				return End{}, badArchive("entries after %s", endName)
			}
			return end, nil
		case strings.HasPrefix(h.Name, tablesDir):
			name, ok := parseChunkName(h.Name)
			i, known := tableIndex(name)
			if !ok || !known {
				return End{}, badArchive("unknown entry %q", h.Name)
			}
			if i < last || assets {
				return End{}, badArchive("entry %q out of order", h.Name)
			}
			last = i
			if err := im.importChunk(ctx, tables[i], h.Name); err != nil {
				return End{}, err
			}
		case strings.HasPrefix(h.Name, assetsDir):
			assets = true
			if err := im.importAsset(ctx, h); err != nil {
				return End{}, err
			}
		default:
			return End{}, badArchive("unknown entry %q", h.Name)
		}
	}
}

// importChunk inserts the rows of one chunk, in batches.
func (im *importer) importChunk(ctx context.Context, t table, entry string) error {
	cols, err := im.columns(ctx, t.name)
	if err != nil {
		return err
	}
	lr := bufio.NewReaderSize(im.tr, 64<<10)
	var (
		batch bytes.Buffer
		n     int
		line  int
		first []byte // the batch's first row, whose keys name the columns
	)
	flush := func() error {
		if n == 0 {
			return nil
		}
		batch.WriteByte(']')
		if err := im.insert(ctx, t, cols, first, batch.Bytes(), n, entry); err != nil {
			return err
		}
		im.sum.Rows[t.name] += int64(n)
		batch.Reset()
		n, first = 0, nil
		return nil
	}
	for {
		row, err := readLine(lr)
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return badArchive("%s line %d: %v (the file may be cut short or damaged)", entry, line, err)
		}
		row = bytes.TrimSpace(row)
		if len(row) == 0 {
			continue
		}
		if row[0] != '{' || !json.Valid(row) {
			return badArchive("%s line %d: not a JSON object", entry, line)
		}
		if n == 0 {
			batch.WriteByte('[')
			first = append([]byte(nil), row...)
		} else {
			batch.WriteByte(',')
		}
		batch.Write(row)
		n++
		if n >= batchRows || batch.Len() >= batchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// readLine reads one line of at most maxRowBytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		part, err := r.ReadSlice('\n')
		out = append(out, part...)
		if len(out) > maxRowBytes {
			return nil, fmt.Errorf("a row of more than %d bytes", maxRowBytes)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(out) > 0:
			return out, nil
		default:
			return out, err
		}
	}
}

// columns returns the columns of a table in this database.
func (im *importer) columns(ctx context.Context, name string) ([]string, error) {
	var cols []string
	if err := im.tx.SelectContext(ctx, &cols, tableColumnsSQL, name); err != nil {
		return nil, fmt.Errorf("import: columns of %s: %w", name, err)
	}
	return cols, nil
}

// insert inserts a batch of rows (a JSON array of n objects) into t: the
// columns the first row has, and instance_id set to the new instance.
func (im *importer) insert(ctx context.Context, t table, cols []string, first, batch []byte, n int, entry string) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(first, &keys); err != nil {
		return badArchive("%s: %v", entry, err)
	}
	var names, values []string
	hasInstance := false
	for _, c := range cols {
		if c == "instance_id" {
			hasInstance = true
			continue
		}
		if _, ok := keys[c]; ok {
			names = append(names, pq.QuoteIdentifier(c))
			values = append(values, "r."+pq.QuoteIdentifier(c))
		}
	}
	for k := range keys {
		if !slices.Contains(cols, k) && k != "instance_id" {
			return badArchive("%s: column %q, which table %s does not have", entry, k, t.name)
		}
	}
	if hasInstance {
		names = append(names, "instance_id")
		values = append(values, "$2::bigint")
	}
	q := fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM json_populate_recordset(NULL::%s, $1::json) r`,
		pq.QuoteIdentifier(t.name), strings.Join(names, ", "), strings.Join(values, ", "), pq.QuoteIdentifier(t.name))
	var conds []string
	if cond, ok := owned[t.name]; ok {
		conds = append(conds, cond)
	}
	if !hasInstance && len(conds) == 0 {
		conds = append(conds, "$2::bigint IS NOT NULL") // every statement takes the same parameters
	}
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	res, err := im.tx.ExecContext(ctx, q, string(batch), im.instID)
	if err != nil {
		return rowsError(t.name, entry, err)
	}
	if got, _ := res.RowsAffected(); got != int64(n) {
		return badArchive("%s: %d of its rows refer to rows outside the archive's instance", entry, int64(n)-got)
	}
	return nil
}

// rowsError explains an insert that failed.
func rowsError(tableName, entry string, err error) error {
	var pe *pq.Error
	if !errors.As(err, &pe) {
		return fmt.Errorf("import: %s: %w", entry, err)
	}
	switch pe.Code {
	case "23505": // unique violation
		if tableName == "api_keys" || tableName == "tokens" {
			return problem.Conflictf("import: %s: an API key or token of the archive exists in this database already (%s): "+
				"its instance, or an earlier import of it, is here; keys must be unique, so import into a database without it", entry, pe.Constraint)
		}
		return problem.Conflictf("import: %s: ids of the archive are taken in this database (%s): the import keeps the ids the Fetch API shows, "+
			"so it needs a database without the original instance or an earlier import of it", entry, pe.Constraint)
	case "23503", "23502", "23514", "22P02", "22007", "22008", "22023", "42804": // references, NOT NULL, checks, bad values
		return badArchive("%s: %s", entry, pe.Message)
	}
	return fmt.Errorf("import: %s: %w", entry, err)
}

// importAsset writes one asset's bytes to the store under the new guid,
// once their hash is checked against their name.
func (im *importer) importAsset(ctx context.Context, h *tar.Header) error {
	name := strings.TrimPrefix(h.Name, assetsDir)
	hash, typ, ok := media.ParseName(name)
	if !ok || h.Typeflag != tar.TypeReg {
		return badArchive("unknown entry %q", h.Name)
	}
	if im.seen[name] {
		return badArchive("asset %s twice", name)
	}
	f, err := os.CreateTemp(im.opt.TempDir, "edgecms-import-*")
	if err != nil {
		return fmt.Errorf("import: spool asset: %w", err)
	}
	defer func() { f.Close(); os.Remove(f.Name()) }()
	sha := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, sha), im.tr)
	if err != nil {
		return badArchive("asset %s: %v (the file may be cut short)", name, err)
	}
	if got := hex.EncodeToString(sha.Sum(nil)); got != hash {
		return badArchive("asset %s: its bytes hash to %s: the archive is damaged", name, got)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	key := media.AssetKey(im.guid, name)
	written, err := im.objects.PutFrom(ctx, store.Object{Key: key, ContentType: typ.ContentType, CacheControl: media.CacheControl}, f, n)
	if err != nil {
		return fmt.Errorf("import: store asset %s: %w", key, err)
	}
	if written {
		im.written = append(im.written, key)
	}
	im.seen[name] = true
	im.sum.Assets++
	im.sum.AssetBytes += n
	return nil
}

// finish checks what was read against the end record, moves asset keys to
// the new guid, checks that every asset has its bytes, and sets the
// sequences past the imported rows.
func (im *importer) finish(ctx context.Context, end End) error {
	for _, t := range tables {
		if got, want := im.sum.Rows[t.name], end.Rows[t.name]; got != want {
			return badArchive("%d rows of %s, and %s says %d: the archive is damaged", got, t.name, endName, want)
		}
	}
	if im.sum.Assets != end.Assets {
		return badArchive("%d assets, and %s says %d: the archive is damaged", im.sum.Assets, endName, end.Assets)
	}
	if im.guid != im.manifest.Guid {
		from, to := media.AssetKey(im.manifest.Guid, ""), media.AssetKey(im.guid, "")
		if _, err := im.tx.ExecContext(ctx, rekeyAssetsSQL, im.instID, from, to); err != nil {
			return fmt.Errorf("import: move asset keys to %s: %w", im.guid, err)
		}
		if _, err := im.tx.ExecContext(ctx, rekeyImagesSQL, im.instID, from, to); err != nil {
			return fmt.Errorf("import: move image values to %s: %w", im.guid, err)
		}
		for _, q := range []string{rekeyItemVersionsSQL, rekeyPageVersionsSQL} {
			if _, err := im.tx.ExecContext(ctx, q, im.instID, from, to); err != nil {
				return fmt.Errorf("import: move image values of versions to %s: %w", im.guid, err)
			}
		}
	}
	if err := im.checkAssetBytes(ctx); err != nil {
		return err
	}
	var disabled []string
	if err := im.tx.SelectContext(ctx, &disabled, disableUnsignedSQL, im.instID); err != nil {
		return fmt.Errorf("import: webhooks: %w", err)
	}
	for _, id := range disabled {
		im.sum.Notes = append(im.sum.Notes, fmt.Sprintf("webhook %s signs its deliveries and its secret is not exported: "+
			"it is disabled; save it with enabled true to generate a new secret (shown once) and give it to the receiver", id))
	}
	highs := map[string]int64{}
	if err := sequenceHighs(ctx, im.tx, im.instID, highs); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return im.setSequences(ctx, highs)
}

// checkAssetBytes checks that the bytes of every imported asset are in the
// store: from the archive, or there already.
func (im *importer) checkAssetBytes(ctx context.Context) error {
	rows, err := im.tx.QueryContext(ctx, importedAssetKeysSQL, im.instID)
	if err != nil {
		return fmt.Errorf("import: asset keys: %w", err)
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return err
		}
		if im.seen[key[strings.LastIndexByte(key, '/')+1:]] {
			continue
		}
		if _, err := im.objects.Stat(ctx, key); problem.Is(err, problem.NotFound) {
			missing = append(missing, key)
		} else if err != nil {
			return fmt.Errorf("import: asset %s: %w", key, err)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(missing) > 0 {
		return badArchive("the bytes of %d assets are missing, such as %s", len(missing), missing[0])
	}
	return nil
}

// setSequences moves the named sequences forward to the given numbers.
func (im *importer) setSequences(ctx context.Context, highs map[string]int64) error {
	for name, high := range highs {
		var err error
		if _, ok := otherSequences[name]; ok {
			_, err = im.tx.ExecContext(ctx, setSequenceSQL, name, high)
		} else if t, col, ok := serialOf(name); ok {
			_, err = im.tx.ExecContext(ctx, setSerialSQL, t, col, high)
		} else {
			return badArchive("%s: unknown sequence %q", manifestName, name)
		}
		if err != nil {
			return fmt.Errorf("import: sequence %s: %w", name, err)
		}
	}
	return nil
}

// serialOf returns the table and column of a sequence name of Manifest.
func serialOf(name string) (string, string, bool) {
	for _, t := range tables {
		if t.serial != "" && sequenceName(t) == name {
			return t.name, t.serial, true
		}
	}
	return "", "", false
}

// release deletes the asset bytes a failed import wrote, so that edges
// (which serve assets from the store alone) do not serve them.
func (im *importer) release() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, key := range im.written {
		im.objects.Delete(ctx, key)
	}
}

// readSmall reads a small entry whole.
func readSmall(tr *tar.Reader, h *tar.Header) ([]byte, error) {
	if h.Size > maxManifestBytes {
		return nil, badArchive("%s is %d bytes, more than a %s can be", h.Name, h.Size, h.Name)
	}
	body, err := io.ReadAll(tr)
	if err != nil {
		return nil, badArchive("%s: %v", h.Name, err)
	}
	return body, nil
}

// pqCode is the SQLSTATE of a Postgres error, or "".
func pqCode(err error) string {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return string(pe.Code)
	}
	return ""
}
