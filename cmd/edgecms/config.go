package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edgecms/edgecms/admin"
	"github.com/edgecms/edgecms/cors"
	"github.com/edgecms/edgecms/internal/guard"
	"github.com/edgecms/edgecms/logging"
	"github.com/edgecms/edgecms/media"
	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/render"
	"github.com/edgecms/edgecms/webhooks"
)

// config is the whole service configuration, read once from the environment
// and flags (a flag wins over its variable).
type config struct {
	DatabaseURL      string
	Addr             string
	Store            string
	OriginURL        string
	TLSCert          string
	TLSKey           string
	SecretKey        string
	FetchRateLimit   int
	PreviewRateLimit int
	EdgeCacheBytes   int64
	RenderCacheBytes int64
	// PublishMemory bounds the published content a publisher holds in
	// memory at once (publisher.Config.SnapshotBytes).
	PublishMemory int64
	// MaxVariants caps the written-back variants per instance
	// (publisher.Config.MaxVariants; 0: no cap).
	MaxVariants int
	// PublishListPages is how many list pages of each container the
	// publisher keeps (publisher.Config.ListPages).
	PublishListPages int
	EdgeFeedPoll     time.Duration
	WebhookAllowNets string
	WebhookTimeout   time.Duration
	// Webhooks: fair delivery and the breaker (webhook_config.go).
	Webhooks webhookConfig

	// Media: the URL assets are served below, the upload limit and the
	// sizes of image variants.
	PublicURL      media.PublicURL
	UploadMaxBytes int64
	ImageWidths    []int

	// The CDN purge (EDGECMS_PURGE_*): no purge when PurgeURL is empty.
	PurgeURL, PurgeMethod, PurgeHeaders, PurgeBody string
	PurgeMaxTags                                   int

	// Sign-in sessions and the proxies whose forwarding headers count.
	SessionIdle     time.Duration
	SessionLifetime time.Duration
	TrustedProxies  []netip.Prefix

	// The scheduler's maintenance of the event log and the sync positions.
	MaintenanceInterval    time.Duration
	EventRetention         time.Duration
	SyncTombstoneRetention time.Duration

	// Operations: the admin address (probes, metrics), logs, browsers'
	// access and an edge's management routes.
	AdminAddr      string
	LogFormat      string
	LogLevel       string
	EdgeAccessLog  logging.Sampler
	CORS           *cors.Policy
	EdgeManagement bool

	edgeFeedPoll           string // EDGECMS_EDGE_FEED_POLL as given
	publishMemory          string // EDGECMS_PUBLISH_MEMORY as given
	maxVariants            string // EDGECMS_MAX_VARIANTS as given
	publishListPages       string // EDGECMS_PUBLISH_LIST_PAGES as given
	webhookTimeout         string // EDGECMS_WEBHOOK_TIMEOUT as given
	purgeMaxTags           string // EDGECMS_PURGE_MAX_TAGS as given
	maintenanceInterval    string // EDGECMS_MAINTENANCE_INTERVAL as given
	eventRetention         string // EDGECMS_EVENT_RETENTION as given
	syncTombstoneRetention string // EDGECMS_SYNC_TOMBSTONE_RETENTION as given
	sessionIdle            string // EDGECMS_SESSION_IDLE as given
	sessionLifetime        string // EDGECMS_SESSION_LIFETIME as given
	trustedProxies         string // EDGECMS_TRUSTED_PROXIES as given
	publicURL              string // EDGECMS_PUBLIC_URL as given
	uploadMaxBytes         string // EDGECMS_UPLOAD_MAX_BYTES as given
	imageWidths            string // EDGECMS_IMAGE_WIDTHS as given

	// Conns bounds the connections of the public port (conns.go).
	Conns           guard.Options
	maxConns        string // EDGECMS_MAX_CONNS as given
	maxConnsPerAddr string // EDGECMS_MAX_CONNS_PER_ADDR as given
	edgeAccessLog   string // EDGECMS_EDGE_ACCESS_LOG as given
	corsOrigins     string // EDGECMS_CORS_ORIGINS as given
	edgeManagement  string // EDGECMS_EDGE_MANAGEMENT as given
	adminAddrSet    bool   // EDGECMS_ADMIN_ADDR (or its flag) was given
}

