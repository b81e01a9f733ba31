package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/problem"
)

// Harden sets up srv for a public port: its ConnState tells a Listener
// which connections are idle, requests that cannot be read get a 4xx
// problem answer logged at debug level only (a flood of them must not
// flood the log), and its handler refuses ambiguous framing (Framing).
// Call it once the server's handler is in place.
func Harden(srv *fasthttp.Server, log *slog.Logger) {
	srv.ConnState = ConnState
	srv.ErrorHandler = func(c *fasthttp.RequestCtx, err error) { readError(c, err, log) }
	next := srv.Handler
	srv.Handler = func(c *fasthttp.RequestCtx) {
		if detail := Framing(&c.Request.Header); detail != "" {
			log.Debug("request refused", "remote", c.RemoteAddr().String(), "reason", detail)
			c.SetConnectionClose()
			lingerOnClose(c.Conn())
			writeProblem(c, fasthttp.StatusBadRequest, "Invalid request", "invalid", detail)
			return
		}
		next(c)
	}
}

// readError answers a request the server could not read: 431 for a head
// over the read buffer, 408 for one not complete within the read timeout,
// 413 for a body over the limit, 400 for anything else malformed.
func readError(c *fasthttp.RequestCtx, err error, log *slog.Logger) {
	lingerOnClose(c.Conn())
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.As(err, &small):
		writeProblem(c, fasthttp.StatusRequestHeaderFieldsTooLarge, "Request header fields too large",
			"header-too-large", "the request line and headers are larger than the server reads")
	case errors.As(err, &ne) && ne.Timeout():
		writeProblem(c, fasthttp.StatusRequestTimeout, "Request timeout", "timeout", "the request was not complete in time")
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		writeProblem(c, fasthttp.StatusRequestEntityTooLarge, problem.TooLarge.Title(), "too-large", "the request body is too large")
	default:
		writeProblem(c, fasthttp.StatusBadRequest, problem.Invalid.Title(), "invalid", "the request is malformed")
	}
	log.Debug("unreadable request", "remote", c.RemoteAddr().String(), "status", c.Response.StatusCode(), "err", err)
}

// writeProblem answers with a problem document that no cache keeps.
func writeProblem(c *fasthttp.RequestCtx, status int, title, slug, detail string) {
	body, _ := json.Marshal(map[string]any{"type": "/problems/" + slug, "title": title, "status": status, "detail": detail})
	c.Response.Reset()
	c.SetStatusCode(status)
	c.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	c.Response.Header.SetContentType(problem.ContentType)
	c.Response.SetBodyRaw(body)
}

// Framing returns why a request with header h must be refused, or "" when
// it may be served. A proxy or CDN in front may read such a request's
// framing differently than the server does, which is how requests are
// smuggled past it (RFC 9112 section 6.3 and 3.2):
//   - Content-Length together with Transfer-Encoding;
//   - more than one Content-Length (fasthttp refuses this itself while
//     parsing; checked again so that the rule does not depend on it);
//   - HTTP/1.1 without Host.
//
// HTTP/1.0 needs no Host.
func Framing(h *fasthttp.RequestHeader) string {
	cl, te := headerCounts(h.RawHeaders())
	switch {
	case cl > 0 && te > 0:
		return "a request must not carry both Content-Length and Transfer-Encoding"
	case cl > 1:
		return "a request must carry at most one Content-Length"
	case !h.IsHTTP11():
		return ""
	case hostCount(h.RawHeaders()) != 1:
		return "an HTTP/1.1 request must carry exactly one Host header"
	}
	return ""
}

// headerCounts counts the Content-Length and Transfer-Encoding fields in
// raw, the header block as received.
func headerCounts(raw []byte) (cl, te int) {
	for line := range lines(raw) {
		switch name := fieldName(line); {
		case strings.EqualFold(name, "Content-Length"):
			cl++
		case strings.EqualFold(name, "Transfer-Encoding"):
			te++
		}
	}
	return cl, te
}

// hostCount counts the Host fields in raw.
func hostCount(raw []byte) int {
	n := 0
	for line := range lines(raw) {
		if strings.EqualFold(fieldName(line), "Host") {
			n++
		}
	}
	return n
}

// lines yields the lines of raw without their line ends.
func lines(raw []byte) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(raw) > 0 {
			line, rest, _ := bytes.Cut(raw, []byte("\n"))
			raw = rest
			if !yield(bytes.TrimSuffix(line, []byte("\r"))) {
				return
			}
		}
	}
}

// fieldName is the name of the header field on line, trimmed as fasthttp
// trims it ("Content-Length :" names Content-Length).
func fieldName(line []byte) string {
	name, _, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return ""
	}
	return string(bytes.TrimRight(name, " \t"))
}
