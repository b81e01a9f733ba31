package content

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/internal/pg"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
)

// Asset is an uploaded file whose bytes live in the object store under a
// key made from their SHA-256 (see AssetFile.Key), with what the Fetch API
// shows of it.
type Asset struct {
	ID          int64  `db:"id" json:"assetID"`
	FileName    string `db:"file_name" json:"fileName"`
	Label       string `db:"label" json:"label"`
	ContentType string `db:"content_type" json:"contentType"`
	Size        int64  `db:"size" json:"size"`
	// Width and Height are the pixel size read from the bytes (0 when the
	// type has none: PDF, an SVG without a declared size).
	Width  int    `db:"width" json:"width"`
	Height int    `db:"height" json:"height"`
	SHA256 string `db:"sha256" json:"sha256"`
	// Key is the object key of the bytes, relative to the store; URL is
	// where they are served, made from the key and Store.PublicURL.
	Key       string    `db:"object_key" json:"key"`
	URL       string    `db:"-" json:"url"`
	CreatedAt time.Time `db:"created_at" json:"createdAt"`
	Modified  time.Time `db:"modified_at" json:"modified"`
}

// DefaultMaxAssetBytes is the default upload limit of an asset file
// (EDGECMS_UPLOAD_MAX_BYTES).
const DefaultMaxAssetBytes = 50 << 20

// AssetFile is what an upload's bytes tell: read by media.Inspect and
// hashed while they were stored.
type AssetFile struct {
	ContentType   string // one of media.Types
	Ext           string // its key extension
	SHA256        string // lower-case hex
	Size          int64
	Width, Height int
}

// NewAssetFile is the AssetFile of bytes that media.Inspect read as info,
// of the given size and SHA-256 (hex).
func NewAssetFile(info media.Info, sha256Hex string, size int64) AssetFile {
	return AssetFile{ContentType: info.Type.ContentType, Ext: info.Type.Ext, SHA256: sha256Hex,
		Size: size, Width: info.Width, Height: info.Height}
}

// InspectAsset inspects the bytes of a file held in memory (the origin
// streams uploads instead), as an upload's are: an accepted type
// (media.Inspect) of at most DefaultMaxAssetBytes. Anything else is an
// Invalid problem on the field "file" (TooLarge when it is over the limit).
func InspectAsset(body []byte) (AssetFile, error) {
	if len(body) == 0 {
		return AssetFile{}, problem.Field("file", "is empty")
	}
	if len(body) > DefaultMaxAssetBytes {
		return AssetFile{}, &problem.Error{Kind: problem.TooLarge,
			Detail: fmt.Sprintf("file: %d bytes is over the asset limit of %d bytes", len(body), DefaultMaxAssetBytes)}
	}
	info, err := media.Inspect(bytes.NewReader(body), int64(len(body)))
	if errors.Is(err, media.ErrUnknownType) {
		return AssetFile{}, problem.Field("file", "is not one of the accepted types: %s", media.Accepted)
	}
	if err != nil {
		return AssetFile{}, problem.Field("file", "%v", err)
	}
	sum := sha256.Sum256(body)
	return NewAssetFile(info, hex.EncodeToString(sum[:]), int64(len(body))), nil
}

// Name is the file name of the bytes in the object store: {sha256}.{ext}.
func (f AssetFile) Name() string { return f.SHA256 + "." + f.Ext }

// Key is the object key of the bytes: {guid}/assets/{sha256}.{ext}. The
// same bytes always have the same key, so they can be cached for good.
func (f AssetFile) Key(guid string) string { return media.AssetKey(guid, f.Name()) }

// NewAsset is an upload to record: its inspected file, and the file name
// and label it was given.
type NewAsset struct {
	File     AssetFile
	FileName string
	Label    string
}

// AssetUpdate is what an update of an asset may set; nil members keep
// their values.
type AssetUpdate struct {
	FileName *string `json:"fileName"`
	Label    *string `json:"label"`
}

// Limits of the texts of an asset, in characters.
const (
	maxFileName   = 255
	maxAssetLabel = 1000
)

