package content

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/edgecms/edgecms/eventlog"
	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/problem"
)

// MediaGallery is a gallery: a named, ordered list of assets that gallery
// fields of items point to (by its ID). Galleries have no locale and no
// workflow: a change is live at once. (Gallery is the stored value of a
// gallery field.)
type MediaGallery struct {
	ID          int64  `db:"id" json:"galleryID"`
	Name        string `db:"name" json:"name"`
	Description string `db:"description" json:"description"`
	Count       int    `db:"count" json:"count"`
	// Media holds the gallery's assets in order; lists of galleries leave
	// it empty.
	Media     []Asset   `db:"-" json:"media"`
	CreatedAt time.Time `db:"created_at" json:"createdAt"`
	Modified  time.Time `db:"modified_at" json:"modified"`
}

// GalleryInput is what a create or update of a gallery sets; nil members
// keep their values (a create needs a name).
type GalleryInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// Limits of the texts of a gallery, in characters.
const (
	maxGalleryName        = 200
	maxGalleryDescription = 2000
)

func (in GalleryInput) apply(g *MediaGallery) error {
	var errs []problem.FieldError
	if in.Name != nil {
		g.Name = strings.TrimSpace(*in.Name)
	}
	if in.Description != nil {
		g.Description = *in.Description
	}
	if g.Name == "" || utf8.RuneCountInString(g.Name) > maxGalleryName {
		errs = append(errs, problem.FieldError{Field: "name", Reason: fmt.Sprintf("must be 1 to %d characters", maxGalleryName)})
	}
	if utf8.RuneCountInString(g.Description) > maxGalleryDescription {
		errs = append(errs, problem.FieldError{Field: "description", Reason: fmt.Sprintf("must be at most %d characters", maxGalleryDescription)})
	}
	for field, s := range map[string]string{"name": g.Name, "description": g.Description} {
		if strings.ContainsRune(s, 0) {
			errs = append(errs, problem.FieldError{Field: field, Reason: "must not contain the NUL character"})
		}
	}
	return problem.Fields(errs)
}

const (
	galleryColumns     = `g.id, g.name, g.description, (SELECT count(*) FROM gallery_assets ga WHERE ga.gallery_id = g.id) AS count, g.created_at, g.modified_at`
	selectGallerySQL   = `SELECT ` + galleryColumns + ` FROM galleries g WHERE g.instance_id = $1 AND g.id = $2`
	lockGallerySQL     = `SELECT id FROM galleries WHERE instance_id = $1 AND id = $2 FOR UPDATE`
	selectGalleriesSQL = `SELECT ` + galleryColumns + ` FROM galleries g WHERE g.instance_id = $1 ORDER BY g.id`
	insertGallerySQL   = `INSERT INTO galleries (instance_id, name, description, created_at, modified_at) VALUES ($1, $2, $3, $4, $4) RETURNING id`
	updateGallerySQL   = `UPDATE galleries SET name = $3, description = $4, modified_at = $5 WHERE instance_id = $1 AND id = $2`
	touchGallerySQL    = `UPDATE galleries SET modified_at = $2 WHERE id = $1`
	deleteGallerySQL   = `DELETE FROM galleries WHERE instance_id = $1 AND id = $2`
	galleryMediaSQL    = `SELECT a.id, a.file_name, a.label, a.content_type, a.size, a.width, a.height, a.sha256, a.object_key, a.created_at, a.modified_at
		FROM gallery_assets ga JOIN assets a ON a.id = ga.asset_id WHERE ga.gallery_id = $1 ORDER BY ga.position, a.id`
	galleryAssetIDsSQL  = `SELECT asset_id FROM gallery_assets WHERE gallery_id = $1 ORDER BY position, asset_id`
	instanceAssetsSQL   = `SELECT id FROM assets WHERE instance_id = $1 AND id = ANY($2)`
	appendGalleryAssets = `INSERT INTO gallery_assets (gallery_id, asset_id, position)
		SELECT $1, t.id, coalesce((SELECT max(position) FROM gallery_assets WHERE gallery_id = $1), 0) + t.n
		FROM unnest($2::bigint[]) WITH ORDINALITY AS t(id, n)`
	removeGalleryAsset = `DELETE FROM gallery_assets WHERE gallery_id = $1 AND asset_id = $2`
	orderGalleryAssets = `UPDATE gallery_assets SET position = t.n FROM unnest($2::bigint[]) WITH ORDINALITY AS t(id, n)
		WHERE gallery_id = $1 AND asset_id = t.id`
	galleryExistsSQL = `SELECT EXISTS (SELECT 1 FROM galleries WHERE instance_id = $1 AND id = $2)`
	// galleryItemUseSQL finds an item copy with a gallery field pointing to
	// the gallery, in its working or published values.
	galleryItemUseSQL = `SELECT content_id, locale FROM item_copies
		WHERE instance_id = $1 AND (jsonb_path_exists(fields, '$.* ? (@.galleryID == $g)', jsonb_build_object('g', $2::bigint))
			OR jsonb_path_exists(coalesce(published_fields, '{}'), '$.* ? (@.galleryID == $g)', jsonb_build_object('g', $2::bigint)))
		ORDER BY content_id, locale LIMIT 1`
)

