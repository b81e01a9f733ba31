// Package origin is edgecms's HTTP origin: the management API, the Fetch API
// for cache misses and preview, and the OpenAPI document, served by Fiber.
//
// In a deployment the origin sits behind edges and a CDN: it answers only
// what they cannot (objects not yet in the store, preview, management). It
// reads and writes Postgres through content.Store.
package origin

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/singleflight"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/cors"
	"github.com/edgecms/edgecms/delivery"
	"github.com/edgecms/edgecms/fetch"
	"github.com/edgecms/edgecms/internal/guard"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/store"
	"github.com/edgecms/edgecms/throttle"
	"github.com/edgecms/edgecms/users"
	"github.com/edgecms/edgecms/webhooks"
)

// Config is the origin's part of the service configuration.
type Config struct {
	// Conns bounds the connections of the origin's listeners (Listen,
	// ListenTLS, Serve): in all and per client address, and how long a
	// write may make no progress before its connection is closed.
	Conns guard.Options
	// BodyLimit is the largest request body accepted, in bytes, but for
	// asset uploads.
	BodyLimit int
	// UploadLimit is the largest asset file accepted, in bytes (default
	// content.DefaultMaxAssetBytes). Multipart uploads are streamed to the
	// store, never held in memory; JSON uploads (base64) are held, and so
	// limited by BodyLimit too.
	UploadLimit int64
	// ImageSizes are the widths and heights image transforms resize to
	// (default media.DefaultSizes; see media.ParseTransform).
	ImageSizes []int
	// FetchRateLimit is how many direct Fetch API requests per second one
	// fetch key may make (0: no limit), and PreviewRateLimit how many
	// preview requests one preview key may make (0: no limit; a bucket of
	// PreviewBurstSeconds of them). Every origin on the database shares
	// the counts.
	FetchRateLimit, PreviewRateLimit int
	// Renderer renders Fetch API answers, with each instance's
	// render.Site from the origin's memory (read once, dropped when the
	// event log shows a locale added or removed). Without it (and without
	// Render) the origin answers only the management API.
	Renderer *render.Renderer
	// Render, when Renderer is nil, renders Fetch API answers instead
	// (tests wrap a Renderer in it).
	Render RenderFunc
	// KeyCacheTTL is how long a Fetch API key check is cached (default 1 s).
	KeyCacheTTL time.Duration
	// RenderCacheBytes bounds the in-memory cache of rendered fetch answers
	// (0: the default, 64 MiB; negative: no cache, every answer is
	// rendered).
	RenderCacheBytes int64
	// ChangePoll is how often the origin reads the event log to drop
	// cached answers of changed instances (default 100 ms).
	ChangePoll time.Duration
	// WriteBack, when set, is called with a fetch answer the origin
	// serves (rendered or from its render cache) once it has been read
	// twice, and then once per change of its instance, so that a variant
	// edges keep missing is stored (publisher.Publisher.WriteBack). It
	// must return quickly.
	WriteBack func(ctx context.Context, req fetch.Request, body []byte, tags []string)
	// Webhooks serves the webhook management routes; without it they
	// answer 503.
	Webhooks *webhooks.Store
	// Assets is the object store that uploaded asset bytes are written to
	// and served from (the store the publisher writes); without it the
	// asset upload and asset serving routes answer 503.
	Assets store.Store
	// Users signs people in and holds their roles; nil: a store on the
	// content store's database with the default session times.
	Users *users.Store
	// EmailThrottle and AddressThrottle limit failed sign-ins per email
	// address and per client address (zero: DefaultEmailThrottle and
	// DefaultAddressThrottle).
	EmailThrottle, AddressThrottle throttle.Policy
	// TokenThrottle limits failed management-token attempts per client
	// address (zero: DefaultTokenThrottle). The client address is the
	// peer's, or, from a TrustedProxies peer (an edge), the one its
	// X-Forwarded-For names.
	TokenThrottle throttle.Policy
	// SecretKey is the service's secret (EDGECMS_SECRET_KEY), from which
	// the key that signs preview links is derived; without it the preview
	// link routes answer 503.
	SecretKey []byte
	// PreviewLinkTTL is how long a preview link works (0:
	// DefaultPreviewLinkTTL).
	PreviewLinkTTL time.Duration
	// Now is the clock of preview links (nil: time.Now); tests stop it.
	Now func() time.Time
	// TrustedProxies are the proxies (edges, load balancers) whose
	// X-Forwarded-For and X-Forwarded-Proto headers tell the client's
	// address and scheme (nil: DefaultTrustedProxies; empty: none).
	TrustedProxies []netip.Prefix
	// CORS lets browsers of its origins read Fetch API and preview
	// answers (nil: no cross-origin access).
	CORS *cors.Policy
	// FeedListenURL, when set, is the database URL the origin LISTENs on
	// for the publisher's feed writes, to answer edges waiting for the
	// next change feed (delivery.FeedWaitPath, feedwait.go); without it
	// that route answers 503 and edges poll the store only.
	FeedListenURL string
}

