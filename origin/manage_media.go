package origin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/internal/streambody"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/media/imaging"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// oldAssetPath is where asset bytes were served before they moved to
// {guid}/assets/ below the public URL: requests there are redirected.
const oldAssetPath = "/api/assets/"

// maxUploadField bounds the label and fileName fields of a multipart
// upload, in bytes (the content checks count characters).
const maxUploadField = 16 << 10

// mediaRoutes registers the management routes of assets, galleries and
// URL redirections (edit role to read, upload and arrange; publish role to
// delete, and to change redirections, which are live at once). Registered
// before the /:locale/... routes (content reserves the codes assets,
// galleries and redirections).
func (s *Server) mediaRoutes(r fiber.Router) {
	edit, publish := need(content.RoleEdit), need(content.RolePublish)
	r.Get("/assets", edit, s.listAssets)
	r.Post("/assets", edit, s.uploadAsset)
	r.Get("/assets/:id", edit, getBy(idParam("id"), s.store.Asset))
	r.Patch("/assets/:id", edit, updateBy(idParam("id"), s.store.UpdateAsset))
	r.Delete("/assets/:id", publish, s.deleteAsset)

	r.Get("/galleries", edit, listAll(s.store.Galleries))
	r.Post("/galleries", edit, createFrom(s.store.CreateGallery))
	r.Get("/galleries/:id", edit, getBy(idParam("id"), s.store.Gallery))
	r.Patch("/galleries/:id", edit, updateBy(idParam("id"), s.store.UpdateGallery))
	r.Delete("/galleries/:id", publish, deleteBy(idParam("id"), s.store.DeleteGallery))
	r.Post("/galleries/:id/assets", edit, s.addGalleryAssets)
	r.Put("/galleries/:id/assets/order", edit, s.reorderGallery)
	r.Delete("/galleries/:id/assets/:assetID", edit, s.removeGalleryAsset)

	r.Get("/redirections", edit, listAll(s.store.Redirections))
	r.Post("/redirections", publish, createFrom(s.store.CreateRedirection))
	r.Get("/redirections/:id", edit, getBy(idParam("id"), s.store.Redirection))
	r.Put("/redirections/:id", publish, updateBy(idParam("id"), s.store.UpdateRedirection))
	r.Delete("/redirections/:id", publish, deleteBy(idParam("id"), s.store.DeleteRedirection))
}

// assetRoutes registers the public routes of asset bytes, outside the
// management API: {guid}/assets/{sha256}.{ext} (with image transforms in
// the query), as edges serve them too, and the old /api/assets/ address,
// redirected there.
func (s *Server) assetRoutes() {
	s.app.Get(oldAssetPath+":guid/:name", s.redirectAsset)
	s.app.Get("/:guid/assets/:name", s.serveAsset)
}

// assetStore returns the object store of assets, or an Unavailable problem
// for an origin started without one.
func (s *Server) assetStore() (store.Store, error) {
	if s.cfg.Assets == nil {
		return nil, problem.New(problem.Unavailable, "assets are not configured on this origin")
	}
	return s.cfg.Assets, nil
}

// upload is an asset upload as it came: its bytes spooled to a temporary
// file (never held in memory), what they are, and the file name and label.
type upload struct {
	file            content.AssetFile
	spool           *os.File
	fileName, label string
}

// close removes the spooled bytes.
func (up *upload) close() {
	if up.spool != nil {
		up.spool.Close()
		os.Remove(up.spool.Name())
	}
}

