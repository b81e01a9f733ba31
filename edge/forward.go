package edge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"golang.org/x/sync/singleflight"

	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
)

// hopHeaders are the hop-by-hop headers of RFC 9110 section 7.6.1, which a
// proxy does not forward.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Te", "Trailer", "Upgrade"}

// forwardFetch forwards a Fetch API read to the origin at its canonical URL
// (so the origin renders, and writes back, the same object key). key is the
// object key of a cacheable request, "" otherwise: when the origin is
// unreachable or fails with a 5xx and the cache holds a stale copy of key,
// the copy is served (stale-if-error); when the origin answers that the
// object does not exist, the stale copy is dropped.
func (s *Server) forwardFetch(c *fasthttp.RequestCtx, req fetch.Request, key string, now time.Time) error {
	uri := req.URLPath()
	if q := req.Query(); q != "" {
		uri += "?" + q
	}
	var err error
	if key == "" {
		err = s.roundTrip(c, uri)
	} else {
		err = s.forwardShared(c, key, uri)
	}
	res := &c.Response
	if key != "" {
		switch status := res.StatusCode(); {
		case err != nil || status >= 500:
			if e := s.cache.get(key); e != nil {
				resetResponse(res)
				s.send(c, e, vStale, now.Unix())
				return nil
			}
		case status == fasthttp.StatusNotFound || status == fasthttp.StatusGone:
			s.cache.remove(key)
		}
	}
	if err != nil {
		return err
	}
	if status := res.StatusCode(); status != fasthttp.StatusUnauthorized && status != fasthttp.StatusForbidden {
		// A refused key gets no X-Cache, as the edge's own refusals, so
		// that a guid the edge knows and one it forwards answer alike and
		// nobody can tell which instances exist.
		res.Header.SetCanonical(hXCache, vMiss)
	}
	return nil
}

// proxy forwards a request to the origin as it came: method, raw URI,
// headers and body; the origin's status, headers and body come back
// unchanged.
func (s *Server) proxy(c *fiber.Ctx) error {
	if err := s.limitBody(c.Context()); err != nil {
		return err
	}
	return s.roundTrip(c.Context(), string(c.Request().Header.RequestURI()))
}

// forwardShared forwards a cacheable read of object key that the store
// does not hold, sharing one origin request among the reads of key with the
// same API key that arrive while it is in flight: a burst of misses of an
// object not rendered yet makes one render at the origin, not one per
// request. The API key is part of what is shared because the origin checks
// and rate-limits by key. The reads may still differ in method, conditional
// headers and client address, so the request sent is a GET without
// If-None-Match (and without a body, which a GET has no use for), and each
// read makes its own answer of the origin's: without the body for HEAD, a
// 304 when its If-None-Match holds the answer's ETag.
//
// A read that waits for the origin is answered from the store instead as
// soon as the change feed lists its key and the store holds the object:
// the publisher often writes what was missed well before the origin,
// which renders it from the database, answers. A new post's page by path
// is written within a batch, while the origin builds the channel's whole
// sitemap for it (seconds behind a dynamic page of 100,000 items), and
// a site asks for it as soon as it knows of the post.
func (s *Server) forwardShared(c *fasthttp.RequestCtx, key, uri string) error {
	flight := key + "\x00" + string(c.Request.Header.PeekBytes(hAPIKey))
	// Made from c now: the flight may outlive this read (answered from the
	// store), and fasthttp reuses c once its handler returns.
	out := new(fasthttp.Request)
	s.outgoing(c, uri, out, true)
	answer := s.forwards.DoChan(flight, func() (any, error) {
		res := new(fasthttp.Response) // read by every waiter: never reused
		if err := s.ask(out, res); err != nil {
			return nil, err
		}
		return res, nil
	})
	r, e := s.awaitForward(key, answer, s.now(c))
	if e != nil {
		s.send(c, e, vMiss, s.now(c).Unix())
		return nil
	}
	v, err := r.Val, r.Err
	res := &c.Response
	if err != nil {
		resetResponse(res)
		return err
	}
	skip := res.SkipBody
	v.(*fasthttp.Response).CopyTo(res)
	res.SkipBody = skip
	if inm := c.Request.Header.PeekBytes(hIfNoneMatch); len(inm) > 0 && res.StatusCode() == fasthttp.StatusOK {
		if etag := peekFold(&res.Header, hETag); len(etag) > 0 && media.ETagMatch(inm, etag) {
			// The origin's 304: its 200's headers, no body, no Content-Type
			// (which fasthttp writes while the length is not zero, and
			// leaves the length of a 304 as it is).
			res.ResetBody()
			res.Header.SetContentLength(0)
			res.Header.SetContentTypeBytes(nil)
			res.SetStatusCode(fasthttp.StatusNotModified)
		}
	}
	return nil
}