// setting describes one configuration value: its variable, flag and default.
type setting struct {
	env, flag, def, usage string
	str                   *string
	num                   *int64
}

func (c *config) settings() []setting {
	var rate, previewRate, cache, renderCache int64
	return []setting{
		{env: "DATABASE_URL", flag: "database-url", def: "postgres://postgres@127.0.0.1:5432/edgecms?sslmode=disable", usage: "Postgres connection string", str: &c.DatabaseURL},
		{env: "EDGECMS_ADDR", flag: "addr", def: "127.0.0.1:8080", usage: "listen address", str: &c.Addr},
		{env: "EDGECMS_STORE", flag: "store", def: "./data/objects", usage: "object store: a folder, or s3://bucket?endpoint=host:port&secure=false", str: &c.Store},
		{env: "EDGECMS_ORIGIN_URL", flag: "origin-url", usage: "origin an edge forwards misses and preview to", str: &c.OriginURL},
		{env: "EDGECMS_TLS_CERT", flag: "tls-cert", usage: "TLS certificate file (serve HTTPS)", str: &c.TLSCert},
		{env: "EDGECMS_TLS_KEY", flag: "tls-key", usage: "TLS key file", str: &c.TLSKey},
		{env: "EDGECMS_SECRET_KEY", flag: "secret-key", usage: "key that encrypts webhook signing secrets at rest", str: &c.SecretKey},
		{env: "EDGECMS_FETCH_RATE_LIMIT", flag: "fetch-rate-limit", def: "10", usage: "direct Fetch API requests per second per API key (0: off)", num: &rate},
		{env: "EDGECMS_PREVIEW_RATE_LIMIT", flag: "preview-rate-limit", def: strconv.Itoa(origin.DefaultPreviewRateLimit), usage: "preview requests per second per preview key, with a burst of a minute's worth, shared by every origin (0: off)", num: &previewRate},
		{env: "EDGECMS_EDGE_CACHE_BYTES", flag: "edge-cache-bytes", def: "268435456", usage: "size of an edge's in-memory object cache", num: &cache},
		{env: "EDGECMS_RENDER_CACHE_BYTES", flag: "render-cache-bytes", def: "67108864", usage: "size of the origin's in-memory cache of rendered fetch answers (0: off, every answer is rendered)", num: &renderCache},
		{env: "EDGECMS_PUBLISH_MEMORY", flag: "publish-memory", def: strconv.Itoa(publisher.DefaultSnapshotBytes), usage: "field values of published content a publisher holds in memory at once, to render a locale from (a larger locale is rendered from Postgres)", str: &c.publishMemory},
		{env: "EDGECMS_MAX_VARIANTS", flag: "max-variants", def: strconv.Itoa(publisher.DefaultMaxVariants), usage: "objects of Fetch API requests outside those the publisher maintains (filters, sorts, other depths) that readers made it store, per instance; past it the least recently read go (0: no cap)", str: &c.maxVariants},
		{env: "EDGECMS_PUBLISH_LIST_PAGES", flag: "publish-list-pages", def: strconv.Itoa(publisher.DefaultListPages), usage: "list pages (take 10) of each container the publisher keeps in the store; deeper ones are rendered by the origin on a miss and written back", str: &c.publishListPages},
		{env: "EDGECMS_EDGE_FEED_POLL", flag: "edge-feed-poll", def: "50ms", usage: "how often an edge checks the store's change feed", str: &c.edgeFeedPoll},
		{env: "EDGECMS_WEBHOOK_TIMEOUT", flag: "webhook-timeout", def: "15s", usage: "time limit of one webhook delivery attempt", str: &c.webhookTimeout},
		{env: "EDGECMS_WEBHOOK_ALLOW_NETS", flag: "webhook-allow-nets", usage: "CIDRs webhook delivery may reach though private or loopback", str: &c.WebhookAllowNets},
		{env: "EDGECMS_WEBHOOK_CONNECT_TIMEOUT", flag: "webhook-connect-timeout", def: "3s", usage: "time limit of connecting to a webhook endpoint (TCP, then TLS), within the attempt's", str: &c.Webhooks.connectTimeout},
		{env: "EDGECMS_WEBHOOK_ENDPOINT_CONCURRENCY", flag: "webhook-endpoint-concurrency", def: strconv.Itoa(webhooks.DefaultEndpointConcurrency), usage: "deliveries to one webhook attempted at once at most, by all dispatchers", str: &c.Webhooks.endpoint},
		{env: "EDGECMS_WEBHOOK_INSTANCE_CONCURRENCY", flag: "webhook-instance-concurrency", def: strconv.Itoa(webhooks.DefaultInstanceConcurrency), usage: "deliveries of one instance attempted at once at most, by all dispatchers (each runs 64)", str: &c.Webhooks.instance},
		{env: "EDGECMS_WEBHOOK_BREAKER_TIMEOUTS", flag: "webhook-breaker-timeouts", def: strconv.Itoa(webhooks.DefaultBreakerTimeouts), usage: "timed-out attempts in a row that pause a webhook's deliveries (its breaker opens)", str: &c.Webhooks.breaker},
		{env: "EDGECMS_PURGE_URL", flag: "purge-url", usage: "CDN purge-by-tag endpoint called after objects change (empty: no purge)", str: &c.PurgeURL},
		{env: "EDGECMS_PURGE_METHOD", flag: "purge-method", def: "POST", usage: "HTTP method of the purge call", str: &c.PurgeMethod},
		{env: "EDGECMS_PURGE_HEADERS", flag: "purge-headers", usage: `headers of the purge call, "Name: value" lines`, str: &c.PurgeHeaders},
		{env: "EDGECMS_PURGE_BODY", flag: "purge-body", usage: "body template of the purge call ({{tags}}, {{tags_json}}, {{tags_csv}})", str: &c.PurgeBody},
		{env: "EDGECMS_PURGE_MAX_TAGS", flag: "purge-max-tags", def: "30", usage: "tags per purge call", str: &c.purgeMaxTags},
		{env: "EDGECMS_MAINTENANCE_INTERVAL", flag: "maintenance-interval", def: "1m", usage: "how often the scheduler trims the event log and stamps and prunes sync positions", str: &c.maintenanceInterval},
		{env: "EDGECMS_EVENT_RETENTION", flag: "event-retention", def: "24h", usage: "how long events every consumer has read stay in the log", str: &c.eventRetention},
		{env: "EDGECMS_SYNC_TOMBSTONE_RETENTION", flag: "sync-tombstone-retention", def: "90d", usage: "how long deleted copies stay in the sync streams", str: &c.syncTombstoneRetention},
		{env: "EDGECMS_SESSION_IDLE", flag: "session-idle", def: "1h", usage: "a sign-in session ends after this long without a request", str: &c.sessionIdle},
		{env: "EDGECMS_SESSION_LIFETIME", flag: "session-lifetime", def: "24h", usage: "a sign-in session ends this long after sign-in, however used", str: &c.sessionLifetime},
		{env: "EDGECMS_PUBLIC_URL", flag: "public-url", usage: "absolute URL that sites reach edgecms at (the CDN or the edges), which asset URLs are made from; set the same on every role (default: http://EDGECMS_ADDR, https with TLS)", str: &c.publicURL},
		{env: "EDGECMS_UPLOAD_MAX_BYTES", flag: "upload-max-bytes", def: "52428800", usage: "largest asset file an upload may send, in bytes", str: &c.uploadMaxBytes},
		{env: "EDGECMS_IMAGE_WIDTHS", flag: "image-widths", def: defaultImageWidths, usage: "widths (and heights) in pixels that image transforms resize to; others are answered with the next one up", str: &c.imageWidths},
		{env: "EDGECMS_MAX_CONNS", flag: "max-conns", usage: "open connections of the public port at most; idle ones are closed first to make room (default: half the open-file limit)", str: &c.maxConns},
		{env: "EDGECMS_MAX_CONNS_PER_ADDR", flag: "max-conns-per-addr", usage: "open connections of one client address at most (default: a quarter of EDGECMS_MAX_CONNS, at least 64; 0: no cap, behind a proxy that is the one client)", str: &c.maxConnsPerAddr},
		{env: "EDGECMS_TRUSTED_PROXIES", flag: "trusted-proxies", def: "127.0.0.0/8,::1/128", usage: "CIDRs of the proxies (edges, load balancers) whose X-Forwarded-For and X-Forwarded-Proto the origin believes", str: &c.trustedProxies},
		{env: "EDGECMS_ADMIN_ADDR", flag: "admin-addr", def: admin.DefaultAddr, usage: "address of /livez, /readyz and /metrics, never the public port (off: none)", str: &c.AdminAddr},
		{env: "EDGECMS_LOG_FORMAT", flag: "log-format", def: logging.Text, usage: "log format: text or json", str: &c.LogFormat},
		{env: "EDGECMS_LOG_LEVEL", flag: "log-level", def: "info", usage: "lowest level logged: debug, info, warn or error", str: &c.LogLevel},
		{env: "EDGECMS_EDGE_ACCESS_LOG", flag: "edge-access-log", def: "off", usage: "access lines of an edge: off, all, or a fraction of the requests such as 0.01", str: &c.edgeAccessLog},
		{env: "EDGECMS_CORS_ORIGINS", flag: "cors-origins", usage: "origins browsers may call the Fetch API and preview from: * or a comma-separated list such as https://www.example.com (empty: none)", str: &c.corsOrigins},
		{env: "EDGECMS_EDGE_MANAGEMENT", flag: "edge-management", def: "forward", usage: "whether an edge forwards /api/ and /studio/ to the origin: forward or off (404)", str: &c.edgeManagement},
	}
}

