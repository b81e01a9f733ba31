// Package edge is edgecms's edge server: it answers Content Fetch API reads
// from the object store that the publisher fills, without any database, and
// passes everything else to the origin.
//
// An edge validates APIKey headers against the key manifest the publisher
// writes for each instance (hashes, type, expiry, enabled), serves fetch
// objects from an in-memory cache bounded in bytes and, on a cache miss,
// from the store, with Cache-Control, ETag, Age, X-Cache and Surrogate-Key
// headers, HEAD and conditional GETs. It forwards to the origin what the
// store does not hold (a variant not rendered yet), preview requests (never
// stored), requests for instances without a manifest, and every other call
// (management API, health check, non-GET methods) as a transparent reverse
// proxy. When the origin is down it keeps serving what it has
// (stale-if-error) and otherwise answers 502 or 503 problem documents.
//
// A Fetch API read (GET or HEAD) is answered on the bare fasthttp request,
// before Fiber's router (fastPath); Fiber serves the rest, the proxy and
// the error pages.
//
// Edges learn about changed objects from the change feed in the store
// (FeedKey), which they poll cheaply (a Stat, then a read only when its ETag
// changed). README.md describes the request flow and the design choices.
package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"

	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"golang.org/x/sync/singleflight"

	"github.com/edgecms/edgecms/cors"
	"github.com/edgecms/edgecms/internal/guard"
	"github.com/edgecms/edgecms/logging"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/problem"
	"github.com/edgecms/edgecms/store"
)

// Config is an edge's configuration.
type Config struct {
	// Store holds the published objects, the change feed and the key
	// manifests. Required.
	Store store.Store
	// OriginURL is the origin that answers what the edge does not serve,
	// http:// or https:// with a host and an optional port. Required.
	OriginURL string
	// CacheBytes bounds the in-memory object cache (default 256 MiB). One
	// object may take at most an eighth of it; larger ones are served from
	// the store each time.
	CacheBytes int64
	// FeedPoll is how often the change feed is checked (default 50 ms).
	FeedPoll time.Duration
	// ManifestRefresh is how often the key manifests held are read again,
	// in case a change to one was missed (default 30 s).
	ManifestRefresh time.Duration
	// OriginTimeout bounds one forwarded request (default 60 s).
	OriginTimeout time.Duration
	// BodyLimit is the largest request body forwarded, in bytes (default
	// 2 MiB, the origin's own limit), but for asset uploads.
	BodyLimit int
	// UploadLimit is the largest asset file an upload forwarded may send
	// (default 50 MiB, the origin's): uploads are streamed to the origin,
	// never held in memory.
	UploadLimit int64
	// ImageSizes are the widths and heights of image variants (default
	// media.DefaultSizes); set the origin's, so that a variant is looked up
	// under the key the origin stores it at.
	ImageSizes []int
	// Conns bounds the connections of the edge's listeners (Listen,
	// ListenTLS, Serve): in all and per client address, and how long a
	// write may make no progress before its connection is closed.
	Conns guard.Options
	// Now is the clock (key expiry, Age); nil means the time the server
	// read each request.
	Now func() time.Time
	// NoManagement answers 404 to the management API and the Studio
	// (/api/, /studio/) instead of forwarding them to the origin
	// (EDGECMS_EDGE_MANAGEMENT=off): for public edges, whose origin's
	// management routes should be reached only from inside. Assets stay
	// served.
	NoManagement bool
	// CORS lets browsers of its origins read Fetch API answers; the edge
	// answers their preflights itself. Nil: no cross-origin access.
	CORS *cors.Policy
	// AccessLog samples the requests logged (default: none).
	AccessLog logging.Sampler
}

// Defaults of Config.
const (
	DefaultCacheBytes      = 256 << 20
	DefaultFeedPoll        = 50 * time.Millisecond
	DefaultManifestRefresh = 30 * time.Second
	DefaultOriginTimeout   = 60 * time.Second
	DefaultBodyLimit       = 2 << 20
	DefaultUploadLimit     = 50 << 20
)

// The edge's connection timeouts: for reading a request once begun, and
// for a kept-alive connection waiting for its next request.
const (
	readTimeout = 30 * time.Second
	idleTimeout = 120 * time.Second
)

// Server is an edge: its Fiber app, cache, keys and origin client.
type Server struct {
	cfg    Config
	log    *slog.Logger
	app    *fiber.App
	cache  *cache
	keys   *keyring
	origin *fasthttp.HostClient
	// fills shares one store read among the concurrent loads of an object
	// key (load); forwards shares one origin request among the concurrent
	// forwards of an object key with one API key (forwardShared).
	fills    singleflight.Group
	forwards singleflight.Group
	// written wakes the reads that wait for the origin's answer to a miss
	// when the change feed lists their key (forwardShared).
	written  written
	memo     *memo
	ready    readiness   // closed after Run's first read of the change feed (feed.go)
	feedRead atomic.Bool // a read of the change feed succeeded (CheckReady)
	// lastOriginLog is when an origin failure was last logged (Unix
	// seconds), so that an outage logs once a second, not once a request.
	lastOriginLog atomic.Int64
}