// awaitForward waits for the origin's answer to a forward of key, or for
// the store to hold key once the change feed lists it, whichever comes
// first: the answer, or the object read from the store. A listing while
// the store lacks the object (a delete, or the store failing) leaves it
// waiting for the next.
func (s *Server) awaitForward(key string, answer <-chan singleflight.Result, now time.Time) (singleflight.Result, *entry) {
	stored, done := s.written.wait(key)
	defer func() { done() }()
	for {
		select {
		case r := <-answer:
			return r, nil
		case <-stored:
			done()
			// Watch for the next listing before reading, so that none
			// falls between the read and the wait.
			stored, done = s.written.wait(key)
			if e, err := s.load(context.Background(), key, now); err == nil {
				return singleflight.Result{}, e
			}
		}
	}
}

// peekFold returns the value of header name in h, whatever the case of its
// name: the origin client keeps header names as the origin sent them.
func peekFold(h *fasthttp.ResponseHeader, name []byte) []byte {
	var v []byte
	h.VisitAll(func(k, value []byte) {
		if v == nil && bytes.EqualFold(k, name) {
			v = value
		}
	})
	return v
}

// roundTrip sends the request of c to the origin with the given raw request
// URI and puts the origin's answer into c's response. A failure to reach or
// read the origin is returned as a 503 or 502 problem.
func (s *Server) roundTrip(c *fasthttp.RequestCtx, uri string) error {
	res := &c.Response
	skip := res.SkipBody // set for HEAD; Do resets the response
	err := s.exchange(c, uri, res, false)
	res.SkipBody = skip
	if err != nil {
		resetResponse(res)
	}
	return err
}

// exchange sends the request of c to the origin with the given raw request
// URI, hop-by-hop headers dropped and X-Forwarded-* added, and reads the
// answer into res. asGet sends a GET without If-None-Match or body instead
// of c's method, conditional headers and body. A failure to reach or read
// the origin is returned as a 503 or 502 problem.
func (s *Server) exchange(c *fasthttp.RequestCtx, uri string, res *fasthttp.Response, asGet bool) error {
	out := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(out)
	s.outgoing(c, uri, out, asGet)
	return s.ask(out, res)
}