// readUpload reads an upload from a multipart/form-data body, streamed
// (the part "file", and optional fields "label" and "fileName", which
// overrides the part's file name), or from a JSON body {fileName, label?,
// data} with the bytes in base64, held in memory and so limited to the
// API's body limit. The caller closes the upload.
func (s *Server) readUpload(c *fiber.Ctx) (*upload, error) {
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != fiber.MIMEMultipartForm {
		if err := readBody(c, s.cfg.BodyLimit); err != nil {
			return nil, err
		}
		var in struct {
			FileName string `json:"fileName"`
			Label    string `json:"label"`
			Data     []byte `json:"data"`
		}
		if err := decode(c, &in); err != nil {
			return nil, err
		}
		if len(in.Data) == 0 {
			return nil, problem.Field("data", "is required: the file's bytes in base64 (or send multipart/form-data with a part named file)")
		}
		up := &upload{fileName: in.FileName, label: in.Label}
		if err := s.spool(up, bytes.NewReader(in.Data)); err != nil {
			return nil, err
		}
		return up, nil
	}
	limit := s.cfg.UploadLimit + streambody.MultipartSlack
	if int64(c.Request().Header.ContentLength()) > limit {
		streambody.Refuse(c.Context(), limit) // drained, or closed when far over
		return nil, s.uploadTooLarge()
	}
	body := &cappedReader{r: c.Request().BodyStream(), n: limit + 1}
	up := &upload{}
	if err := s.readParts(up, multipart.NewReader(body, params["boundary"])); err != nil {
		up.close()
		if body.n <= 0 {
			return nil, s.uploadTooLarge()
		}
		return nil, err
	}
	return up, nil
}