// New checks cfg and builds an edge. Call Run to follow the change feed and
// serve App.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("edge: no store")
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if cfg.FeedPoll <= 0 {
		cfg.FeedPoll = DefaultFeedPoll
	}
	if cfg.ManifestRefresh <= 0 {
		cfg.ManifestRefresh = DefaultManifestRefresh
	}
	if cfg.OriginTimeout <= 0 {
		cfg.OriginTimeout = DefaultOriginTimeout
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.UploadLimit <= 0 {
		cfg.UploadLimit = DefaultUploadLimit
	}
	if len(cfg.ImageSizes) == 0 {
		cfg.ImageSizes = media.DefaultSizes
	}
	origin, err := newOriginClient(cfg.OriginURL, cfg.OriginTimeout)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, cache: newCache(cfg.CacheBytes), keys: newKeyring(cfg.Store), origin: origin, memo: newMemo()}
	s.app = fiber.New(fiber.Config{
		AppName:               "edgecms edge",
		BodyLimit:             cfg.BodyLimit,
		ErrorHandler:          s.handleError,
		DisableStartupMessage: true,
		ReadTimeout:           readTimeout,
		WriteTimeout:          cfg.OriginTimeout,
		IdleTimeout:           idleTimeout,
		CaseSensitive:         true,
		// Bodies come as streams, so that uploads pass to the origin as
		// they arrive (bodies.go).
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	})
	s.app.Use(s.proxy)
	s.app.Server().Handler = s.fastPath(s.app.Handler())
	guard.Harden(s.app.Server(), log)
	return s, nil
}

// newOriginClient returns the client that forwards to the origin at raw.
func newOriginClient(raw string, timeout time.Duration) (*fasthttp.HostClient, error) {
	if raw == "" {
		return nil, errors.New("edge: no origin URL (EDGECMS_ORIGIN_URL)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not the URL itself: a mistyped one may hold a credential.
		return nil, errors.New("edge: origin URL: want http://host[:port] or https://host[:port]")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("edge: origin URL %s://%s: want no path, query or credentials", u.Scheme, u.Host)
	}
	addr := u.Host
	if u.Port() == "" {
		addr += map[string]string{"http": ":80", "https": ":443"}[u.Scheme]
	}
	return &fasthttp.HostClient{
		Addr:                          addr,
		IsTLS:                         u.Scheme == "https",
		NoDefaultUserAgentHeader:      true,
		DisablePathNormalizing:        true,
		DisableHeaderNamesNormalizing: true,
		MaxConns:                      1024,
		MaxIdleConnDuration:           60 * time.Second,
		ReadTimeout:                   timeout,
		WriteTimeout:                  timeout,
		// A forwarded request is sent once: the client decides whether to
		// retry a failed call.
		MaxIdemponentCallAttempts: 1,
	}, nil
}

// App returns the Fiber app, to test with App().Test or to listen on
// (Listen, Listener, ListenTLS), though the edge's own Listen, ListenTLS
// and Serve also survive a failing accept. Its server's handler answers Fetch
// API reads before the app's router sees them, so serve App().Server() or
// the listeners, not App().Handler(), which is the router alone.
func (s *Server) App() *fiber.App { return s.app }

// Shutdown stops accepting requests, waits for those in flight and closes
// the connections to the origin. It returns ctx's error if ctx ends first.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.app.ShutdownWithContext(ctx)
	s.origin.CloseIdleConnections()
	return err
}

// handleError is the Fiber app's error handler: see writeProblem.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		k := problem.Internal
		detail := fe.Message
		switch fe.Code {
		case fiber.StatusBadRequest:
			k = problem.Invalid
		case fiber.StatusRequestEntityTooLarge:
			k = problem.TooLarge
			detail = "the request body is larger than " + strconv.Itoa(s.cfg.BodyLimit) + " bytes"
		case fiber.StatusNotFound, fiber.StatusMethodNotAllowed:
			k = problem.NotFound
		}
		err = &problem.Error{Kind: k, Detail: detail}
	}
	s.writeProblem(c.Context(), err)
	return nil
}

// writeProblem is the one place that turns an error into a response: a
// problem document with the kind's status and cache policy. Internal errors
// are logged here, and their text never reaches the client.
func (s *Server) writeProblem(c *fasthttp.RequestCtx, err error) {
	k := problem.KindOf(err)
	if k == problem.Internal {
		s.log.Error("request failed", "method", string(c.Method()), "path", string(c.Path()), "err", err)
	}
	h := &c.Response.Header
	if ra := problem.RetryAfter(err); ra > 0 {
		h.Set(fiber.HeaderRetryAfter, strconv.Itoa(ra))
	}
	h.Set(fiber.HeaderCacheControl, k.CacheControl())
	h.SetContentType(problem.ContentType)
	c.Response.SetBodyRaw(problemBody(err))
	c.SetStatusCode(k.Status())
}
