package media

import (
	"bytes"
	"io"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/store"
)

// Serve answers a GET or HEAD of asset bytes (or a variant) of type t from
// an opened store object, as the origin and the edges both do: the
// object's content type and cache policy, its ETag, Headers(t), Vary:
// Accept when the bytes were chosen by the request's Accept header, and a
// 304 when If-None-Match holds the ETag. The body is streamed from the
// store (fasthttp closes it once sent); for HEAD and 304 it is closed
// unread.
func Serve(c *fasthttp.RequestCtx, body io.ReadCloser, info store.Info, t Type, varyAccept bool) {
	h := &c.Response.Header
	cc := info.CacheControl
	if cc == "" {
		cc = CacheControl
	}
	h.Set(fasthttp.HeaderCacheControl, cc)
	h.Set(fasthttp.HeaderETag, info.ETag)
	for _, kv := range Headers(t) {
		h.Set(kv[0], kv[1])
	}
	if varyAccept {
		h.Set(fasthttp.HeaderVary, "Accept")
	}
	if inm := c.Request.Header.Peek(fasthttp.HeaderIfNoneMatch); len(inm) > 0 && ETagMatch(inm, []byte(info.ETag)) {
		body.Close()
		c.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	h.SetContentType(info.ContentType)
	c.SetStatusCode(fasthttp.StatusOK)
	if c.IsHead() {
		body.Close()
		h.SetContentLength(int(info.Size))
		return
	}
	c.SetBodyStream(body, int(info.Size))
}

// ETagMatch reports whether an If-None-Match header value matches etag
// (weak comparison, as for GET).
func ETagMatch(header, etag []byte) bool {
	for t := range bytes.SplitSeq(header, []byte(",")) {
		t = bytes.TrimPrefix(bytes.TrimSpace(t), []byte("W/"))
		if bytes.Equal(t, etag) || string(t) == "*" {
			return true
		}
	}
	return false
}