// galleriesChanged writes the event of a gallery change: a whole-list
// Deleted event without referenceName, locale or ids (a gallery is a list
// of media), so that caches of gallery answers are dropped and webhook
// receivers may re-read.
func galleriesChanged(ctx context.Context, tx *sqlx.Tx, inst Instance, now time.Time) error {
	return appendEvent(ctx, tx, inst, eventlog.Event{State: eventlog.Deleted, Subject: eventlog.SubjectList, ChangeDate: now})
}

func duplicateGallery(err error, name string) error {
	if pg.IsUniqueViolation(err) {
		return problem.Conflictf("a gallery named %q exists already", name)
	}
	return err
}

// CreateGallery creates an empty gallery.
func (s *Store) CreateGallery(ctx context.Context, inst Instance, in GalleryInput) (MediaGallery, error) {
	var g MediaGallery
	if err := in.apply(&g); err != nil {
		return MediaGallery{}, err
	}
	var id int64
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		now := s.now()
		if err := tx.GetContext(ctx, &id, insertGallerySQL, inst.ID, g.Name, g.Description, now); err != nil {
			return duplicateGallery(err, g.Name)
		}
		return galleriesChanged(ctx, tx, inst, now)
	})
	if err != nil {
		return MediaGallery{}, fmt.Errorf("create gallery: %w", err)
	}
	return s.Gallery(ctx, inst, id)
}

// Galleries lists an instance's galleries with their counts, without
// their media.
func (s *Store) Galleries(ctx context.Context, inst Instance) ([]MediaGallery, error) {
	gs := []MediaGallery{}
	if err := s.db.SelectContext(ctx, &gs, selectGalleriesSQL, inst.ID); err != nil {
		return nil, fmt.Errorf("list galleries: %w", err)
	}
	for i := range gs {
		gs[i].Media = []Asset{}
	}
	return gs, nil
}

// Gallery returns a gallery with its media in order.
func (s *Store) Gallery(ctx context.Context, inst Instance, id int64) (MediaGallery, error) {
	var g MediaGallery
	if err := s.db.GetContext(ctx, &g, selectGallerySQL, inst.ID, id); err != nil {
		return MediaGallery{}, notFound(err, "gallery %d not found", id)
	}
	g.Media = []Asset{}
	if err := s.db.SelectContext(ctx, &g.Media, galleryMediaSQL, id); err != nil {
		return MediaGallery{}, fmt.Errorf("gallery %d: %w", id, err)
	}
	s.withURLs(g.Media)
	return g, nil
}

// UpdateGallery sets the name or description of a gallery.
func (s *Store) UpdateGallery(ctx context.Context, inst Instance, id int64, in GalleryInput) (MediaGallery, error) {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		var g MediaGallery
		if err := tx.GetContext(ctx, &g, selectGallerySQL+` FOR UPDATE OF g`, inst.ID, id); err != nil {
			return notFound(err, "gallery %d not found", id)
		}
		if err := in.apply(&g); err != nil {
			return err
		}
		now := s.now()
		if _, err := tx.ExecContext(ctx, updateGallerySQL, inst.ID, id, g.Name, g.Description, now); err != nil {
			return duplicateGallery(err, g.Name)
		}
		return galleriesChanged(ctx, tx, inst, now)
	})
	if err != nil {
		return MediaGallery{}, fmt.Errorf("update gallery %d: %w", id, err)
	}
	return s.Gallery(ctx, inst, id)
}

// DeleteGallery deletes a gallery that no gallery field uses. Its assets
// stay.
func (s *Store) DeleteGallery(ctx context.Context, inst Instance, id int64) error {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := lockGallery(ctx, tx, inst, id); err != nil {
			return err
		}
		var use struct {
			ContentID int64  `db:"content_id"`
			Locale    string `db:"locale"`
		}
		err := tx.GetContext(ctx, &use, galleryItemUseSQL, inst.ID, id)
		if err == nil {
			return problem.Conflictf("gallery %d is used by item %d in locale %q; change that field first", id, use.ContentID, use.Locale)
		}
		if err := notFound(err, ""); !problem.Is(err, problem.NotFound) {
			return err
		}
		if _, err := tx.ExecContext(ctx, deleteGallerySQL, inst.ID, id); err != nil {
			return err
		}
		return galleriesChanged(ctx, tx, inst, s.now())
	})
	if err != nil {
		return fmt.Errorf("delete gallery %d: %w", id, err)
	}
	return nil
}

