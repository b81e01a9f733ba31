package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
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
	EdgeCacheBytes   int64
	EdgeFeedPoll     time.Duration
	WebhookAllowNets string
	WebhookTimeout   time.Duration

	edgeFeedPoll   string // EDGECMS_EDGE_FEED_POLL as given
	webhookTimeout string // EDGECMS_WEBHOOK_TIMEOUT as given
}

// setting describes one configuration value: its variable, flag and default.
type setting struct {
	env, flag, def, usage string
	str                   *string
	num                   *int64
}

func (c *config) settings() []setting {
	var rate, cache int64
	return []setting{
		{env: "DATABASE_URL", flag: "database-url", def: "postgres://postgres@127.0.0.1:5432/edgecms?sslmode=disable", usage: "Postgres connection string", str: &c.DatabaseURL},
		{env: "EDGECMS_ADDR", flag: "addr", def: "127.0.0.1:8080", usage: "listen address", str: &c.Addr},
		{env: "EDGECMS_STORE", flag: "store", def: "./data/objects", usage: "object store: a folder, or s3://bucket?endpoint=host:port&secure=false", str: &c.Store},
		{env: "EDGECMS_ORIGIN_URL", flag: "origin-url", usage: "origin an edge forwards misses and preview to", str: &c.OriginURL},
		{env: "EDGECMS_TLS_CERT", flag: "tls-cert", usage: "TLS certificate file (serve HTTPS)", str: &c.TLSCert},
		{env: "EDGECMS_TLS_KEY", flag: "tls-key", usage: "TLS key file", str: &c.TLSKey},
		{env: "EDGECMS_SECRET_KEY", flag: "secret-key", usage: "key that encrypts webhook signing secrets at rest", str: &c.SecretKey},
		{env: "EDGECMS_FETCH_RATE_LIMIT", flag: "fetch-rate-limit", def: "10", usage: "direct Fetch API requests per second per API key (0: off)", num: &rate},
		{env: "EDGECMS_EDGE_CACHE_BYTES", flag: "edge-cache-bytes", def: "268435456", usage: "size of an edge's in-memory object cache", num: &cache},
		{env: "EDGECMS_EDGE_FEED_POLL", flag: "edge-feed-poll", def: "50ms", usage: "how often an edge checks the store's change feed", str: &c.edgeFeedPoll},
		{env: "EDGECMS_WEBHOOK_TIMEOUT", flag: "webhook-timeout", def: "15s", usage: "time limit of one webhook delivery attempt", str: &c.webhookTimeout},
		{env: "EDGECMS_WEBHOOK_ALLOW_NETS", flag: "webhook-allow-nets", usage: "CIDRs webhook delivery may reach though private or loopback", str: &c.WebhookAllowNets},
	}
}

// loadConfig reads the configuration for a command from the environment and
// the command's flags, and validates it.
func loadConfig(fs *flag.FlagSet, args []string) (config, error) {
	var c config
	var rate, cache string
	ss := c.settings()
	for i := range ss {
		s := &ss[i]
		val := s.def
		if v, ok := os.LookupEnv(s.env); ok {
			val = v
		}
		dst := s.str
		if s.num != nil {
			dst = map[string]*string{"EDGECMS_FETCH_RATE_LIMIT": &rate, "EDGECMS_EDGE_CACHE_BYTES": &cache}[s.env]
		}
		fs.StringVar(dst, s.flag, val, s.usage+" ($"+s.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	n, err := strconv.Atoi(rate)
	if err != nil || n < 0 {
		return c, fmt.Errorf("EDGECMS_FETCH_RATE_LIMIT: want a whole number >= 0, got %q", rate)
	}
	c.FetchRateLimit = n
	m, err := strconv.ParseInt(cache, 10, 64)
	if err != nil || m < 1<<20 {
		return c, fmt.Errorf("EDGECMS_EDGE_CACHE_BYTES: want a number of bytes >= 1048576, got %q", cache)
	}
	c.EdgeCacheBytes = m
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
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return c, fmt.Errorf("DATABASE_URL: want a postgres:// URL")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return c, fmt.Errorf("EDGECMS_TLS_CERT and EDGECMS_TLS_KEY go together")
	}
	return c, nil
}

// redactStore hides the query of a store spec that mentions a secret.
func redactStore(store string) string {
	if i := strings.Index(store, "?"); i >= 0 && strings.Contains(store[i:], "secret") {
		return store[:i] + "?…"
	}
	return store
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
	return slog.GroupValue(
		slog.String("database", db), slog.String("addr", c.Addr), slog.String("store", store),
		slog.String("origin", c.OriginURL), slog.Bool("tls", c.TLSCert != ""),
		slog.Bool("secretKey", c.SecretKey != ""), slog.Int("fetchRateLimit", c.FetchRateLimit),
		slog.Int64("edgeCacheBytes", c.EdgeCacheBytes), slog.Duration("edgeFeedPoll", c.EdgeFeedPoll), slog.Duration("webhookTimeout", c.WebhookTimeout),
		slog.String("webhookAllowNets", c.WebhookAllowNets),
	)
}