// outgoing makes out the request to send to the origin for c's (see
// exchange).
func (s *Server) outgoing(c *fasthttp.RequestCtx, uri string, out *fasthttp.Request, asGet bool) {
	in := &c.Request
	in.Header.CopyTo(&out.Header)
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	out.Header.Del("Expect") // the edge's server already answered 100-continue
	out.Header.SetRequestURI(uri)
	if len(out.Header.Host()) == 0 {
		// HTTP/1.0 needs no Host, but the client refuses to send a request
		// without one; the origin routes by path alone.
		out.Header.SetHost(s.origin.Addr)
	}
	if asGet {
		out.Header.SetMethod(fasthttp.MethodGet)
		for _, h := range []string{fasthttp.HeaderIfNoneMatch, fasthttp.HeaderContentLength, fasthttp.HeaderTransferEncoding} {
			out.Header.Del(h)
		}
	} else if in.IsBodyStream() {
		// An upload (limitBody). Wrapped: the client releases a body
		// stream of fasthttp's own type once sent, which the server still
		// owns.
		out.SetBodyStream(struct{ io.Reader }{in.BodyStream()}, in.Header.ContentLength())
	} else {
		out.SetBodyRaw(in.Body())
	}
	ip := c.RemoteIP().String()
	if prior := in.Header.Peek(fiber.HeaderXForwardedFor); len(prior) > 0 {
		out.Header.Set(fiber.HeaderXForwardedFor, string(prior)+", "+ip)
	} else {
		out.Header.Set(fiber.HeaderXForwardedFor, ip)
	}
	if len(in.Header.Peek(fiber.HeaderXForwardedProto)) == 0 {
		proto := "http"
		if c.IsTLS() {
			proto = "https"
		}
		out.Header.Set(fiber.HeaderXForwardedProto, proto)
	}
	if len(in.Header.Peek(fiber.HeaderXForwardedHost)) == 0 && len(in.Host()) > 0 {
		out.Header.SetBytesV(fiber.HeaderXForwardedHost, in.Host())
	}
}

// ask sends out to the origin and reads its answer into res.
func (s *Server) ask(out *fasthttp.Request, res *fasthttp.Response) error {
	if err := s.origin.Do(out, res); err != nil {
		return s.originError(err)
	}
	for _, h := range hopHeaders {
		res.Header.Del(h)
	}
	return nil
}

// resetResponse empties res for another answer, keeping whether its body
// is sent (not for HEAD).
func resetResponse(res *fasthttp.Response) {
	skip := res.SkipBody
	res.Reset()
	res.SkipBody = skip
}

// originError turns a failed round trip into a problem: 503 when the origin
// cannot be reached (refused, unreachable, no free connection), 502 when it
// did not answer in time or answered something unreadable.
func (s *Server) originError(err error) error {
	if now := time.Now().Unix(); s.lastOriginLog.Swap(now) != now {
		s.log.Warn("origin request failed", "origin", s.origin.Addr, "err", err)
	}
	var op *net.OpError
	switch {
	case errors.Is(err, fasthttp.ErrDialTimeout), errors.Is(err, fasthttp.ErrNoFreeConns),
		errors.As(err, &op) && op.Op == "dial":
		return &problem.Error{Kind: problem.Unavailable, RetryAfter: 1,
			Detail: "the origin cannot be reached; retry shortly"}
	case errors.Is(err, fasthttp.ErrTimeout):
		return problem.New(problem.BadGateway, "the origin did not answer in time")
	}
	return problem.New(problem.BadGateway, "the origin's answer could not be read")
}

// written is the set of object keys that reads wait for (forwardShared),
// each with a channel the change feed closes when it lists the key.
type written struct {
	mu    sync.Mutex
	waits map[string]*writtenWait
}

type writtenWait struct {
	ch      chan struct{}
	readers int
}

// wait returns a channel closed when the change feed next lists key, and
// the func to call once the read no longer waits.
func (w *written) wait(key string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waits == nil {
		w.waits = map[string]*writtenWait{}
	}
	ww := w.waits[key]
	if ww == nil {
		ww = &writtenWait{ch: make(chan struct{})}
		w.waits[key] = ww
	}
	ww.readers++
	return ww.ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if ww.readers--; ww.readers == 0 && w.waits[key] == ww {
			delete(w.waits, key)
		}
	}
}

// changed wakes the reads waiting for key.
func (w *written) changed(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ww := w.waits[key]; ww != nil {
		close(ww.ch)
		delete(w.waits, key)
	}
}

// changedAll wakes every waiting read: the feed cannot tell what changed.
func (w *written) changedAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, ww := range w.waits {
		close(ww.ch)
		delete(w.waits, key)
	}
}