// defaultImageWidths is media.DefaultSizes as the setting writes them.
var defaultImageWidths = func() string {
	var b strings.Builder
	for i, n := range media.DefaultSizes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}()

// checkMedia validates the media settings and sets the default public URL
// from the listen address.
func (c *config) checkMedia() error {
	n, err := strconv.ParseInt(c.uploadMaxBytes, 10, 64)
	if err != nil || n < 1024 || n > 5<<30 {
		return fmt.Errorf("EDGECMS_UPLOAD_MAX_BYTES: want a number of bytes from 1024 to 5368709120, got %q", c.uploadMaxBytes)
	}
	c.UploadMaxBytes = n
	if c.ImageWidths, err = media.ParseSizes(c.imageWidths); err != nil {
		return fmt.Errorf("EDGECMS_IMAGE_WIDTHS: %w", err)
	}
	raw := c.publicURL
	if raw == "" {
		raw = defaultPublicURL(c.Addr, c.TLSCert != "")
	}
	if c.PublicURL, err = media.ParsePublicURL(raw); err != nil {
		return fmt.Errorf("EDGECMS_PUBLIC_URL: %w", err)
	}
	return nil
}

// defaultPublicURL is the public URL of a service reached at its listen
// address: http(s)://addr, with localhost for an address that listens on
// every interface.
func defaultPublicURL(addr string, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + "://" + addr
	}
	if ip, err := netip.ParseAddr(host); host == "" || err == nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// parseSpan reads a duration as time.ParseDuration does, or a whole number
