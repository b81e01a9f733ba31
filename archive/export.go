package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/syncstamp"
)

const (
	exportInstanceSQL = `SELECT id, guid, to_jsonb(created_at) #>> '{}', to_jsonb(i) - 'id' - 'guid' FROM instances i WHERE guid = $1`
	schemaVersionSQL  = `SELECT coalesce(max(version), 0) FROM schema_migrations`
	// exportAssetKeysSQL lists the bytes to copy: assets may share them.
	exportAssetKeysSQL = `SELECT DISTINCT object_key FROM assets WHERE instance_id = $1 ORDER BY object_key`
)

// Export writes instance guid of db, with the bytes of its assets from
// objects, to w as one archive (a plain tar; the caller may compress it).
// It stamps pending sync positions, then reads the database in one
// read-only snapshot, so that the archive is consistent while editors keep
// working (a read-only transaction takes no transaction id, so however long
// the asset copy takes it holds back no reader of the event log). It
// returns what it wrote; an error leaves w with a partial archive, which an
// import refuses.
func Export(ctx context.Context, db *sqlx.DB, objects store.Store, guid string, w io.Writer) (Summary, error) {
	g, err := content.NormalizeGuid(guid)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Guid: g, Rows: map[string]int64{}}
	// The sync endpoints stamp before they read: stamp now, so that the
	// archive holds the positions a sync client has seen or will see.
	if _, err := syncstamp.New(db).Stamp(ctx); err != nil {
		return sum, fmt.Errorf("export %s: %w", g, err)
	}
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return sum, fmt.Errorf("export %s: %w", g, err)
	}
	defer tx.Rollback()
	var instID int64
	m := Manifest{Format: Format, Version: Version, Sequences: map[string]int64{}}
	err = tx.QueryRowxContext(ctx, exportInstanceSQL, g).Scan(&instID, &m.Guid, &m.CreatedAt, &m.Instance)
	if errors.Is(err, sql.ErrNoRows) {
		return sum, problem.NotFoundf("instance %q not found", g)
	}
	if err != nil {
		return sum, fmt.Errorf("export %s: %w", g, err)
	}
	if err := tx.GetContext(ctx, &m.Schema, schemaVersionSQL); err != nil {
		return sum, fmt.Errorf("export %s: schema version: %w", g, err)
	}
	m.ExportedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := sequenceHighs(ctx, tx, instID, m.Sequences); err != nil {
		return sum, fmt.Errorf("export %s: %w", g, err)
	}

	tw := tar.NewWriter(w)
	mb, _ := json.MarshalIndent(m, "", "  ")
	if err := writeEntry(tw, manifestName, mb); err != nil {
		return sum, err
	}
	for _, t := range tables {
		n, err := exportTable(ctx, tx, tw, t, instID)
		if err != nil {
			return sum, fmt.Errorf("export %s: table %s: %w", g, t.name, err)
		}
		sum.Rows[t.name] = n
	}
	if err := exportAssets(ctx, tx, tw, objects, instID, &sum); err != nil {
		return sum, fmt.Errorf("export %s: %w", g, err)
	}
	eb, _ := json.MarshalIndent(End{Rows: sum.Rows, Assets: sum.Assets}, "", "  ")
	if err := writeEntry(tw, endName, eb); err != nil {
		return sum, err
	}
	if err := tw.Close(); err != nil {
		return sum, fmt.Errorf("export %s: %w", g, err)
	}
	return sum, nil
}

// sequenceHighs sets, in seqs, the highest number the instance's rows took
// from each sequence.
func sequenceHighs(ctx context.Context, tx *sqlx.Tx, instID int64, seqs map[string]int64) error {
	for _, t := range tables {
		if t.serial == "" {
			continue
		}
		var high sql.NullInt64
		q := fmt.Sprintf(`SELECT max(%s) FROM %s WHERE instance_id = $1`, t.serial, t.name)
		if err := tx.GetContext(ctx, &high, q, instID); err != nil {
			return fmt.Errorf("highest %s: %w", sequenceName(t), err)
		}
		if high.Valid {
			seqs[sequenceName(t)] = high.Int64
		}
	}
	for name, q := range otherSequences {
		var high sql.NullInt64
		if err := tx.GetContext(ctx, &high, q, instID); err != nil {
			return fmt.Errorf("highest %s: %w", name, err)
		}
		if high.Valid {
			seqs[name] = high.Int64
		}
	}
	return nil
}

// exportTable writes the rows of t as JSON Lines in chunks of about
// chunkBytes, and returns how many it wrote.
func exportTable(ctx context.Context, tx *sqlx.Tx, tw *tar.Writer, t table, instID int64) (int64, error) {
	rows, err := tx.QueryContext(ctx, t.query, instID)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		buf   bytes.Buffer
		n     int64
		chunk int
		row   sql.RawBytes
	)
	flush := func() error {
		if buf.Len() == 0 {
			return nil
		}
		chunk++
		err := writeEntry(tw, chunkName(t.name, chunk), buf.Bytes())
		buf.Reset()
		return err
	}
	for rows.Next() {
		if err := rows.Scan(&row); err != nil {
			return n, err
		}
		buf.Write(row)
		buf.WriteByte('\n')
		n++
		if buf.Len() >= chunkBytes {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// exportAssets copies the bytes of every asset of the instance from the
// store into the archive, each as it is read.
func exportAssets(ctx context.Context, tx *sqlx.Tx, tw *tar.Writer, objects store.Store, instID int64, sum *Summary) error {
	rows, err := tx.QueryContext(ctx, exportAssetKeysSQL, instID)
	if err != nil {
		return fmt.Errorf("asset keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return err
		}
		n, err := exportAsset(ctx, tw, objects, key)
		if err != nil {
			return err
		}
		sum.Assets++
		sum.AssetBytes += n
	}
	return rows.Err()
}

// exportAsset copies one asset's bytes and returns their size.
func exportAsset(ctx context.Context, tw *tar.Writer, objects store.Store, key string) (int64, error) {
	rc, info, err := objects.Open(ctx, key)
	if problem.Is(err, problem.NotFound) {
		return 0, fmt.Errorf("asset bytes %s are missing from the object store: restore them from a backup of the store first", key)
	}
	if err != nil {
		return 0, fmt.Errorf("asset %s: %w", key, err)
	}
	defer rc.Close()
	if err := tw.WriteHeader(&tar.Header{Name: assetName(key), Mode: 0o644, Size: info.Size, ModTime: info.Modified,
		Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return 0, err
	}
	if _, err := io.Copy(tw, rc); err != nil {
		return 0, fmt.Errorf("asset %s: %w", key, err)
	}
	return info.Size, nil
}

// writeEntry writes one entry held in memory.
func writeEntry(tw *tar.Writer, name string, body []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Now().UTC(),
		Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}
