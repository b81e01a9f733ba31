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

// DrainLimit is how much of a body left unread (because it is over its
// limit, or the handler did not need it) is read and dropped before the
// answer is sent. A client that sends its whole body before it reads the
// answer, as Node's fetch does, would otherwise get a connection reset
// instead of the 413; and the connection then serves its next request.
// With more left than this the connection is closed after the answer: a
// body declared that much over its limit is not worth reading, and such a
// client sees a reset.
const DrainLimit = 64 << 20

// uploadPath matches the path of the asset upload route.
var uploadPath = regexp.MustCompile(`^/api/v1/instance/[^/]+/assets/?$`)

// IsUpload reports whether rq is an asset upload, whose body is streamed.
func IsUpload(rq *fasthttp.Request) bool {
	return rq.Header.IsPost() && uploadPath.Match(rq.URI().Path())
}

// Read reads a streamed body of at most limit bytes into the request, as
// the server reads bodies that are not streamed; a larger one is a
// problem.TooLarge, whose rest Finish drains (see DrainLimit).
func Read(c *fasthttp.RequestCtx, limit int) error {
	rq := &c.Request
	if !rq.IsBodyStream() {
		return nil
	}
	if rq.Header.ContentLength() > limit {
		return Refuse(c, int64(limit))
	}
	body, err := io.ReadAll(io.LimitReader(rq.BodyStream(), int64(limit)+1))
	if err != nil {
		c.SetConnectionClose()
		return problem.Invalidf("the request body could not be read")
	}
	if len(body) > limit {
		return TooLarge(int64(limit))
	}
	rq.SetBody(body)
	return nil
}

// Refuse refuses a body whose declared length is over limit: the problem
// to answer, and, when the body is more than DrainLimit over the limit, a
// connection closed after the answer rather than the body drained.
func Refuse(c *fasthttp.RequestCtx, limit int64) error {
	if int64(c.Request.Header.ContentLength()) > limit+DrainLimit {
		c.SetConnectionClose()
	}
	return TooLarge(limit)
}

// TooLarge is the problem of a body over limit bytes.
func TooLarge(limit int64) error {
	return &problem.Error{Kind: problem.TooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// Finish reads what is left of a streamed body, up to DrainLimit, before
// the answer is sent, so that the client reads the answer and the
// connection its next request; a longer rest (declared, or found) closes
// the connection after the answer. It is the one place where every
// oversize body ends, on the origin and on the edge.
func Finish(c *fasthttp.RequestCtx) {
	if !c.Request.IsBodyStream() {
		return
	}
	if c.Response.ConnectionClose() {
		return // refused as too large to drain (TooLarge)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(c.Request.BodyStream(), DrainLimit+1))
	if err != nil || n > DrainLimit {
		c.SetConnectionClose()
	}
}