// of days written Nd.
func parseSpan(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("bad number of days %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// span validates the duration variable env given as raw, between lo and hi.
func span(env, raw string, lo, hi time.Duration, shown string) (time.Duration, error) {
	d, err := parseSpan(raw)
	if err != nil || d < lo || d > hi {
		return 0, fmt.Errorf("%s: want a duration between %s, such as %s, got %q", env, shown, defaultOf(env), raw)
	}
	return d, nil
}

// defaultOf is the default of the variable env.
func defaultOf(env string) string {
	for _, s := range (&config{}).settings() {
		if s.env == env {
			return s.def
		}
	}
	return ""
}

// checkPurge validates the EDGECMS_PURGE_* variables, each on its own so
// that an error names the variable at fault, with publisher.NewPurger's
// rules.
func (c *config) checkPurge() error {
	n, err := strconv.Atoi(c.purgeMaxTags)
	if err != nil || n < 1 || n > 1000 {
		return fmt.Errorf("EDGECMS_PURGE_MAX_TAGS: want a whole number from 1 to 1000, got %q", c.purgeMaxTags)
	}
	c.PurgeMaxTags = n
	if c.PurgeURL == "" {
		// A purge configured without its endpoint is a mistake (a typo in
		// the URL's name would silently turn purging off).
		for _, v := range []struct{ env, val, def string }{
			{"EDGECMS_PURGE_METHOD", c.PurgeMethod, "POST"}, {"EDGECMS_PURGE_HEADERS", c.PurgeHeaders, ""},
			{"EDGECMS_PURGE_BODY", c.PurgeBody, ""}, {"EDGECMS_PURGE_MAX_TAGS", c.purgeMaxTags, "30"},
		} {
			if v.val != v.def {
				return fmt.Errorf("%s is set but EDGECMS_PURGE_URL is not: set the purge endpoint, or unset %s", v.env, v.env)
			}
		}
		return nil
	}
	const probe = "https://cdn.invalid/purge"
	if _, err := publisher.NewPurger("", c.PurgeURL, "", "", 0); err != nil {
		// Not the URL itself: its path or query may hold a credential.
		return fmt.Errorf("EDGECMS_PURGE_URL: want an http:// or https:// URL")
	}
	if _, err := publisher.NewPurger(c.PurgeMethod, probe, "", "", 0); err != nil {
		return fmt.Errorf("EDGECMS_PURGE_METHOD: %w", err)
	}
	if _, err := publisher.NewPurger("", probe, c.PurgeHeaders, "", 0); err != nil {
		// Not the line itself: it may hold a credential.
		return fmt.Errorf(`EDGECMS_PURGE_HEADERS: want lines of "Name: value" (a literal \n also separates lines); line %d is not`,
			badHeaderLine(c.PurgeHeaders))
	}
	return nil
}

// badHeaderLine returns the number (from 1) of the first line of headers
// that publisher.NewPurger refuses.
func badHeaderLine(headers string) int {
	for i, line := range strings.Split(strings.ReplaceAll(headers, `\n`, "\n"), "\n") {
		if _, err := publisher.NewPurger("", "https://cdn.invalid/purge", line, "", 0); err != nil {
			return i + 1
		}
	}
	return 0
}

// loadConfig reads the configuration for a command from the environment and
// the command's flags, and validates it.
func loadConfig(fs *flag.FlagSet, args []string) (config, error) {
	var c config
	var rate, previewRate, cache, renderCache string
	ss := c.settings()
	dsts := make([]*string, len(ss))
	for i := range ss {
		s := &ss[i]
		dst := s.str
		if s.num != nil {
			dst = map[string]*string{"EDGECMS_FETCH_RATE_LIMIT": &rate, "EDGECMS_PREVIEW_RATE_LIMIT": &previewRate, "EDGECMS_EDGE_CACHE_BYTES": &cache,
				"EDGECMS_RENDER_CACHE_BYTES": &renderCache}[s.env]
		}
		dsts[i] = dst
		// The flag's default is the built-in one, never the environment's
		// value: --help and a bad flag print defaults, and the environment
		// holds secrets (the database password, EDGECMS_SECRET_KEY, the
		// purge headers).
		fs.StringVar(dst, s.flag, s.def, s.usage+" ($"+s.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for i, s := range ss {
		if v, ok := os.LookupEnv(s.env); ok && !given[s.flag] {
			*dsts[i] = v
		}
	}
	_, adminEnv := os.LookupEnv("EDGECMS_ADMIN_ADDR")
	c.adminAddrSet = adminEnv || given["admin-addr"]
	n, err := strconv.Atoi(rate)
	if err != nil || n < 0 {
		return c, fmt.Errorf("EDGECMS_FETCH_RATE_LIMIT: want a whole number >= 0, got %q", rate)
	}
	c.FetchRateLimit = n
	if n, err = strconv.Atoi(previewRate); err != nil || n < 0 {
		return c, fmt.Errorf("EDGECMS_PREVIEW_RATE_LIMIT: want a whole number >= 0, got %q", previewRate)
	}
	c.PreviewRateLimit = n
	m, err := strconv.ParseInt(cache, 10, 64)
	if err != nil || m < 1<<20 {
		return c, fmt.Errorf("EDGECMS_EDGE_CACHE_BYTES: want a number of bytes >= 1048576, got %q", cache)
	}
	c.EdgeCacheBytes = m
	rc, err := strconv.ParseInt(renderCache, 10, 64)
	if err != nil || rc < 0 {
		return c, fmt.Errorf("EDGECMS_RENDER_CACHE_BYTES: want a number of bytes >= 0 (0: no render cache), got %q", renderCache)
	}
	c.RenderCacheBytes = rc
	pm, err := strconv.ParseInt(c.publishMemory, 10, 64)
	if err != nil || pm < 1<<20 {
		return c, fmt.Errorf("EDGECMS_PUBLISH_MEMORY: want a number of bytes >= 1048576, got %q", c.publishMemory)
	}
	c.PublishMemory = pm
	if c.MaxVariants, err = strconv.Atoi(c.maxVariants); err != nil || c.MaxVariants < 0 {
		return c, fmt.Errorf("EDGECMS_MAX_VARIANTS: want a whole number >= 0 (0: no cap), got %q", c.maxVariants)
	}
	lp, err := strconv.Atoi(c.publishListPages)
	if err != nil || lp < 1 || lp > 100_000 {
		return c, fmt.Errorf("EDGECMS_PUBLISH_LIST_PAGES: want a whole number from 1 to 100000, got %q", c.publishListPages)
	}
	c.PublishListPages = lp
	d, err := time.ParseDuration(c.edgeFeedPoll)
	if err != nil || d < time.Millisecond || d > time.Minute {
		return c, fmt.Errorf("EDGECMS_EDGE_FEED_POLL: want a duration between 1ms and 1m, got %q", c.edgeFeedPoll)
	}
	c.EdgeFeedPoll = d
	wt, err := time.ParseDuration(c.webhookTimeout)
	if err != nil || wt < time.Second || wt > 5*time.Minute {
		return c, fmt.Errorf("EDGECMS_WEBHOOK_TIMEOUT: want a duration between 1s and 5m, got %q", c.webhookTimeout)
	}
	c.WebhookTimeout = wt
	if err := c.Webhooks.check(wt); err != nil {
		return c, err
	}
	if err := c.checkConns(); err != nil {
		return c, err
	}
	if err := c.checkPurge(); err != nil {
		return c, err
	}
	if c.MaintenanceInterval, err = span("EDGECMS_MAINTENANCE_INTERVAL", c.maintenanceInterval, time.Second, 24*time.Hour, "1s and 24h"); err != nil {
		return c, err
	}
	if c.EventRetention, err = span("EDGECMS_EVENT_RETENTION", c.eventRetention, time.Minute, 365*24*time.Hour, "1m and 365d"); err != nil {
		return c, err
	}
	if c.SyncTombstoneRetention, err = span("EDGECMS_SYNC_TOMBSTONE_RETENTION", c.syncTombstoneRetention, time.Hour, 10*365*24*time.Hour, "1h and 3650d"); err != nil {
		return c, err
	}
	if c.SessionIdle, err = span("EDGECMS_SESSION_IDLE", c.sessionIdle, time.Minute, 24*time.Hour, "1m and 24h"); err != nil {
		return c, err
	}
	if c.SessionLifetime, err = span("EDGECMS_SESSION_LIFETIME", c.sessionLifetime, time.Hour, 90*24*time.Hour, "1h and 90d"); err != nil {
		return c, err
	}
	if c.SessionLifetime < c.SessionIdle {
		return c, fmt.Errorf("EDGECMS_SESSION_LIFETIME (%s) must not be shorter than EDGECMS_SESSION_IDLE (%s)", c.sessionLifetime, c.sessionIdle)
	}
	if err := c.checkMedia(); err != nil {
		return c, err
	}
	if c.TrustedProxies, err = parsePrefixes(c.trustedProxies); err != nil {
		return c, fmt.Errorf("EDGECMS_TRUSTED_PROXIES: %w", err)
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return c, fmt.Errorf("DATABASE_URL: want a postgres:// URL")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return c, fmt.Errorf("EDGECMS_TLS_CERT and EDGECMS_TLS_KEY go together")
	}
	if err := c.checkOperations(); err != nil {
		return c, err
	}
	return c, nil
}

// checkOperations validates the admin address, the logs, CORS and the
// edge's management setting.
func (c *config) checkOperations() error {
	if c.AdminAddr != admin.Off {
		if _, _, err := net.SplitHostPort(c.AdminAddr); err != nil {
			return fmt.Errorf("EDGECMS_ADMIN_ADDR: want host:port or off, got %q", c.AdminAddr)
		}
	}
	if _, err := logging.New(io.Discard, c.LogFormat, c.LogLevel); err != nil {
		return err
	}
	var err error
	if c.EdgeAccessLog, err = logging.ParseSampler(c.edgeAccessLog); err != nil {
		return err
	}
	if c.CORS, err = cors.Parse(c.corsOrigins); err != nil {
		return err
	}
	switch c.edgeManagement {
	case "forward":
		c.EdgeManagement = true
	case "off":
		c.EdgeManagement = false
	default:
		return fmt.Errorf("EDGECMS_EDGE_MANAGEMENT: want forward or off, got %q", c.edgeManagement)
	}
	return nil
}

// parsePrefixes reads a comma-separated list of CIDRs (a bare address is
// its own /32 or /128).
func parsePrefixes(list string) ([]netip.Prefix, error) {
	out := []netip.Prefix{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("want CIDRs like 10.0.0.0/8, got %q", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// redactStore hides the query of a store spec that mentions a secret.
func redactStore(store string) string {
	if i := strings.Index(store, "?"); i >= 0 && strings.Contains(store[i:], "secret") {
		return store[:i] + "?…"
	}
	return store
}

// redactURL hides the password of a URL, and its query, which may hold a
// token.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.Redacted()
}

// LogValue logs the configuration with secrets redacted.
func (c config) LogValue() slog.Value {
	db := c.DatabaseURL
	if u, err := url.Parse(db); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		db = u.String()
	}
	store := redactStore(c.Store)
	// The purge call's headers and body may hold credentials, and so may
	// its URL's path and query: the host says enough.
	purge := "off"
	if u, err := url.Parse(c.PurgeURL); err == nil && c.PurgeURL != "" {
		purge = c.PurgeMethod + " " + u.Host
	}
	return slog.GroupValue(
		slog.String("database", db), slog.String("addr", c.Addr), slog.String("store", store),
		slog.String("origin", redactURL(c.OriginURL)), slog.Bool("tls", c.TLSCert != ""),
		slog.Bool("secretKey", c.SecretKey != ""), slog.Int("fetchRateLimit", c.FetchRateLimit), slog.Int("previewRateLimit", c.PreviewRateLimit),
		slog.Int64("edgeCacheBytes", c.EdgeCacheBytes), slog.Int64("renderCacheBytes", c.RenderCacheBytes), slog.Int64("publishMemory", c.PublishMemory), slog.Int("publishListPages", c.PublishListPages), slog.Duration("edgeFeedPoll", c.EdgeFeedPoll), slog.Duration("webhookTimeout", c.WebhookTimeout),
		slog.Any("webhooks", c.Webhooks),
		slog.String("webhookAllowNets", c.WebhookAllowNets), slog.String("purge", purge),
		slog.Duration("maintenanceInterval", c.MaintenanceInterval), slog.Duration("eventRetention", c.EventRetention),
		slog.Duration("syncTombstoneRetention", c.SyncTombstoneRetention),
		slog.Duration("sessionIdle", c.SessionIdle), slog.Duration("sessionLifetime", c.SessionLifetime),
		slog.String("trustedProxies", c.trustedProxies),
		slog.String("publicURL", string(c.PublicURL)), slog.Int64("uploadMaxBytes", c.UploadMaxBytes),
		slog.String("imageWidths", c.imageWidths),
		slog.Int("maxConns", c.Conns.MaxConns), slog.Int("maxConnsPerAddr", c.Conns.MaxConnsPerAddr),
		slog.String("adminAddr", c.AdminAddr), slog.String("logFormat", c.LogFormat), slog.String("logLevel", c.LogLevel),
		slog.String("cors", c.CORS.String()),
	)
}

// originConfig is the origin's part of the configuration, rendering with r.
func (c config) originConfig(r *render.Renderer) origin.Config {
	cacheBytes := c.RenderCacheBytes
	if cacheBytes == 0 {
		cacheBytes = -1 // origin.Config's zero is its default size
	}
	return origin.Config{FetchRateLimit: c.FetchRateLimit, PreviewRateLimit: c.PreviewRateLimit, Renderer: r, RenderCacheBytes: cacheBytes,
		TrustedProxies: c.TrustedProxies, UploadLimit: c.UploadMaxBytes, ImageSizes: c.ImageWidths, Conns: c.Conns}
}