func lockGallery(ctx context.Context, tx *sqlx.Tx, inst Instance, id int64) error {
	var got int64
	return notFound(tx.GetContext(ctx, &got, lockGallerySQL, inst.ID, id), "gallery %d not found", id)
}

// galleryChange runs change on a locked gallery, then marks the gallery
// modified and writes the change's event.
func (s *Store) galleryChange(ctx context.Context, inst Instance, id int64, change func(tx *sqlx.Tx, current []int64) error) error {
	return s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := lockGallery(ctx, tx, inst, id); err != nil {
			return err
		}
		var current []int64
		if err := tx.SelectContext(ctx, &current, galleryAssetIDsSQL, id); err != nil {
			return err
		}
		if err := change(tx, current); err != nil {
			return err
		}
		now := s.now()
		if _, err := tx.ExecContext(ctx, touchGallerySQL, id, now); err != nil {
			return err
		}
		return galleriesChanged(ctx, tx, inst, now)
	})
}

// AddGalleryAssets appends assets of the instance to a gallery, in the
// order given. An asset already in the gallery, listed twice or unknown is
// an Invalid problem on assetIDs.
func (s *Store) AddGalleryAssets(ctx context.Context, inst Instance, id int64, assetIDs []int64) (MediaGallery, error) {
	if len(assetIDs) == 0 {
		return MediaGallery{}, problem.Field("assetIDs", "must list at least one asset")
	}
	err := s.galleryChange(ctx, inst, id, func(tx *sqlx.Tx, current []int64) error {
		in := map[int64]bool{}
		for _, a := range current {
			in[a] = true
		}
		listed := map[int64]bool{}
		for _, a := range assetIDs {
			switch {
			case in[a]:
				return problem.Field("assetIDs", "asset %d is in the gallery already", a)
			case listed[a]:
				return problem.Field("assetIDs", "asset %d is listed twice", a)
			}
			listed[a] = true
		}
		var found []int64
		if err := tx.SelectContext(ctx, &found, instanceAssetsSQL, inst.ID, pq.Array(assetIDs)); err != nil {
			return err
		}
		have := map[int64]bool{}
		for _, a := range found {
			have[a] = true
		}
		for _, a := range assetIDs {
			if !have[a] {
				return problem.Field("assetIDs", "asset %d not found", a)
			}
		}
		_, err := tx.ExecContext(ctx, appendGalleryAssets, id, pq.Array(assetIDs))
		return err
	})
	if err != nil {
		return MediaGallery{}, fmt.Errorf("add assets to gallery %d: %w", id, err)
	}
	return s.Gallery(ctx, inst, id)
}

// RemoveGalleryAsset removes an asset from a gallery (the asset stays).
func (s *Store) RemoveGalleryAsset(ctx context.Context, inst Instance, id, assetID int64) error {
	err := s.galleryChange(ctx, inst, id, func(tx *sqlx.Tx, current []int64) error {
		res, err := tx.ExecContext(ctx, removeGalleryAsset, id, assetID)
		return checkAffected(res, err, "gallery %d has no asset %d", id, assetID)
	})
	if err != nil {
		return fmt.Errorf("remove asset %d from gallery %d: %w", assetID, id, err)
	}
	return nil
}

// ReorderGallery sets the order of a gallery's assets; assetIDs must list
// each of them once.
func (s *Store) ReorderGallery(ctx context.Context, inst Instance, id int64, assetIDs []int64) error {
	err := s.galleryChange(ctx, inst, id, func(tx *sqlx.Tx, current []int64) error {
		in := map[int64]bool{}
		for _, a := range current {
			in[a] = true
		}
		seen := map[int64]bool{}
		for _, a := range assetIDs {
			if !in[a] || seen[a] {
				return problem.Field("assetIDs", "must list each of the gallery's %d assets once (%d is not in the gallery or repeated)", len(current), a)
			}
			seen[a] = true
		}
		if len(assetIDs) != len(current) {
			return problem.Field("assetIDs", "must list each of the gallery's %d assets once", len(current))
		}
		_, err := tx.ExecContext(ctx, orderGalleryAssets, id, pq.Array(assetIDs))
		return err
	})
	if err != nil {
		return fmt.Errorf("reorder gallery %d: %w", id, err)
	}
	return nil
}

// checkGallery checks the value of a gallery field: the gallery must be
// one of the instance's.
func checkGallery(ctx context.Context, q sqlx.QueryerContext, inst Instance, id int64) error {
	var ok bool
	if err := sqlx.GetContext(ctx, q, &ok, galleryExistsSQL, inst.ID, id); err != nil {
		return queryError{err}
	}
	if !ok {
		return fmt.Errorf("gallery %d not found", id)
	}
	return nil
}
