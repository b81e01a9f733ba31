package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/edgecms/edgecms/cors"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/streambody"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/metrics"
	"github.com/edgecms/edgecms/problem"
)

// Header names and values, as bytes so that a hit copies without
// allocating.
var (
	hCacheControl = []byte("Cache-Control")
	hETag         = []byte("Etag")
	hAge          = []byte("Age")
	hXCache       = []byte("X-Cache")
	hSurrogateKey = []byte("Surrogate-Key")
	hIfNoneMatch  = []byte("If-None-Match")
	hAPIKey       = []byte("Apikey")
	hGuid         = []byte("Guid")

	vHit   = []byte("HIT")
	vMiss  = []byte("MISS")
	vStale = []byte("STALE")
)

// fastPath wraps the Fiber app's handler: GET and HEAD requests outside the
// origin's own paths are Fetch API reads and are answered here, on the bare
// fasthttp request, without Fiber's per-request context and routing (a hit
// is the edge's hot path); everything else goes to the app. It also
// answers the health check and CORS preflights itself (never asking the
// origin), refuses the management paths when Config.NoManagement is set,
// and measures and (when sampled) logs every request.
func (s *Server) fastPath(app fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(c *fasthttp.RequestCtx) {
		defer streambody.Finish(c)
		route := s.route(c, app)
		// c.Time is when the server read the request: no clock read
		// more on the hot path than the one that measures.
		s.observe(c, route, c.Time())
	}
}

// The route labels of an edge's requests in metrics and access lines.
const (
	routeFetch = iota
	routeAsset
	routeHealth
	routePreflight
	routeManagement
	routeOther
	nRoutes
)

var routeNames = [nRoutes]string{"fetch", "asset", "health", "preflight", "management", "other"}

// route answers c and returns its route label.
func (s *Server) route(c *fasthttp.RequestCtx, app fasthttp.RequestHandler) int {
	t := requestTarget(&c.Request)
	if c.IsGet() || c.IsHead() {
		if string(t.cleanPath) == "/healthz" || string(t.cleanPath) == "/livez" {
			// The edge's own liveness: never the origin's, so that a load
			// balancer keeps edges that serve from the store while the
			// origin is down.
			c.Response.Header.Set(fiber.HeaderCacheControl, "no-store")
			c.SetBodyString("ok")
			return routeHealth
		}
		if assetPath(t.cleanPath) {
			if err := s.serveAsset(c, t); err != nil {
				s.writeProblem(c, err)
			}
			s.cfg.CORS.Decorate(c)
			return routeAsset
		}
		if !originPath(t.cleanPath) {
			if err := s.serveFetch(c, t); err != nil {
				s.writeProblem(c, err)
			}
			s.cfg.CORS.Decorate(c)
			return routeFetch
		}
	}
	if s.cfg.CORS != nil && cors.Preflight(c) && cors.Applies(t.cleanPath) {
		s.cfg.CORS.Answer(c)
		return routePreflight
	}
	if managementPath(t.cleanPath) {
		if s.cfg.NoManagement {
			s.writeProblem(c, problem.NotFoundf("no route %s %s", c.Method(), t.cleanPath))
			return routeManagement
		}
		app(c)
		return routeManagement
	}
	app(c)
	if cors.Applies(t.cleanPath) {
		s.cfg.CORS.Decorate(c)
	}
	return routeOther
}

// originPath reports whether a GET of path is the origin's own business
// (the management API, the OpenAPI document, the Studio) rather than a
// Fetch API read.
func originPath(path []byte) bool { return managementPath(path) }

// managementPath reports whether path is the management API's or the
// Studio's, which EDGECMS_EDGE_MANAGEMENT=off keeps from the origin.
func managementPath(path []byte) bool {
	return string(path) == "/api" || bytes.HasPrefix(path, []byte("/api/")) ||
		string(path) == "/studio" || bytes.HasPrefix(path, []byte("/studio/"))
}

// target is a request's target as the edge reads it: the host, the path as
// sent and as normalised (unescaped, dot segments and double slashes
// removed: what routes), and the query.
type target struct {
	host, path, cleanPath, query []byte
}

