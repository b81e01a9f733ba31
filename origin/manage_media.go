package origin

import (
	"fmt"
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// assetCacheControl is the cache policy of asset bytes: their address is
// their content hash, so they never change.
const assetCacheControl = "public, max-age=31536000, immutable"

// assetPath is where asset bytes are served: assetPath + {guid}/{sha256}.{ext}.
// It is under /api/ so that an edge passes it to the origin as it is.
const assetPath = "/api/assets/"

// mediaRoutes registers the management routes of assets, galleries and
// URL redirections (edit role to read, upload and arrange; publish role to
// delete, and to change redirections, which are live at once), and the
// public route that serves asset bytes, outside the management prefix.
// Registered before the /:locale/... routes (content reserves the codes
// assets, galleries and redirections).
func (s *Server) mediaRoutes(r fiber.Router) {
	edit, publish := need(content.RoleEdit), need(content.RolePublish)
	r.Get("/assets", edit, s.listAssets)
	r.Post("/assets", edit, s.uploadAsset)
	r.Get("/assets/:id", edit, getBy(idParam("id"), s.store.Asset))
	r.Patch("/assets/:id", edit, updateBy(idParam("id"), s.store.UpdateAsset))
	r.Delete("/assets/:id", publish, deleteBy(idParam("id"), s.store.DeleteAsset))

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

	s.app.Get(assetPath+":guid/:name", s.serveAsset)
}

// assetStore returns the object store of assets, or an Unavailable problem
// for an origin started without one.
func (s *Server) assetStore() (store.Store, error) {
	if s.cfg.Assets == nil {
		return nil, problem.New(problem.Unavailable, "assets are not configured on this origin")
	}
	return s.cfg.Assets, nil
}

// upload is an asset upload as it came: the bytes, the file name and the
// label.
type upload struct {
	body            []byte
	fileName, label string
}

// readUpload reads an upload from a multipart/form-data body (the part
// "file", and optional fields "label" and "fileName", which overrides the
// part's file name) or from a JSON body {fileName, label?, data} with the
// bytes in base64.
func readUpload(c *fiber.Ctx) (upload, error) {
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	if !strings.HasPrefix(ct, fiber.MIMEMultipartForm) {
		var in struct {
			FileName string `json:"fileName"`
			Label    string `json:"label"`
			Data     []byte `json:"data"`
		}
		if err := decode(c, &in); err != nil {
			return upload{}, err
		}
		if len(in.Data) == 0 {
			return upload{}, problem.Field("data", "is required: the file's bytes in base64 (or send multipart/form-data with a part named file)")
		}
		return upload{body: in.Data, fileName: in.FileName, label: in.Label}, nil
	}
	form, err := c.MultipartForm()
	if err != nil {
		return upload{}, problem.Invalidf("the multipart body cannot be read: %v", err)
	}
	for name := range form.Value {
		if name != "label" && name != "fileName" {
			return upload{}, problem.Field(name, "unknown field (the fields are file, label and fileName)")
		}
	}
	for name := range form.File {
		if name != "file" {
			return upload{}, problem.Field(name, "unknown file part (send the file as the part named file)")
		}
	}
	files := form.File["file"]
	if len(files) != 1 {
		return upload{}, problem.Field("file", "send exactly one file, as the part named file")
	}
	fh := files[0]
	if fh.Size > content.MaxAssetBytes {
		return upload{}, &problem.Error{Kind: problem.TooLarge,
			Detail: fmt.Sprintf("file: %d bytes is over the asset limit of %d bytes", fh.Size, content.MaxAssetBytes)}
	}
	f, err := fh.Open()
	if err != nil {
		return upload{}, problem.Invalidf("the file part cannot be read")
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, content.MaxAssetBytes+1))
	if err != nil {
		return upload{}, problem.Invalidf("the file part cannot be read")
	}
	up := upload{body: body, fileName: fh.Filename, label: first(form.Value["label"])}
	if name := first(form.Value["fileName"]); name != "" {
		up.fileName = name
	}
	return up, nil
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// publicBase is the scheme and host the request was made to, as an edge
// or proxy in front forwards them (X-Forwarded-Proto, X-Forwarded-Host),
// for the URLs of uploaded assets.
func publicBase(c *fiber.Ctx) string {
	proto := strings.ToLower(strings.TrimSpace(strings.Split(c.Get(fiber.HeaderXForwardedProto), ",")[0]))
	if proto != "http" && proto != "https" {
		proto = c.Protocol()
	}
	host := strings.TrimSpace(strings.Split(c.Get(fiber.HeaderXForwardedHost), ",")[0])
	if !validHost(host) {
		host = string(c.Request().Host())
	}
	if !validHost(host) {
		host = "localhost"
	}
	return proto + "://" + host
}

// validHost reports whether h can be the host (and port) of a URL.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".-:[]", c) >= 0) {
			return false
		}
	}
	return true
}

// uploadAsset stores an uploaded image under its content address and
// records it: 201 with the asset.
func (s *Server) uploadAsset(c *fiber.Ctx) error {
	up, err := readUpload(c)
	if err != nil {
		return err
	}
	file, err := content.InspectAsset(up.body)
	if err != nil {
		return err
	}
	inst := instance(c)
	in, err := content.NewAsset{File: file, FileName: up.fileName, Label: up.label,
		URL: publicBase(c) + assetPath + inst.Guid + "/" + file.Name()}.Clean()
	if err != nil {
		return err
	}
	objects, err := s.assetStore()
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	// Bytes first: an asset row always has its bytes. Bytes without a row
	// (a failed insert) are never served.
	if _, err := objects.Put(ctx, store.Object{Key: file.Key(inst.Guid), Body: up.body,
		ContentType: file.ContentType, CacheControl: assetCacheControl}); err != nil {
		return err
	}
	a, err := s.store.CreateAsset(ctx, inst, in)
	if err != nil {
		return err
	}
	return created(c, a)
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

// serveAsset serves the bytes of an asset: public (an <img> sends no
// key), cached for good, and only while an asset has them.
func (s *Server) serveAsset(c *fiber.Ctx) error {
	guid, name := strings.ToLower(c.Params("guid")), c.Params("name")
	if _, err := content.NormalizeGuid(guid); err != nil || !content.ValidAssetName(name) {
		return problem.NotFoundf("no asset at this address")
	}
	objects, err := s.assetStore()
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	key := content.AssetKey(guid, name)
	if _, err := s.store.AssetByKey(ctx, key); err != nil {
		return err
	}
	o, err := objects.Get(ctx, key)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, assetCacheControl)
	c.Set(fiber.HeaderETag, o.ETag)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && etagMatch(inm, o.ETag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, o.ContentType)
	return c.Send(o.Body)
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