// readParts reads the parts of a multipart upload into up.
func (s *Server) readParts(up *upload, mr *multipart.Reader) error {
	var fileName *string
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return problem.Invalidf("the multipart body cannot be read: %v", err)
		}
		switch name := p.FormName(); {
		case name == "file":
			if up.spool != nil {
				return problem.Field("file", "send exactly one file, as the part named file")
			}
			up.fileName = p.FileName()
			if err := s.spool(up, p); err != nil {
				return err
			}
		case name == "label" || name == "fileName":
			v, err := io.ReadAll(io.LimitReader(p, maxUploadField+1))
			if err != nil {
				return problem.Invalidf("the multipart body cannot be read: %v", err)
			}
			if len(v) > maxUploadField {
				return problem.Field(name, "must be at most %d bytes", maxUploadField)
			}
			if name == "label" {
				up.label = string(v)
			} else {
				fileName = ptr(string(v))
			}
		case p.FileName() != "":
			return problem.Field(name, "unknown file part (send the file as the part named file)")
		default:
			return problem.Field(name, "unknown field (the fields are file, label and fileName)")
		}
	}
	if up.spool == nil {
		return problem.Field("file", "send exactly one file, as the part named file")
	}
	if fileName != nil && *fileName != "" {
		up.fileName = *fileName
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// spool copies an uploaded file to a temporary file, hashing it as it
// goes, and reads its type and size: a type that is not accepted is
// refused from its first bytes, before the rest is read; a file over the
// upload limit when the limit is passed.
func (s *Server) spool(up *upload, r io.Reader) error {
	head := make([]byte, media.SniffLen)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return problem.Invalidf("the file could not be read: %v", err)
	}
	head = head[:n]
	if n == 0 {
		return problem.Field("file", "is empty")
	}
	if _, ok := media.Sniff(head); !ok {
		return problem.Field("file", "is %s; the accepted types are %s", strings.TrimSuffix(http.DetectContentType(head), "; charset=utf-8"), media.Accepted)
	}
	f, err := os.CreateTemp("", "edgecms-upload-*")
	if err != nil {
		return err
	}
	up.spool = f
	h := sha256.New()
	w := io.MultiWriter(f, h)
	w.Write(head)
	rest, err := io.Copy(w, io.LimitReader(r, s.cfg.UploadLimit-int64(n)+1))
	if err != nil {
		if errors.Is(err, errCapped) {
			return s.uploadTooLarge()
		}
		return problem.Invalidf("the file could not be read: %v", err)
	}
	size := int64(n) + rest
	if size > s.cfg.UploadLimit {
		return s.uploadTooLarge()
	}
	info, err := media.Inspect(f, size)
	if err != nil {
		return problem.Field("file", "%v", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	up.file = content.NewAssetFile(info, hex.EncodeToString(h.Sum(nil)), size)
	return nil
}

func (s *Server) uploadTooLarge() error {
	return &problem.Error{Kind: problem.TooLarge,
		Detail: fmt.Sprintf("file: over the asset limit of %d bytes", s.cfg.UploadLimit),
		Fields: []problem.FieldError{{Field: "file", Reason: fmt.Sprintf("must be at most %d bytes", s.cfg.UploadLimit)}}}
}

// uploadAsset stores an uploaded file under its content address and
// records it: 201 with the asset.
func (s *Server) uploadAsset(c *fiber.Ctx) error {
	up, err := s.readUpload(c)
	if err != nil {
		return err
	}
	defer up.close()
	objects, err := s.assetStore()
	if err != nil {
		return err
	}
	inst := instance(c)
	in, err := content.NewAsset{File: up.file, FileName: up.fileName, Label: up.label}.Clean()
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	key := up.file.Key(inst.Guid)
	put := func(ctx context.Context) error {
		if _, err := up.spool.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := objects.PutFrom(ctx, store.Object{Key: key, ContentType: up.file.ContentType, CacheControl: media.CacheControl},
			up.spool, up.file.Size)
		return err
	}
	// Bytes first: an asset row always has its bytes.
	if err := put(ctx); err != nil {
		return err
	}
	a, err := s.store.CreateAsset(ctx, inst, in, func(ctx context.Context) error {
		// A deletion of the last asset with these bytes may have removed
		// them since: store them again (see content.Store.CreateAsset).
		rc, _, err := objects.Open(ctx, key)
		if problem.Is(err, problem.NotFound) {
			return put(ctx)
		}
		if err == nil {
			rc.Close()
		}
		return err
	})
	if err != nil {
		// Bytes no asset has are not left to be served by edges.
		if _, ferr := s.store.AssetByKey(ctx, key); problem.Is(ferr, problem.NotFound) {
			s.dropAssetBytes(ctx, key)
		}
		return err
	}
	return created(c, a)
}

// deleteAsset deletes an asset, and its bytes and their variants when no
// other asset has them.
func (s *Server) deleteAsset(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	err = s.store.DeleteAsset(c.UserContext(), instance(c), n, func(ctx context.Context, key string) error {
		return s.dropAssetBytes(ctx, key)
	})
	if err != nil {
		return err
	}
	return noContent(c)
}

// dropAssetBytes removes the bytes at an asset key and their variants
// from the store.
func (s *Server) dropAssetBytes(ctx context.Context, key string) error {
	objects, err := s.assetStore()
	if err != nil {
		return err
	}
	if prefix, ok := media.VariantPrefix(key); ok {
		var variants []string
		if err := objects.List(ctx, prefix, func(info store.Info) error {
			variants = append(variants, info.Key)
			return nil
		}); err != nil {
			return err
		}
		for _, v := range variants {
			if err := objects.Delete(ctx, v); err != nil {
				return err
			}
		}
	}
	return objects.Delete(ctx, key)
}

func (s *Server) listAssets(c *fiber.Ctx) error {
	take, skip, err := paging(c, 50, 250)
	if err != nil {
		return err
	}
	p, err := s.store.Assets(c.UserContext(), instance(c), take, skip)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// assetKey reads the guid and name of an asset address and returns the
// object key, or a NotFound problem for an address that cannot be one.
func assetKey(c *fiber.Ctx) (string, media.Type, error) {
	guid, err := content.NormalizeGuid(c.Params("guid"))
	if err != nil {
		return "", media.Type{}, problem.NotFoundf("no asset at this address")
	}
	_, t, ok := media.ParseName(c.Params("name"))
	if !ok {
		return "", media.Type{}, problem.NotFoundf("no asset at this address")
	}
	return media.AssetKey(guid, c.Params("name")), t, nil
}

// redirectAsset answers the old address of asset bytes with a permanent
// redirect to the current one (URLs stored before the move, in rich text
// say, keep working).
func (s *Server) redirectAsset(c *fiber.Ctx) error {
	key, _, err := assetKey(c)
	if err != nil {
		return err
	}
	target := s.store.PublicURL.URL(key)
	if q := c.Context().QueryArgs().QueryString(); len(q) > 0 {
		target += "?" + string(q)
	}
	c.Set(fiber.HeaderCacheControl, media.CacheControl)
	return c.Redirect(target, fiber.StatusMovedPermanently)
}

// serveAsset serves the bytes of an asset, or the variant an image
// transform in the query asks for: public (an <img> sends no key), cached
// for good, and only while an asset has the bytes.
func (s *Server) serveAsset(c *fiber.Ctx) error {
	key, t, err := assetKey(c)
	if err != nil {
		return err
	}
	objects, err := s.assetStore()
	if err != nil {
		return err
	}
	tr, variant, err := media.ParseTransform(string(c.Context().QueryArgs().QueryString()), t, s.cfg.ImageSizes, c.Get(fiber.HeaderAccept))
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	a, err := s.store.AssetByKey(ctx, key)
	if err != nil {
		return err
	}
	if !variant {
		rc, info, err := objects.Open(ctx, key)
		if err != nil {
			return err
		}
		media.Serve(c.Context(), rc, info, t, false)
		return nil
	}
	vkey, _ := tr.Key(key)
	rc, info, err := objects.Open(ctx, vkey)
	if err == nil {
		media.Serve(c.Context(), rc, info, tr.Format, tr.ByAccept)
		return nil
	}
	if !problem.Is(err, problem.NotFound) {
		return err
	}
	v, err, _ := s.variants.Do(vkey, func() (any, error) { return s.renderVariant(ctx, objects, a, t, tr, vkey) })
	if err != nil {
		return err
	}
	body := v.([]byte)
	info = store.Info{Key: vkey, Size: int64(len(body)), ContentType: tr.Format.ContentType, CacheControl: media.CacheControl,
		ETag: store.ETag(body)}
	media.Serve(c.Context(), io.NopCloser(bytes.NewReader(body)), info, tr.Format, tr.ByAccept)
	return nil
}

// renderVariant renders the variant tr of asset a (of type t) and stores it
// at vkey; concurrent requests for one variant share one render
// (Server.variants), and renders run at most one per CPU at a time.
func (s *Server) renderVariant(ctx context.Context, objects store.Store, a content.Asset, t media.Type, tr media.Transform, vkey string) ([]byte, error) {
	if int64(a.Width)*int64(a.Height) > imaging.MaxPixels {
		return nil, problem.Field("w", "the image is %dx%d pixels: images over %d megapixels are served as they are, not transformed",
			a.Width, a.Height, imaging.MaxPixels/1_000_000)
	}
	select {
	case s.renders <- struct{}{}:
		defer func() { <-s.renders }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	rc, _, err := objects.Open(ctx, a.Key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var out bytes.Buffer
	if err := imaging.Render(&out, rc, t, tr); err != nil {
		if errors.Is(err, imaging.ErrTooLarge) {
			return nil, problem.Field("w", "%v", err)
		}
		return nil, fmt.Errorf("render %s: %w", vkey, err)
	}
	if _, err := objects.Put(ctx, store.Object{Key: vkey, Body: out.Bytes(), ContentType: tr.Format.ContentType,
		CacheControl: media.CacheControl}); err != nil {
		return nil, err
	}
	// A deletion of the asset meanwhile listed the variants before this
	// one was stored: remove it, as the deletion would have.
	if _, err := s.store.AssetByKey(ctx, a.Key); problem.Is(err, problem.NotFound) {
		objects.Delete(ctx, vkey)
	}
	return out.Bytes(), nil
}

// assetList is the body that names assets of a gallery.
type assetList struct {
	AssetIDs []int64 `json:"assetIDs"`
}

// galleryAssets reads the gallery :id and the assetIDs a body names.
func galleryAssets(c *fiber.Ctx) (int64, []int64, error) {
	var in assetList
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	n, err := id(c, "id")
	if err != nil {
		return 0, nil, err
	}
	if in.AssetIDs == nil {
		return 0, nil, problem.Field("assetIDs", "is required")
	}
	return n, in.AssetIDs, nil
}

func (s *Server) addGalleryAssets(c *fiber.Ctx) error {
	n, assets, err := galleryAssets(c)
	if err != nil {
		return err
	}
	g, err := s.store.AddGalleryAssets(c.UserContext(), instance(c), n, assets)
	if err != nil {
		return err
	}
	return c.JSON(g)
}

func (s *Server) reorderGallery(c *fiber.Ctx) error {
	n, assets, err := galleryAssets(c)
	if err != nil {
		return err
	}
	if err := s.store.ReorderGallery(c.UserContext(), instance(c), n, assets); err != nil {
		return err
	}
	return noContent(c)
}

func (s *Server) removeGalleryAsset(c *fiber.Ctx) error {
	n, err := id(c, "id")
	if err != nil {
		return err
	}
	asset, err := id(c, "assetID")
	if err != nil {
		return err
	}
	if err := s.store.RemoveGalleryAsset(c.UserContext(), instance(c), n, asset); err != nil {
		return err
	}
	return noContent(c)
}
