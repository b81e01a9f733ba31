package origin

import (
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/gofiber/fiber/v2"

	"github.com/edgecms/edgecms/problem"
)

// The server streams request bodies (fiber.Config.StreamRequestBody) so
// that an asset upload reaches the store as it arrives, never held whole
// in memory. Every other route gets its body read here first, up to
// Config.BodyLimit, as if the server had read it.

// drainLimit is how much of a body a handler left unread is read and
// dropped after it answered, so that the connection can serve the next
// request; with more left, the connection is closed after the answer.
const drainLimit = 1 << 20

// assetUploadPath matches the path of the asset upload route, the one
// route that reads its body as a stream.
var assetUploadPath = regexp.MustCompile(`^/api/v1/instance/[^/]+/assets/?$`)

// bodies reads the request body of every route but the asset upload (see
// above), and after the handler drains what it left unread.
func (s *Server) bodies(c *fiber.Ctx) error {
	rq := c.Request()
	if !rq.IsBodyStream() {
		return c.Next()
	}
	defer finishBody(c)
	if c.Method() == fiber.MethodPost && assetUploadPath.MatchString(c.Path()) {
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
func readBody(c *fiber.Ctx, limit int) error {
	rq := c.Request()
	if rq.Header.ContentLength() > limit {
		return bodyTooLarge(limit)
	}
	body, err := io.ReadAll(io.LimitReader(rq.BodyStream(), int64(limit)+1))
	if err != nil {
		return problem.Invalidf("the request body could not be read")
	}
	if len(body) > limit {
		return bodyTooLarge(limit)
	}
	rq.SetBody(body)
	return nil
}

func bodyTooLarge(limit int) error {
	return &problem.Error{Kind: problem.TooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// finishBody reads what is left of a streamed body, up to drainLimit, so
// that the client reads the answer and the connection its next request; a
// longer rest closes the connection after the answer.
func finishBody(c *fiber.Ctx) {
	rq := c.Request()
	if !rq.IsBodyStream() {
		return
	}
	n, err := io.Copy(io.Discard, io.LimitReader(rq.BodyStream(), drainLimit+1))
	if err != nil || n > drainLimit {
		c.Context().SetConnectionClose()
	}
}

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
