package edge

import (
	"fmt"
	"io"
	"regexp"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/problem"
)

// The server streams request bodies (fiber.Config.StreamRequestBody), so
// that an asset upload passes to the origin as it arrives, never held
// whole in memory. Other bodies are read here, up to Config.BodyLimit.

// uploadPath matches the path of the origin's asset upload route.
var uploadPath = regexp.MustCompile(`^/api/v1/instance/[^/]+/assets/?$`)

// multipartSlack is what an upload body may hold beside the file:
// boundaries, part headers, the label and the file name.
const multipartSlack = 1 << 20

// drainLimit is how much of a body left unread is read and dropped after
// the answer, so that the connection can serve the next request; with
// more left, the connection is closed after the answer.
const drainLimit = 1 << 20

// limitBody checks the size of a streamed request body before it is
// forwarded: an upload's stream is forwarded as it comes, up to
// UploadLimit (the origin counts the file's bytes); any other body is read
// into the request, up to BodyLimit.
func (s *Server) limitBody(c *fasthttp.RequestCtx) error {
	rq := &c.Request
	if !rq.IsBodyStream() {
		return nil
	}
	limit := int64(s.cfg.BodyLimit)
	upload := rq.Header.IsPost() && uploadPath.Match(rq.URI().Path())
	if upload {
		limit = s.cfg.UploadLimit + multipartSlack
	}
	if int64(rq.Header.ContentLength()) > limit {
		c.SetConnectionClose()
		return tooLarge(limit)
	}
	if upload {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(rq.BodyStream(), limit+1))
	if err != nil {
		c.SetConnectionClose()
		return problem.Invalidf("the request body could not be read")
	}
	if int64(len(body)) > limit {
		c.SetConnectionClose()
		return tooLarge(limit)
	}
	rq.SetBody(body)
	return nil
}

func tooLarge(limit int64) error {
	return &problem.Error{Kind: problem.TooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// finishBody reads what is left of a streamed body, up to drainLimit, so
// that the connection can serve its next request; a longer rest closes it
// after the answer.
func finishBody(c *fasthttp.RequestCtx) {
	if !c.Request.IsBodyStream() {
		return
	}
	n, err := io.Copy(io.Discard, io.LimitReader(c.Request.BodyStream(), drainLimit+1))
	if err != nil || n > drainLimit {
		c.SetConnectionClose()
	}
}