// managePrefix is the path prefix of the management API (the instances'
// routes, sign-in, preview links): none of its answers may be cached.
const managePrefix = "/api/v1"

// managePath reports whether path is under managePrefix.
func managePath(path string) bool {
	return path == managePrefix || strings.HasPrefix(path, managePrefix+"/")
}

// DefaultRenderCacheBytes is the size of the render cache when
// Config.RenderCacheBytes is 0.
const DefaultRenderCacheBytes = 64 << 20

// Server is the origin: its handlers and what they use.
type Server struct {
	cfg   Config
	store *content.Store
	log   *slog.Logger
	app   *fiber.App

	keys   *keyCache
	limits rateLimits
	cache  *renderCache
	// watched is the id of the last event watch has read, for tests that
	// must know the cache has seen a change.
	watched atomic.Int64
	sites   *siteCache

	previewKey []byte // signs preview links

	users                       *users.Store
	emailThrottle, addrThrottle *throttle.Limiter
	tokens                      *tokenGuard

	// variants shares one render among concurrent requests of an image
	// variant; renders bounds the renders running at once.
	variants singleflight.Group
	renders  chan struct{}

	// answers shares one render among concurrent misses of one fetch
	// answer (answer); waiting counts the requests waiting on them.
	answers singleflight.Group
	waiting atomic.Int64

	// routeTable tells a path no route has from one another method has.
	routeTable *routeTable
	feed       *feedSignal // what edges waiting for the next feed wait on
}

// New builds the origin's Fiber app.
func New(cfg Config, store *content.Store, log *slog.Logger) *Server {
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = 2 << 20
	}
	if cfg.UploadLimit <= 0 {
		cfg.UploadLimit = content.DefaultMaxAssetBytes
	}
	if len(cfg.ImageSizes) == 0 {
		cfg.ImageSizes = media.DefaultSizes
	}
	if cfg.KeyCacheTTL <= 0 {
		cfg.KeyCacheTTL = time.Second
	}
	if cfg.RenderCacheBytes == 0 {
		cfg.RenderCacheBytes = DefaultRenderCacheBytes
	}
	if cfg.ChangePoll <= 0 {
		cfg.ChangePoll = 100 * time.Millisecond
	}
	if cfg.Users == nil {
		cfg.Users = users.NewStore(store.DB(), users.Options{})
	}
	if cfg.EmailThrottle == (throttle.Policy{}) {
		cfg.EmailThrottle = DefaultEmailThrottle
	}
	if cfg.AddressThrottle == (throttle.Policy{}) {
		cfg.AddressThrottle = DefaultAddressThrottle
	}
	if cfg.TokenThrottle == (throttle.Policy{}) {
		cfg.TokenThrottle = DefaultTokenThrottle
	}
	if cfg.PreviewLinkTTL <= 0 {
		cfg.PreviewLinkTTL = DefaultPreviewLinkTTL
	}
	if cfg.TrustedProxies == nil {
		cfg.TrustedProxies = DefaultTrustedProxies
	}
	s := &Server{cfg: cfg, store: store, log: log,
		keys: newKeyCache(store, cfg.KeyCacheTTL), previewKey: previewKey(cfg.SecretKey),
		cache: newRenderCache(cfg.RenderCacheBytes), sites: newSiteCache(store), users: cfg.Users,
		emailThrottle: throttle.New(store.DB(), cfg.EmailThrottle), addrThrottle: throttle.New(store.DB(), cfg.AddressThrottle),
		tokens:  newTokenGuard(throttle.New(store.DB(), cfg.TokenThrottle), cfg.TokenThrottle.Detail),
		renders: make(chan struct{}, runtime.GOMAXPROCS(0)), feed: newFeedSignal()}
	s.limits = newRateLimits(s)
	s.app = fiber.New(fiber.Config{
		AppName:               "edgecms origin",
		BodyLimit:             cfg.BodyLimit,
		ErrorHandler:          s.handleError,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		CaseSensitive:         true,
		StrictRouting:         false,
		// Bodies reach the handlers as streams, so that uploads go to the
		// store as they arrive; bodies.go reads the others (BodyLimit).
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	})
	guard.Harden(s.app.Server(), log)
	s.routes()
	return s
}