// cleanFileName keeps the last element of a path a browser may send
// (C:\fakepath\a.png) and checks it.
func cleanFileName(name string) (string, *problem.FieldError) {
	name = strings.TrimSpace(path.Base(strings.ReplaceAll(name, `\`, "/")))
	if name == "." || name == "/" {
		name = ""
	}
	switch {
	case name == "":
		return "", &problem.FieldError{Field: "fileName", Reason: "is required"}
	case utf8.RuneCountInString(name) > maxFileName:
		return "", &problem.FieldError{Field: "fileName", Reason: fmt.Sprintf("must be at most %d characters", maxFileName)}
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", &problem.FieldError{Field: "fileName", Reason: "must not contain control characters"}
	}
	return name, nil
}

func checkLabel(label string) *problem.FieldError {
	if utf8.RuneCountInString(label) > maxAssetLabel {
		return &problem.FieldError{Field: "label", Reason: fmt.Sprintf("must be at most %d characters", maxAssetLabel)}
	}
	if strings.ContainsRune(label, 0) {
		return &problem.FieldError{Field: "label", Reason: "must not contain the NUL character"}
	}
	return nil
}

const (
	assetColumns   = `id, file_name, label, content_type, size, width, height, sha256, object_key, created_at, modified_at`
	insertAssetSQL = `INSERT INTO assets (instance_id, file_name, label, content_type, size, width, height, sha256, object_key, created_at, modified_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ` + assetColumns
	// lockAssetKeySQL serialises the creations and deletions of the assets
	// of one object key (until the transaction ends), so that a deletion
	// that removes the bytes and an upload of the same bytes cannot
	// interleave (see CreateAsset).
	lockAssetKeySQL  = `SELECT pg_advisory_xact_lock($1, hashtext($2))`
	keyInUseSQL      = `SELECT EXISTS (SELECT 1 FROM assets WHERE object_key = $1)`
	selectAssetSQL   = `SELECT ` + assetColumns + ` FROM assets WHERE instance_id = $1 AND id = $2`
	lockAssetSQL     = selectAssetSQL + ` FOR UPDATE`
	selectAssetsSQL  = `SELECT ` + assetColumns + ` FROM assets WHERE instance_id = $1 ORDER BY id LIMIT $2 OFFSET $3`
	countAssetsSQL   = `SELECT count(*) FROM assets WHERE instance_id = $1`
	assetByKeySQL    = `SELECT ` + assetColumns + ` FROM assets WHERE object_key = $1 ORDER BY id LIMIT 1`
	updateAssetSQL   = `UPDATE assets SET file_name = $3, label = $4, modified_at = $5 WHERE instance_id = $1 AND id = $2 RETURNING ` + assetColumns
	deleteAssetSQL   = `DELETE FROM assets WHERE instance_id = $1 AND id = $2`
	assetGalleryUse  = `SELECT g.name FROM gallery_assets ga JOIN galleries g ON g.id = ga.gallery_id WHERE ga.asset_id = $1 ORDER BY g.id LIMIT 1`
	assetInGalleries = `SELECT EXISTS (SELECT 1 FROM gallery_assets WHERE asset_id = $1)`
	// assetItemUseSQL finds an item copy with an image field made from the
	// asset, in its working or published values.
	assetItemUseSQL = `SELECT content_id, locale FROM item_copies
		WHERE instance_id = $1 AND (jsonb_path_exists(fields, '$.* ? (@.assetID == $a)', jsonb_build_object('a', $2::bigint))
			OR jsonb_path_exists(coalesce(published_fields, '{}'), '$.* ? (@.assetID == $a)', jsonb_build_object('a', $2::bigint)))
		ORDER BY content_id, locale LIMIT 1`
)

// Clean validates the file name and label of in, and returns in with the
// file name reduced to its last path element (browsers may send
// C:\fakepath\a.png). Problems are Invalid, naming fileName or label.
func (in NewAsset) Clean() (NewAsset, error) {
	var errs []problem.FieldError
	name, fe := cleanFileName(in.FileName)
	if fe != nil {
		errs = append(errs, *fe)
	}
	if fe := checkLabel(in.Label); fe != nil {
		errs = append(errs, *fe)
	}
	in.FileName = name
	return in, problem.Fields(errs)
}

// CreateAsset records an upload whose bytes were stored at in.File.Key.
// stored is called in the transaction, after the row is written and under
// a lock on the key that DeleteAsset takes too: it must make sure that the
// bytes are still in the store (a deletion of the last asset with the same
// bytes may have removed them since they were stored) and store them again
// if not. An error it returns undoes the creation.
func (s *Store) CreateAsset(ctx context.Context, inst Instance, in NewAsset, stored func(ctx context.Context) error) (Asset, error) {
	in, err := in.Clean()
	if err != nil {
		return Asset{}, err
	}
	f := in.File
	var a Asset
	err = s.transact(ctx, func(tx *sqlx.Tx) error {
		key := f.Key(inst.Guid)
		if _, err := tx.ExecContext(ctx, lockAssetKeySQL, pg.LockAssetKey, key); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &a, insertAssetSQL, inst.ID, in.FileName, in.Label, f.ContentType, f.Size, f.Width, f.Height,
			f.SHA256, key, s.now()); err != nil {
			return err
		}
		return stored(ctx)
	})
	if err != nil {
		return Asset{}, fmt.Errorf("create asset: %w", err)
	}
	return s.withURL(a), nil
}

// withURL sets the asset's URL from its key.
func (s *Store) withURL(a Asset) Asset {
	a.URL = s.PublicURL.URL(a.Key)
	return a
}

// withURLs sets the URLs of assets.
func (s *Store) withURLs(as []Asset) {
	for i := range as {
		as[i] = s.withURL(as[i])
	}
}

// AssetPage is one page of an instance's assets.
type AssetPage struct {
	Items      []Asset `json:"items"`
	TotalCount int     `json:"totalCount"`
}

// Assets lists an instance's assets, oldest first.
func (s *Store) Assets(ctx context.Context, inst Instance, take, skip int) (AssetPage, error) {
	p := AssetPage{Items: []Asset{}}
	if err := s.db.SelectContext(ctx, &p.Items, selectAssetsSQL, inst.ID, take, skip); err != nil {
		return AssetPage{}, fmt.Errorf("list assets: %w", err)
	}
	if err := s.db.GetContext(ctx, &p.TotalCount, countAssetsSQL, inst.ID); err != nil {
		return AssetPage{}, fmt.Errorf("count assets: %w", err)
	}
	s.withURLs(p.Items)
	return p, nil
}

// Asset returns one asset.
func (s *Store) Asset(ctx context.Context, inst Instance, id int64) (Asset, error) {
	a, err := assetByID(ctx, s.db, inst, id)
	return s.withURL(a), err
}

func assetByID(ctx context.Context, q sqlx.QueryerContext, inst Instance, id int64) (Asset, error) {
	var a Asset
	if err := sqlx.GetContext(ctx, q, &a, selectAssetSQL, inst.ID, id); err != nil {
		return Asset{}, notFound(err, "asset %d not found", id)
	}
	return a, nil
}

// AssetByKey returns an asset whose bytes are at the object key (the
// oldest, when several share them), or a NotFound problem: bytes are
// served only while an asset has them.
func (s *Store) AssetByKey(ctx context.Context, key string) (Asset, error) {
	var a Asset
	if err := s.db.GetContext(ctx, &a, assetByKeySQL, key); err != nil {
		return Asset{}, notFound(err, "no asset is stored at %q", key)
	}
	return s.withURL(a), nil
}

// UpdateAsset sets the file name or label of an asset. Galleries that hold
// it change with it; image fields keep the label they were saved with.
func (s *Store) UpdateAsset(ctx context.Context, inst Instance, id int64, in AssetUpdate) (Asset, error) {
	var a Asset
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &a, lockAssetSQL, inst.ID, id); err != nil {
			return notFound(err, "asset %d not found", id)
		}
		var errs []problem.FieldError
		if in.FileName != nil {
			name, fe := cleanFileName(*in.FileName)
			if fe != nil {
				errs = append(errs, *fe)
			}
			a.FileName = name
		}
		if in.Label != nil {
			if fe := checkLabel(*in.Label); fe != nil {
				errs = append(errs, *fe)
			}
			a.Label = *in.Label
		}
		if err := problem.Fields(errs); err != nil {
			return err
		}
		now := s.now()
		if err := tx.GetContext(ctx, &a, updateAssetSQL, inst.ID, id, a.FileName, a.Label, now); err != nil {
			return err
		}
		var inGallery bool
		if err := tx.GetContext(ctx, &inGallery, assetInGalleries, id); err != nil {
			return err
		}
		if inGallery {
			return galleriesChanged(ctx, tx, inst, now)
		}
		return nil
	})
	if err != nil {
		return Asset{}, fmt.Errorf("update asset %d: %w", id, err)
	}
	return s.withURL(a), nil
}

// DeleteAsset deletes an asset that no gallery holds and no image field
// uses. When no other asset has its bytes, release is called with their
// object key in the transaction, under the key's lock (see CreateAsset), to
// remove them from the store: bytes are served, by edges straight from
// the store, only while an asset has them. An error it returns undoes the
// deletion. (CDN caches may keep the bytes until they expire.)
func (s *Store) DeleteAsset(ctx context.Context, inst Instance, id int64, release func(ctx context.Context, key string) error) error {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		a, err := assetByID(ctx, tx, inst, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, lockAssetKeySQL, pg.LockAssetKey, a.Key); err != nil {
			return err
		}
		var gallery string
		err = tx.GetContext(ctx, &gallery, assetGalleryUse, id)
		if err == nil {
			return problem.Conflictf("asset %d is in gallery %q; remove it from the gallery first", id, gallery)
		}
		if err := notFound(err, ""); !problem.Is(err, problem.NotFound) {
			return err
		}
		var use struct {
			ContentID int64  `db:"content_id"`
			Locale    string `db:"locale"`
		}
		err = tx.GetContext(ctx, &use, assetItemUseSQL, inst.ID, id)
		if err == nil {
			return problem.Conflictf("asset %d is the image of item %d in locale %q; change that field first", id, use.ContentID, use.Locale)
		}
		if err := notFound(err, ""); !problem.Is(err, problem.NotFound) {
			return err
		}
		res, err := tx.ExecContext(ctx, deleteAssetSQL, inst.ID, id)
		if err := checkAffected(res, err, "asset %d not found", id); err != nil {
			return err
		}
		var inUse bool
		if err := tx.GetContext(ctx, &inUse, keyInUseSQL, a.Key); err != nil {
			return err
		}
		if inUse {
			return nil
		}
		return release(ctx, a.Key)
	})
	if err != nil {
		return fmt.Errorf("delete asset %d: %w", id, err)
	}
	return nil
}

// assetImage is the stored value of an image field made from an asset:
// the asset's id and key beside the image members the Fetch API renders
// (which makes the url from the key and the public URL).
type assetImage struct {
	AssetID  int64   `json:"assetID"`
	Key      string  `json:"key"`
	Label    string  `json:"label"`
	Target   *string `json:"target,omitempty"`
	Filesize int64   `json:"filesize"`
	Width    int     `json:"width"`
	Height   int     `json:"height"`
}

// withImageURLs returns the values with a url added to each asset image
// (an object with assetID and key), made from the key below u, as the
// management API shows them: stored values hold the key only, so that
// URLs follow the public URL. Values without asset images are returned as
// they are.
func withImageURLs(vals Values, u media.PublicURL) Values {
	var out Values
	for name, raw := range vals {
		if !hasAssetID(raw) {
			continue
		}
		var img map[string]json.RawMessage
		var key string
		if json.Unmarshal(raw, &img) != nil || json.Unmarshal(img["key"], &key) != nil || key == "" {
			continue
		}
		img["url"], _ = json.Marshal(u.URL(key))
		if out == nil {
			out = maps.Clone(vals)
		}
		out[name], _ = json.Marshal(img)
	}
	if out == nil {
		return vals
	}
	return out
}

// hasAssetID reports whether the value of an image field names an asset.
func hasAssetID(raw json.RawMessage) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	_, ok := probe["assetID"]
	return ok
}

// normalizeAssetImage reads an image value {assetID, label?, target?} and
// stores the asset's URL, size and pixel dimensions with it (and its label,
// unless one is given).
func normalizeAssetImage(ctx context.Context, q sqlx.QueryerContext, inst Instance, raw json.RawMessage) (json.RawMessage, error) {
	var in struct {
		AssetID int64   `json:"assetID"`
		Label   *string `json:"label"`
		Target  *string `json:"target"`
	}
	if err := strictDecode(raw, &in); err != nil || in.AssetID <= 0 {
		return nil, fmt.Errorf("must be an object {assetID, label?, target?} with a positive assetID")
	}
	a, err := assetByID(ctx, q, inst, in.AssetID)
	if problem.Is(err, problem.NotFound) {
		return nil, fmt.Errorf("asset %d not found", in.AssetID)
	}
	if err != nil {
		return nil, queryError{err}
	}
	v := assetImage{AssetID: a.ID, Key: a.Key, Label: a.Label, Target: in.Target, Filesize: a.Size, Width: a.Width, Height: a.Height}
	if in.Label != nil {
		if fe := checkLabel(*in.Label); fe != nil {
			return nil, fmt.Errorf("label %s", fe.Reason)
		}
		v.Label = *in.Label
	}
	return json.Marshal(v)
}
