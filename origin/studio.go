package origin

import (
	"io/fs"
	"mime"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/studio"
)

// studioPath is where the Studio is served.
const studioPath = "/studio/"

// studioCSP is the Studio's Content-Security-Policy: its own scripts and
// styles only (no inline code), its own API, images from itself and from
// the HTTPS URLs image fields hold.
const studioCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data: blob:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// studioRoutes serves the Studio: the hashed files of assets/ cached for
// good, and index.html, never stored, for every other path under /studio/
// (the Studio routes in the browser).
func (s *Server) studioRoutes() {
	files := studio.Files()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic("studio: index.html is not embedded: run go tool task studio")
	}
	// Without strict routing, /studio/* matches /studio too.
	s.app.Get(studioPath+"*", func(c *fiber.Ctx) error {
		if c.Path() == "/studio" {
			return c.Redirect(studioPath, fiber.StatusMovedPermanently)
		}
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		c.Set("Referrer-Policy", "same-origin")
		c.Set(fiber.HeaderXFrameOptions, "DENY")
		rest := c.Params("*")
		if rest == "assets" || strings.HasPrefix(rest, "assets/") {
			name := path.Clean(rest)
			body, err := fs.ReadFile(files, name)
			if err != nil || !strings.HasPrefix(name, "assets/") {
				return problem.NotFoundf("no Studio file at this address")
			}
			c.Set(fiber.HeaderCacheControl, media.CacheControl)
			c.Set(fiber.HeaderContentType, mime.TypeByExtension(path.Ext(rest)))
			return c.Send(body)
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set("Content-Security-Policy", studioCSP)
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		return c.Send(index)
	})
}