// requestTarget returns the target of rq, as fasthttp's URI parses it.
func requestTarget(rq *fasthttp.Request) target {
	u := rq.URI()
	return target{host: u.Host(), path: u.PathOriginal(), cleanPath: u.Path(), query: u.QueryString()}
}

// serveFetch answers a Fetch API read: parse, check the key against the
// manifest, then the cache, the store, and last the origin.
func (s *Server) serveFetch(c *fasthttp.RequestCtx, t target) error {
	rq := &c.Request
	p, err := s.parse(t.host, rq.Header.PeekBytes(hGuid), t.path, t.query)
	if err != nil {
		return err
	}
	ctx := context.Background()
	now := s.now(c)
	err = s.keys.check(ctx, p.req.Guid, rq.Header.PeekBytes(hAPIKey), p.req.APIType, now)
	switch {
	case errors.Is(err, errNoManifest):
		// The origin checks the key against the database.
		return s.forwardFetch(c, p.req, "", now)
	case err != nil:
		return err
	case p.key == "": // preview: never stored
		return s.forwardFetch(c, p.req, "", now)
	}
	if e := s.cache.get(p.key); e != nil && !e.stale.Load() {
		metrics.EdgeCacheHits.Inc()
		s.send(c, e, vHit, now.Unix())
		return nil
	}
	metrics.EdgeCacheMisses.Inc()
	e, err := s.load(ctx, p.key, now)
	if err != nil {
		if !problem.Is(err, problem.NotFound) {
			s.log.Warn("store read failed; asking the origin", "key", p.key, "err", err)
		}
		return s.forwardFetch(c, p.req, p.key, now)
	}
	s.send(c, e, vMiss, now.Unix())
	return nil
}

// parse parses a Fetch API read (host, Guid header, path and query as
// sent), remembering the result in the memo.
func (s *Server) parse(host, guidHeader, path, query []byte) (*parsed, error) {
	var buf [256]byte
	raw := rawKey(buf[:0], host, guidHeader, path, query)
	if p := s.memo.get(raw); p != nil {
		return p, nil
	}
	req, err := fetch.Parse(fetch.Input{Host: string(host), Path: string(path), RawQuery: string(query), GuidHeader: string(guidHeader)})
	if err != nil {
		return nil, err
	}
	p := &parsed{req: req}
	if req.Cacheable() {
		p.key = req.Key()
	}
	s.memo.put(raw, p)
	return p, nil
}

// now is the time of c's request: Config.Now when set, else the time the
// server took for the request (no extra clock read).
func (s *Server) now(c *fasthttp.RequestCtx) time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return c.Time()
}

// load reads key from the store and caches it. Concurrent loads of one key
// share one store read.
func (s *Server) load(ctx context.Context, key string, now time.Time) (*entry, error) {
	v, err, _ := s.fills.Do(key, func() (any, error) {
		gen := s.cache.generation(key)
		o, err := s.cfg.Store.Get(ctx, key)
		if err != nil {
			return nil, err
		}
		e := newEntry(o, now)
		s.cache.put(e, gen)
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*entry), nil
}

// send writes e as the answer, or a 304 when the request's If-None-Match
// holds its ETag.
func (s *Server) send(c *fasthttp.RequestCtx, e *entry, xcache []byte, now int64) {
	res := &c.Response
	h := &res.Header
	h.SetCanonical(hCacheControl, e.cacheControl)
	h.SetCanonical(hETag, e.etag)
	var buf [20]byte
	h.SetCanonical(hAge, e.age(buf[:0], now))
	h.SetCanonical(hXCache, xcache)
	if e.surrogateKey != nil {
		h.SetCanonical(hSurrogateKey, e.surrogateKey)
	}
	if inm := c.Request.Header.PeekBytes(hIfNoneMatch); len(inm) > 0 && media.ETagMatch(inm, e.etag) {
		res.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	h.SetContentTypeBytes(e.contentType)
	res.SetBodyRaw(e.body)
}

// problemBody is the JSON problem document of err.
func problemBody(err error) []byte {
	b, _ := json.Marshal(problem.DocumentOf(err))
	return b
}
