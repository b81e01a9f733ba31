package edge

import (
	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/internal/streambody"
)

// limitBody checks a streamed request body before it is forwarded (the
// server streams bodies, so that uploads pass to the origin as they
// arrive): an asset upload's stream is forwarded as it comes, up to
// UploadLimit and the multipart framing (the origin counts the file's
// bytes); any other body is read into the request, up to BodyLimit.
func (s *Server) limitBody(c *fasthttp.RequestCtx) error {
	rq := &c.Request
	if !rq.IsBodyStream() || !streambody.IsUpload(rq) {
		return streambody.Read(c, s.cfg.BodyLimit)
	}
	if limit := s.cfg.UploadLimit + streambody.MultipartSlack; int64(rq.Header.ContentLength()) > limit {
		return streambody.Refuse(c, limit)
	}
	return nil
}
