package origin

import (
	"errors"
	"io"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/internal/streambody"
)

// The server streams request bodies (fiber.Config.StreamRequestBody) so
// that an asset upload reaches the store as it arrives, never held whole
// in memory. Every other route gets its body read here first, up to
// Config.BodyLimit, as if the server had read it.

// bodies reads the request body of every route but the asset upload (see
// above), and after the handler drains what it left unread.
func (s *Server) bodies(c *fiber.Ctx) error {
	if !c.Request().IsBodyStream() {
		return c.Next()
	}
	defer streambody.Finish(c.Context())
	if streambody.IsUpload(c.Request()) {
		return c.Next()
	}
	if err := readBody(c, s.cfg.BodyLimit); err != nil {
		return err
	}
	return c.Next()
}

// readBody reads a streamed request body of at most limit bytes into the
// request, as the server reads bodies that are not streamed; a larger one
// is a TooLarge problem.
func readBody(c *fiber.Ctx, limit int) error { return streambody.Read(c.Context(), limit) }

// errCapped reports a read past a cappedReader's limit.
var errCapped = errors.New("read past the limit")

// cappedReader reads at most n bytes from r and then fails with
// errCapped, so that a stream over a limit is told from one that ended.
type cappedReader struct {
	r io.Reader
	n int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, errCapped
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	return n, err
}
