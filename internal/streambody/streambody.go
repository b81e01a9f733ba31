// Package streambody handles the request bodies of a fasthttp server that
// streams them (StreamRequestBody), as the origin and the edge do so that
// asset uploads pass as they arrive, never held whole in memory: the asset
// upload route is told apart, other bodies are read up to a limit as the
// server would have, and what a handler left unread is drained after the
// answer.
package streambody

import (
	"fmt"
	"io"
	"regexp"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/problem"
)

// MultipartSlack is what an upload body may hold beside the file:
// boundaries, part headers, the label and the file name.
const MultipartSlack = 1 << 20

// drainLimit is how much of a body left unread is read and dropped after
// the answer, so that the connection can serve its next request; with more
// left, the connection is closed after the answer.
const drainLimit = 1 << 20

// uploadPath matches the path of the asset upload route.
var uploadPath = regexp.MustCompile(`^/api/v1/instance/[^/]+/assets/?$`)

// IsUpload reports whether rq is an asset upload, whose body is streamed.
func IsUpload(rq *fasthttp.Request) bool {
	return rq.Header.IsPost() && uploadPath.Match(rq.URI().Path())
}

// Read reads a streamed body of at most limit bytes into the request, as
// the server reads bodies that are not streamed; a larger one is a
// problem.TooLarge, and closes the connection after the answer.
func Read(c *fasthttp.RequestCtx, limit int) error {
	rq := &c.Request
	if !rq.IsBodyStream() {
		return nil
	}
	if rq.Header.ContentLength() > limit {
		c.SetConnectionClose()
		return TooLarge(int64(limit))
	}
	body, err := io.ReadAll(io.LimitReader(rq.BodyStream(), int64(limit)+1))
	if err != nil {
		c.SetConnectionClose()
		return problem.Invalidf("the request body could not be read")
	}
	if len(body) > limit {
		c.SetConnectionClose()
		return TooLarge(int64(limit))
	}
	rq.SetBody(body)
	return nil
}

// TooLarge is the problem of a body over limit bytes.
func TooLarge(limit int64) error {
	return &problem.Error{Kind: problem.TooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// Finish reads what is left of a streamed body, up to a bound, so that the
// client reads the answer and the connection its next request; a longer
// rest closes the connection after the answer.
func Finish(c *fasthttp.RequestCtx) {
	if !c.Request.IsBodyStream() {
		return
	}
	n, err := io.Copy(io.Discard, io.LimitReader(c.Request.BodyStream(), drainLimit+1))
	if err != nil || n > drainLimit {
		c.SetConnectionClose()
	}
}