// App returns the Fiber app, to listen on or to test with App().Test.
func (s *Server) App() *fiber.App { return s.app }

// Run runs the origin's background work (following the event log to keep
// its render and site caches fresh; with FeedListenURL, the feed channel)
// until ctx is cancelled.
func (s *Server) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if s.cfg.FeedListenURL != "" {
		wg.Add(1)
		go func() { defer wg.Done(); s.followFeed(ctx, s.cfg.FeedListenURL) }()
	}
	s.watch(ctx, s.cfg.ChangePoll)
	wg.Wait()
}

// Listen serves the origin on addr until Shutdown. Serve the origin with
// Listen, ListenTLS or Serve rather than on App() directly: their
// listeners (guard.Listener) retry an accept that fails, cap the open
// connections (Config.Conns) and close connections whose client stopped
// reading.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("origin: listen: %w", err)
	}
	return s.Serve(ln)
}

// ListenTLS serves the origin over TLS on addr, with the certificate and
// key in the PEM files certFile and keyFile (TLS 1.2 at least).
func (s *Server) ListenTLS(addr, certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("origin: load TLS key pair from %q and %q: %w", certFile, keyFile, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("origin: listen: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	return s.app.Listener(guard.NewTLSListener(ln, cfg, s.cfg.Conns, s.log))
}

// Serve serves the origin on the connections ln accepts until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	return s.app.Listener(guard.NewListener(ln, s.cfg.Conns, s.log))
}

// Shutdown stops accepting requests and waits for those in flight.
// Edges waiting for the next feed are answered at once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.feed.stop.Do(func() { close(s.feed.closing) })
	return s.app.ShutdownWithContext(ctx)
}

func (s *Server) routes() {
	s.app.Use(s.observe)
	s.app.Use(s.bodies)
	// No shared cache may keep a management answer: they depend on who
	// asks. handleError keeps this for the errors too.
	s.app.Use(managePrefix, noStore)
	// The public port's health check is liveness (as /livez on the admin
	// address): readiness, which asks Postgres, is /readyz there.
	s.app.Get("/healthz", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.SendString("ok")
	})
	s.app.Get("/api/openapi.json", serveOpenAPI)
	s.peopleRoutes()
	s.previewRoutes()
	s.studioRoutes()
	s.manageRoutes(s.app.Group("/api/v1/instance/:guid"))
	// After the Studio's routes: its files are under /studio/assets/.
	s.assetRoutes()
	s.app.All(apiPrefix+"*", s.noRoute)
	s.app.Get(delivery.FeedWaitPath, s.waitFeed)
	s.app.Get("/*", s.serveFetch)
	s.app.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
	s.routeTable = newRouteTable(s.app)
}
