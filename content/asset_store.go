package content

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // decoders that image.DecodeConfig uses
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// Asset is an uploaded file: an image whose bytes live in the object store
// under a key made from their SHA-256 (see AssetFile.Key), with what the
// Fetch API shows of it.
type Asset struct {
	ID          int64  `db:"id" json:"assetID"`
	FileName    string `db:"file_name" json:"fileName"`
	Label       string `db:"label" json:"label"`
	ContentType string `db:"content_type" json:"contentType"`
	Size        int64  `db:"size" json:"size"`
	// Width and Height are the image's size in pixels, read from its bytes.
	Width  int    `db:"width" json:"width"`
	Height int    `db:"height" json:"height"`
	SHA256 string `db:"sha256" json:"sha256"`
	// Key is the object key of the bytes, URL where they are served.
	Key       string    `db:"object_key" json:"key"`
	URL       string    `db:"url" json:"url"`
	CreatedAt time.Time `db:"created_at" json:"createdAt"`
	Modified  time.Time `db:"modified_at" json:"modified"`
}

// MaxAssetBytes is the largest file an asset may have. (The origin's body
// limit applies before it.)
const MaxAssetBytes = 16 << 20

// maxAssetSide bounds the width and the height of an image asset, in pixels.
const maxAssetSide = 20000

// AssetFile is what InspectAsset learns from the bytes of an upload.
type AssetFile struct {
	ContentType   string // image/png, image/jpeg or image/gif
	Ext           string // png, jpg or gif
	SHA256        string // lower-case hex
	Size          int64
	Width, Height int
}

// assetTypes are the accepted types: content type, extension and the name
// image.DecodeConfig gives the format.
var assetTypes = []struct{ contentType, ext, format string }{
	{"image/png", "png", "png"},
	{"image/jpeg", "jpg", "jpeg"},
	{"image/gif", "gif", "gif"},
}

// InspectAsset checks the bytes of an upload and reads what an asset
// records of them. The type is taken from the content, never from a name
// or header: a PNG, JPEG or GIF image whose header decodes, at most
// MaxAssetBytes and maxAssetSide pixels a side. Anything else is an Invalid
// problem on the field "file" (TooLarge when the file is over the limit).
func InspectAsset(body []byte) (AssetFile, error) {
	if len(body) == 0 {
		return AssetFile{}, problem.Field("file", "is empty")
	}
	if len(body) > MaxAssetBytes {
		return AssetFile{}, &problem.Error{Kind: problem.TooLarge,
			Detail: fmt.Sprintf("file: %d bytes is over the asset limit of %d bytes", len(body), MaxAssetBytes),
			Fields: []problem.FieldError{{Field: "file", Reason: fmt.Sprintf("must be at most %d bytes", MaxAssetBytes)}}}
	}
	sniffed := http.DetectContentType(body)
	for _, t := range assetTypes {
		if sniffed != t.contentType {
			continue
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(body))
		if err != nil || format != t.format {
			return AssetFile{}, problem.Field("file", "looks like %s but its header does not decode", t.contentType)
		}
		if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxAssetSide || cfg.Height > maxAssetSide {
			return AssetFile{}, problem.Field("file", "is %dx%d pixels; each side must be 1 to %d", cfg.Width, cfg.Height, maxAssetSide)
		}
		sum := sha256.Sum256(body)
		return AssetFile{ContentType: t.contentType, Ext: t.ext, SHA256: hex.EncodeToString(sum[:]),
			Size: int64(len(body)), Width: cfg.Width, Height: cfg.Height}, nil
	}
	return AssetFile{}, problem.Field("file", "is %s; only PNG, JPEG and GIF images are accepted", strings.TrimSuffix(sniffed, "; charset=utf-8"))
}

// Name is the file name of the bytes in the object store: {sha256}.{ext}.
func (f AssetFile) Name() string { return f.SHA256 + "." + f.Ext }

// Key is the object key of the bytes: {guid}/assets/{sha256}.{ext}. The
// same bytes always have the same key, so they can be cached for good.
func (f AssetFile) Key(guid string) string { return AssetKey(guid, f.Name()) }

// AssetKey is the object key of the asset file name (as AssetFile.Name
// makes it) of instance guid.
func AssetKey(guid, name string) string { return strings.ToLower(guid) + "/assets/" + name }

// ValidAssetName reports whether name can be the file name of asset bytes:
// 64 lower-case hex digits, a dot and one of the accepted extensions.
func ValidAssetName(name string) bool {
	hash, ext, ok := strings.Cut(name, ".")
	if !ok || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return false
	}
	for _, t := range assetTypes {
		if ext == t.ext {
			return true
		}
	}
	return false
}

// NewAsset is an upload to record: its inspected file, the file name and
// label it was given, and the URL its bytes are served at.
type NewAsset struct {
	File     AssetFile
	FileName string
	Label    string
	URL      string
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
	assetColumns   = `id, file_name, label, content_type, size, width, height, sha256, object_key, url, created_at, modified_at`
	insertAssetSQL = `INSERT INTO assets (instance_id, file_name, label, content_type, size, width, height, sha256, object_key, url, created_at, modified_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING ` + assetColumns
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

// CreateAsset records an upload whose bytes are stored at in.File.Key.
func (s *Store) CreateAsset(ctx context.Context, inst Instance, in NewAsset) (Asset, error) {
	in, err := in.Clean()
	if err != nil {
		return Asset{}, err
	}
	f := in.File
	var a Asset
	err = s.db.GetContext(ctx, &a, insertAssetSQL, inst.ID, in.FileName, in.Label, f.ContentType, f.Size, f.Width, f.Height,
		f.SHA256, f.Key(inst.Guid), in.URL, s.now())
	if err != nil {
		return Asset{}, fmt.Errorf("create asset: %w", err)
	}
	return a, nil
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
	return p, nil
}

// Asset returns one asset.
func (s *Store) Asset(ctx context.Context, inst Instance, id int64) (Asset, error) {
	return assetByID(ctx, s.db, inst, id)
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
	return a, nil
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
	return a, nil
}

// DeleteAsset deletes an asset that no gallery holds and no image field
// uses. Its bytes stay in the object store (other assets may share them,
// and caches may hold them for a year anyway), but are no longer served
// once no asset has them.
func (s *Store) DeleteAsset(ctx context.Context, inst Instance, id int64) error {
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		if _, err := assetByID(ctx, tx, inst, id); err != nil {
			return err
		}
		var gallery string
		err := tx.GetContext(ctx, &gallery, assetGalleryUse, id)
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
		return checkAffected(res, err, "asset %d not found", id)
	})
	if err != nil {
		return fmt.Errorf("delete asset %d: %w", id, err)
	}
	return nil
}

// assetImage is the stored value of an image field made from an asset:
// the asset's id beside the image members the Fetch API renders.
type assetImage struct {
	AssetID  int64   `json:"assetID"`
	URL      string  `json:"url"`
	Label    string  `json:"label"`
	Target   *string `json:"target,omitempty"`
	Filesize int64   `json:"filesize"`
	Width    int     `json:"width"`
	Height   int     `json:"height"`
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
	v := assetImage{AssetID: a.ID, URL: a.URL, Label: a.Label, Target: in.Target, Filesize: a.Size, Width: a.Width, Height: a.Height}
	if in.Label != nil {
		if fe := checkLabel(*in.Label); fe != nil {
			return nil, fmt.Errorf("label %s", fe.Reason)
		}
		v.Label = *in.Label
	}
	return json.Marshal(v)
}
