package content

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// Settings are an instance's settings that the management API changes
// (GET and PATCH /settings, full role).
type Settings struct {
	// VersionLimit is the most versions kept per item or page copy (at
	// least 2), nil for all. The current and the published version are
	// kept whatever it says.
	VersionLimit *int `db:"version_limit" json:"versionLimit"`
}

// SettingsUpdate is a PATCH of Settings: a member left out keeps its
// value, null clears it.
type SettingsUpdate struct {
	VersionLimit json.RawMessage `json:"versionLimit"`
}

// MinVersionLimit is the smallest version cap: a copy keeps at least its
// current version and the one before it.
const MinVersionLimit = 2

const (
	selectSettingsSQL  = `SELECT version_limit FROM instances WHERE id = $1`
	setVersionLimitSQL = `UPDATE instances SET version_limit = $2 WHERE id = $1`
	// pruneItemVersionsSQL and prunePageVersionsSQL apply a new cap ($2)
	// to the versions already kept in instance $1, as the copies' triggers
	// (schema/015) do at each save: the newest $2 of each copy stay, and
	// its current and published versions.
	pruneItemVersionsSQL = `DELETE FROM item_versions v USING (
			SELECT content_id, locale, version_id,
				row_number() OVER (PARTITION BY content_id, locale ORDER BY version_id DESC) AS n
			FROM item_versions WHERE instance_id = $1) r, item_copies c
		WHERE r.n > $2 AND v.content_id = r.content_id AND v.locale = r.locale AND v.version_id = r.version_id
		  AND c.content_id = v.content_id AND c.locale = v.locale
		  AND v.version_id <> c.version_id AND v.version_id IS DISTINCT FROM c.published_version_id`
	prunePageVersionsSQL = `DELETE FROM page_versions v USING (
			SELECT page_id, locale, version_id,
				row_number() OVER (PARTITION BY page_id, locale ORDER BY version_id DESC) AS n
			FROM page_versions WHERE instance_id = $1) r, page_copies c
		WHERE r.n > $2 AND v.page_id = r.page_id AND v.locale = r.locale AND v.version_id = r.version_id
		  AND c.page_id = v.page_id AND c.locale = v.locale
		  AND v.version_id <> c.version_id AND v.version_id IS DISTINCT FROM c.published_version_id`
)

// Settings returns the settings of inst.
func (s *Store) Settings(ctx context.Context, inst Instance) (Settings, error) {
	var st Settings
	if err := s.db.GetContext(ctx, &st, selectSettingsSQL, inst.ID); err != nil {
		return Settings{}, notFound(err, "instance %q not found", inst.Guid)
	}
	return st, nil
}

// UpdateSettings changes the settings of inst that in names. A lower
// version cap drops the versions past it at once, in the same transaction.
func (s *Store) UpdateSettings(ctx context.Context, inst Instance, in SettingsUpdate) (Settings, error) {
	st, err := s.Settings(ctx, inst)
	if err != nil {
		return Settings{}, err
	}
	if len(in.VersionLimit) == 0 {
		return st, nil
	}
	var limit *int
	if string(in.VersionLimit) != "null" {
		var n int
		if err := json.Unmarshal(in.VersionLimit, &n); err != nil || n < MinVersionLimit {
			return Settings{}, problem.Field("versionLimit", "must be an integer >= %d, or null to keep every version", MinVersionLimit)
		}
		limit = &n
	}
	err = s.transact(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, setVersionLimitSQL, inst.ID, limit); err != nil {
			return err
		}
		if limit == nil {
			return nil
		}
		for _, q := range []string{pruneItemVersionsSQL, prunePageVersionsSQL} {
			if _, err := tx.ExecContext(ctx, q, inst.ID, *limit); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Settings{}, fmt.Errorf("update settings of %s: %w", inst.Guid, err)
	}
	st.VersionLimit = limit
	return st, nil
}
