// Package cors lets browsers call the Fetch API (and preview) from the
// origins in EDGECMS_CORS_ORIGINS. The edge and the origin apply the same
// Policy, on the fasthttp request both are served by, so that an answer
// has the same headers whichever of them gave it; the edge answers
// preflights itself, never asking its origin.
//
// Only Fetch API paths are covered: the management API and the Studio are
// not meant to be called across origins (the Studio is served by the
// origin itself), so they never get an Access-Control-Allow-* header.
package cors

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// What a preflight from an allowed origin is told: the Fetch API is read
// with GET and HEAD, keys come in APIKey, and conditional reads send
// If-None-Match.
const (
	allowMethods  = "GET, HEAD, OPTIONS"
	allowHeaders  = "APIKey, Guid, Content-Type, If-None-Match, X-Request-ID"
	exposeHeaders = "ETag, Age, X-Cache, X-Request-ID"
	maxAge        = "600"
)

// Policy is the set of origins allowed; a nil *Policy allows none and adds
// nothing.
type Policy struct {
	any     bool
	origins map[string]bool
}

// Parse reads EDGECMS_CORS_ORIGINS: "*" for any origin, or a
// comma-separated list of origins such as https://www.example.com,
// http://localhost:3000. Empty is nil: no cross-origin access.
func Parse(list string) (*Policy, error) {
	p := &Policy{origins: map[string]bool{}}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			continue
		case f == "*":
			p.any = true
			continue
		}
		u, err := url.Parse(f)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("EDGECMS_CORS_ORIGINS: want * or origins like https://www.example.com, got %q", f)
		}
		p.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	if !p.any && len(p.origins) == 0 {
		return nil, nil
	}
	return p, nil
}

// String is the policy as Parse reads it.
func (p *Policy) String() string {
	if p == nil {
		return ""
	}
	if p.any {
		return "*"
	}
	var os []string
	for o := range p.origins {
		os = append(os, o)
	}
	return strings.Join(os, ",")
}

// Applies reports whether the requests of path are the policy's: every path
// but the management API's and the Studio's.
func Applies(path []byte) bool {
	return !(string(path) == "/api" || bytes.HasPrefix(path, []byte("/api/")) ||
		string(path) == "/studio" || bytes.HasPrefix(path, []byte("/studio/")))
}

// allowed returns the Access-Control-Allow-Origin value for a request from
// origin, or nil when origin may not read the answer.
func (p *Policy) allowed(origin []byte) []byte {
	if p == nil || len(origin) == 0 {
		return nil
	}
	if p.any {
		return star
	}
	if p.origins[strings.ToLower(string(origin))] {
		return origin
	}
	return nil
}

var (
	star    = []byte("*")
	hOrigin = []byte("Origin")
	hACRM   = []byte("Access-Control-Request-Method")
)

// Preflight reports whether c is a CORS preflight: an OPTIONS with Origin
// and Access-Control-Request-Method.
func Preflight(c *fasthttp.RequestCtx) bool {
	return c.IsOptions() && len(c.Request.Header.PeekBytes(hOrigin)) > 0 && len(c.Request.Header.PeekBytes(hACRM)) > 0
}

// Answer answers the preflight c: 204, with the Access-Control-Allow-*
// headers when its origin is allowed, none otherwise (the browser then
// refuses the call).
func (p *Policy) Answer(c *fasthttp.RequestCtx) {
	c.Response.Reset()
	c.SetStatusCode(fasthttp.StatusNoContent)
	h := &c.Response.Header
	h.Set("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	h.Set("Cache-Control", "public, max-age="+maxAge)
	if o := p.allowed(c.Request.Header.PeekBytes(hOrigin)); o != nil {
		h.SetBytesV("Access-Control-Allow-Origin", o)
		h.Set("Access-Control-Allow-Methods", allowMethods)
		h.Set("Access-Control-Allow-Headers", allowHeaders)
		h.Set("Access-Control-Max-Age", maxAge)
	}
}

// Decorate adds to the answer of c (a Fetch API read) the headers that let
// an allowed origin read it. Call it after the answer is made: a forwarded
// answer replaces the response's headers. With a list of origins, every
// answer varies by Origin, so that a CDN keeps one copy per origin and
// never hands one origin's allowance to another.
func (p *Policy) Decorate(c *fasthttp.RequestCtx) {
	if p == nil {
		return
	}
	h := &c.Response.Header
	if !p.any && !bytes.Contains(h.Peek("Vary"), []byte("Origin")) {
		h.Add("Vary", "Origin")
	}
	if o := p.allowed(c.Request.Header.PeekBytes(hOrigin)); o != nil {
		h.SetBytesV("Access-Control-Allow-Origin", o)
		h.Set("Access-Control-Expose-Headers", exposeHeaders)
	}
}
