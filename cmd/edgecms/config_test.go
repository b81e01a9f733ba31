package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/publisher"
	"github.com/edgecms/edgecms/webhooks"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		args    []string
		env     map[string]string
		wantErr string
		check   func(c config) bool
	}{
		{args: nil, check: func(c config) bool {
			return c.Addr == "127.0.0.1:8080" && c.FetchRateLimit == 10 && c.WebhookTimeout == 15*time.Second && c.EdgeFeedPoll == 50*time.Millisecond
		}},
		{env: map[string]string{"EDGECMS_WEBHOOK_TIMEOUT": "30s"}, check: func(c config) bool { return c.WebhookTimeout == 30*time.Second }},
		{env: map[string]string{"EDGECMS_ADDR": "0.0.0.0:1"}, args: []string{"--addr", "127.0.0.1:9"}, check: func(c config) bool { return c.Addr == "127.0.0.1:9" }},
		{args: []string{"--webhook-timeout", "0s"}, wantErr: "EDGECMS_WEBHOOK_TIMEOUT"},
		{args: []string{"--webhook-timeout", "soon"}, wantErr: "EDGECMS_WEBHOOK_TIMEOUT"},
		{args: []string{"--fetch-rate-limit", "-1"}, wantErr: "EDGECMS_FETCH_RATE_LIMIT"},
		// Fair webhook delivery: the connect timeout, the caps in flight, the breaker.
		{args: nil, check: func(c config) bool {
			return c.Webhooks.ConnectTimeout == 3*time.Second && c.Webhooks.EndpointConcurrency == 4 &&
				c.Webhooks.InstanceConcurrency == 16 && c.Webhooks.BreakerTimeouts == 5
		}},
		{env: map[string]string{"EDGECMS_WEBHOOK_CONNECT_TIMEOUT": "500ms", "EDGECMS_WEBHOOK_ENDPOINT_CONCURRENCY": "6",
			"EDGECMS_WEBHOOK_INSTANCE_CONCURRENCY": "8", "EDGECMS_WEBHOOK_BREAKER_TIMEOUTS": "3"}, check: func(c config) bool {
			o, d := c.Webhooks.storeOptions(webhooks.Options{}), c.Webhooks.dispatcherConfig(webhooks.DispatcherConfig{})
			return o.ConnectTimeout == 500*time.Millisecond && o.BreakerTimeouts == 3 && d.EndpointConcurrency == 6 && d.InstanceConcurrency == 8
		}},
		{args: []string{"--webhook-connect-timeout", "20s"}, wantErr: "EDGECMS_WEBHOOK_CONNECT_TIMEOUT"},
		{args: []string{"--webhook-endpoint-concurrency", "0"}, wantErr: "EDGECMS_WEBHOOK_ENDPOINT_CONCURRENCY"},
		{args: []string{"--webhook-instance-concurrency", "many"}, wantErr: "EDGECMS_WEBHOOK_INSTANCE_CONCURRENCY"},
		{args: []string{"--webhook-breaker-timeouts", "-2"}, wantErr: "EDGECMS_WEBHOOK_BREAKER_TIMEOUTS"},
		{args: nil, check: func(c config) bool { return c.PreviewRateLimit == 100 && c.originConfig(nil).PreviewRateLimit == 100 }},
		{env: map[string]string{"EDGECMS_PREVIEW_RATE_LIMIT": "0"}, check: func(c config) bool { return c.originConfig(nil).PreviewRateLimit == 0 }},
		{args: []string{"--preview-rate-limit", "fast"}, wantErr: "EDGECMS_PREVIEW_RATE_LIMIT"},
		{args: []string{"--edge-cache-bytes", "12"}, wantErr: "EDGECMS_EDGE_CACHE_BYTES"},
		// The origin's render cache: 0 turns it off, which origin.Config says with a negative size.
		{args: nil, check: func(c config) bool {
			return c.RenderCacheBytes == 64<<20 && c.originConfig(nil).RenderCacheBytes == 64<<20
		}},
		{env: map[string]string{"EDGECMS_RENDER_CACHE_BYTES": "0"}, check: func(c config) bool {
			return c.RenderCacheBytes == 0 && c.originConfig(nil).RenderCacheBytes < 0
		}},
		{args: []string{"--render-cache-bytes", "1048576"}, check: func(c config) bool { return c.originConfig(nil).RenderCacheBytes == 1<<20 }},
		{args: []string{"--render-cache-bytes", "-1"}, wantErr: "EDGECMS_RENDER_CACHE_BYTES"},
		{env: map[string]string{"EDGECMS_RENDER_CACHE_BYTES": "lots"}, wantErr: "EDGECMS_RENDER_CACHE_BYTES"},
		{args: []string{"--edge-feed-poll", "2h"}, wantErr: "EDGECMS_EDGE_FEED_POLL"},
		// The publisher's memory bound.
		{args: nil, check: func(c config) bool { return c.PublishMemory == publisher.DefaultSnapshotBytes }},
		{env: map[string]string{"EDGECMS_PUBLISH_MEMORY": "67108864"}, check: func(c config) bool { return c.PublishMemory == 64<<20 }},
		{args: []string{"--publish-memory", "1000"}, wantErr: "EDGECMS_PUBLISH_MEMORY"},
		{env: map[string]string{"EDGECMS_PUBLISH_MEMORY": "lots"}, wantErr: "EDGECMS_PUBLISH_MEMORY"},
		{args: nil, check: func(c config) bool { return c.MaxVariants == publisher.DefaultMaxVariants }},
		{env: map[string]string{"EDGECMS_MAX_VARIANTS": "0"}, check: func(c config) bool { return c.MaxVariants == 0 }},
		{args: []string{"--max-variants", "250"}, check: func(c config) bool { return c.MaxVariants == 250 }},
		{env: map[string]string{"EDGECMS_MAX_VARIANTS": "-1"}, wantErr: "EDGECMS_MAX_VARIANTS"},
		{env: map[string]string{"EDGECMS_MAX_VARIANTS": "many"}, wantErr: "EDGECMS_MAX_VARIANTS"},
		{env: map[string]string{"EDGECMS_PUBLISH_LIST_PAGES": "25"}, check: func(c config) bool { return c.PublishListPages == 25 }},
		{check: func(c config) bool { return c.PublishListPages == publisher.DefaultListPages }},
		{env: map[string]string{"EDGECMS_PUBLISH_LIST_PAGES": "0"}, wantErr: "EDGECMS_PUBLISH_LIST_PAGES"},
		// What reaches the edge.
		{env: map[string]string{"EDGECMS_EDGE_CACHE_BYTES": "1048576", "EDGECMS_EDGE_FEED_POLL": "20ms"},
			check: func(c config) bool {
				ec := c.edgeConfig(nil, "http://origin:8080")
				return ec.CacheBytes == 1<<20 && ec.FeedPoll == 20*time.Millisecond && ec.OriginURL == "http://origin:8080"
			}},
		{args: []string{"--database-url", "mysql://x"}, wantErr: "DATABASE_URL"},

		// Operations: the admin address, logs, CORS, the edge's management routes.
		{args: nil, check: func(c config) bool {
			ec := c.edgeConfig(nil, "http://origin:8080")
			return c.AdminAddr == "127.0.0.1:9090" && !c.adminAddrSet && c.LogFormat == "text" && c.LogLevel == "info" &&
				c.CORS == nil && !ec.NoManagement && ec.AccessLog.Off()
		}},
		{env: map[string]string{"EDGECMS_ADMIN_ADDR": "off", "EDGECMS_LOG_FORMAT": "json", "EDGECMS_LOG_LEVEL": "warn",
			"EDGECMS_CORS_ORIGINS": "https://a.example,http://localhost:3000", "EDGECMS_EDGE_MANAGEMENT": "off", "EDGECMS_EDGE_ACCESS_LOG": "0.5"},
			check: func(c config) bool {
				ec := c.edgeConfig(nil, "http://origin:8080")
				return c.AdminAddr == "off" && c.adminAddrSet && c.LogFormat == "json" && ec.NoManagement && ec.CORS != nil &&
					ec.AccessLog.String() == "0.5" && c.originConfig(nil).CORS == nil // the caller sets the origin's
			}},
		{args: []string{"--admin-addr", "127.0.0.1:25199"}, check: func(c config) bool { return c.adminAddrSet && c.AdminAddr == "127.0.0.1:25199" }},
		{env: map[string]string{"EDGECMS_ADMIN_ADDR": "9090"}, wantErr: "EDGECMS_ADMIN_ADDR"},
		{env: map[string]string{"EDGECMS_LOG_FORMAT": "xml"}, wantErr: "EDGECMS_LOG_FORMAT"},
		{env: map[string]string{"EDGECMS_LOG_LEVEL": "loud"}, wantErr: "EDGECMS_LOG_LEVEL"},
		{env: map[string]string{"EDGECMS_CORS_ORIGINS": "a.example"}, wantErr: "EDGECMS_CORS_ORIGINS"},
		{env: map[string]string{"EDGECMS_EDGE_MANAGEMENT": "maybe"}, wantErr: "EDGECMS_EDGE_MANAGEMENT"},
		{env: map[string]string{"EDGECMS_EDGE_ACCESS_LOG": "2"}, wantErr: "EDGECMS_EDGE_ACCESS_LOG"},

		// Media: the public URL (from the listen address by default), the
		// upload limit and the transform sizes, as the origin and the edge get them.
		{args: nil, check: func(c config) bool {
			oc, ec := c.originConfig(nil), c.edgeConfig(nil, "http://origin:8080")
			return c.PublicURL == "http://127.0.0.1:8080" && oc.UploadLimit == 50<<20 && ec.UploadLimit == 50<<20 &&
				len(oc.ImageSizes) == 16 && oc.ImageSizes[15] == 3840 && fmt.Sprint(ec.ImageSizes) == fmt.Sprint(oc.ImageSizes)
		}},
		{env: map[string]string{"EDGECMS_ADDR": ":8443", "EDGECMS_TLS_CERT": "c", "EDGECMS_TLS_KEY": "k"},
			check: func(c config) bool { return c.PublicURL == "https://localhost:8443" }},
		{env: map[string]string{"EDGECMS_ADDR": "[::]:80"}, check: func(c config) bool { return c.PublicURL == "http://localhost:80" }},
		{env: map[string]string{"EDGECMS_PUBLIC_URL": "https://cdn.example.com/cms/"},
			check: func(c config) bool { return c.PublicURL == "https://cdn.example.com/cms" }},
		{args: []string{"--public-url", "cdn.example.com"}, wantErr: "EDGECMS_PUBLIC_URL"},
		{args: []string{"--public-url", "https://cdn.example.com/?x=1"}, wantErr: "EDGECMS_PUBLIC_URL"},
		{env: map[string]string{"EDGECMS_UPLOAD_MAX_BYTES": "1048576", "EDGECMS_IMAGE_WIDTHS": "800, 400,400"},
			check: func(c config) bool {
				return c.originConfig(nil).UploadLimit == 1<<20 && fmt.Sprint(c.edgeConfig(nil, "").ImageSizes) == "[400 800]"
			}},
		{args: []string{"--upload-max-bytes", "ten"}, wantErr: "EDGECMS_UPLOAD_MAX_BYTES"},
		{args: []string{"--image-widths", "400,5000"}, wantErr: "EDGECMS_IMAGE_WIDTHS"},
		{args: []string{"--image-widths", ""}, wantErr: "EDGECMS_IMAGE_WIDTHS"},

		// Sessions and trusted proxies.
		{args: nil, check: func(c config) bool {
			return c.SessionIdle == time.Hour && c.SessionLifetime == 24*time.Hour && len(c.TrustedProxies) == 2 &&
				c.TrustedProxies[0].String() == "127.0.0.0/8" && c.TrustedProxies[1].String() == "::1/128"
		}},
		{env: map[string]string{"EDGECMS_SESSION_IDLE": "20m", "EDGECMS_SESSION_LIFETIME": "7d", "EDGECMS_TRUSTED_PROXIES": "10.1.2.3, 10.9.0.0/16"},
			check: func(c config) bool {
				return c.SessionIdle == 20*time.Minute && c.SessionLifetime == 7*24*time.Hour &&
					fmt.Sprint(c.TrustedProxies) == "[10.1.2.3/32 10.9.0.0/16]"
			}},
		{env: map[string]string{"EDGECMS_TRUSTED_PROXIES": ""}, check: func(c config) bool { return c.TrustedProxies != nil && len(c.TrustedProxies) == 0 }},
		{args: []string{"--session-idle", "10s"}, wantErr: "EDGECMS_SESSION_IDLE"},
		{args: []string{"--session-lifetime", "100d"}, wantErr: "EDGECMS_SESSION_LIFETIME"},
		{args: []string{"--session-idle", "3h", "--session-lifetime", "2h"}, wantErr: "must not be shorter"},
		{args: []string{"--trusted-proxies", "edge.internal"}, wantErr: "EDGECMS_TRUSTED_PROXIES"},
		{args: []string{"--tls-cert", "a.pem"}, wantErr: "go together"},

		// The CDN purge.
		{args: nil, check: func(c config) bool { return c.PurgeURL == "" && c.PurgeMethod == "POST" && c.PurgeMaxTags == 30 }},
		{env: map[string]string{"EDGECMS_PURGE_URL": "https://api.cloudflare.com/client/v4/zones/Z/purge_cache",
			"EDGECMS_PURGE_HEADERS": "Authorization: Bearer t\nX-Extra: 1", "EDGECMS_PURGE_BODY": `{"tags":{{tags_json}}}`, "EDGECMS_PURGE_MAX_TAGS": "25"},
			check: func(c config) bool {
				return strings.HasSuffix(c.PurgeURL, "/purge_cache") && c.PurgeMethod == "POST" && c.PurgeMaxTags == 25 &&
					strings.HasPrefix(c.PurgeHeaders, "Authorization") && c.PurgeBody == `{"tags":{{tags_json}}}`
			}},
		{args: []string{"--purge-url", "http://varnish:6081/", "--purge-method", "PURGE", "--purge-headers", "xkey-purge: {{tags}}"},
			check: func(c config) bool { return c.PurgeMethod == "PURGE" && c.PurgeURL == "http://varnish:6081/" }},
		{env: map[string]string{"EDGECMS_PURGE_URL": "ftp://cdn/purge"}, wantErr: "EDGECMS_PURGE_URL"},
		{env: map[string]string{"EDGECMS_PURGE_URL": "https://"}, wantErr: "EDGECMS_PURGE_URL"},
		{env: map[string]string{"EDGECMS_PURGE_URL": "https://cdn/purge", "EDGECMS_PURGE_METHOD": "post"}, wantErr: "EDGECMS_PURGE_METHOD"},
		{env: map[string]string{"EDGECMS_PURGE_URL": "https://cdn/purge", "EDGECMS_PURGE_HEADERS": "X-A: 1\\nBearer s3cret"}, wantErr: "EDGECMS_PURGE_HEADERS: want lines of \"Name: value\" (a literal \\n also separates lines); line 2 is not"},
		{env: map[string]string{"EDGECMS_PURGE_URL": "https://cdn/purge", "EDGECMS_PURGE_MAX_TAGS": "many"}, wantErr: "EDGECMS_PURGE_MAX_TAGS"},
		{env: map[string]string{"EDGECMS_PURGE_URL": "https://cdn/purge", "EDGECMS_PURGE_MAX_TAGS": "0"}, wantErr: "EDGECMS_PURGE_MAX_TAGS"},
		{args: []string{"--purge-max-tags", "-3"}, wantErr: "EDGECMS_PURGE_MAX_TAGS"},
		{env: map[string]string{"EDGECMS_PURGE_HEADERS": "Authorization: Bearer t"}, wantErr: "EDGECMS_PURGE_HEADERS is set but EDGECMS_PURGE_URL is not"},
		{env: map[string]string{"EDGECMS_PURGE_BODY": "{}"}, wantErr: "EDGECMS_PURGE_BODY is set but EDGECMS_PURGE_URL is not"},
		{args: []string{"--purge-method", "PURGE"}, wantErr: "EDGECMS_PURGE_METHOD is set but EDGECMS_PURGE_URL is not"},

		// The scheduler's maintenance.
		{args: nil, check: func(c config) bool {
			return c.MaintenanceInterval == time.Minute && c.EventRetention == 24*time.Hour && c.SyncTombstoneRetention == 90*24*time.Hour
		}},
		{env: map[string]string{"EDGECMS_MAINTENANCE_INTERVAL": "10s", "EDGECMS_EVENT_RETENTION": "7d", "EDGECMS_SYNC_TOMBSTONE_RETENTION": "720h"},
			check: func(c config) bool {
				return c.MaintenanceInterval == 10*time.Second && c.EventRetention == 7*24*time.Hour && c.SyncTombstoneRetention == 30*24*time.Hour
			}},
		{args: []string{"--event-retention", "30m", "--sync-tombstone-retention", "365d"},
			check: func(c config) bool {
				return c.EventRetention == 30*time.Minute && c.SyncTombstoneRetention == 365*24*time.Hour
			}},
		{args: []string{"--maintenance-interval", "0s"}, wantErr: "EDGECMS_MAINTENANCE_INTERVAL"},
		{args: []string{"--maintenance-interval", "2d"}, wantErr: "EDGECMS_MAINTENANCE_INTERVAL"},
		{args: []string{"--event-retention", "10s"}, wantErr: "EDGECMS_EVENT_RETENTION"},
		{args: []string{"--event-retention", "week"}, wantErr: "EDGECMS_EVENT_RETENTION"},
		{args: []string{"--event-retention", "1.5d"}, wantErr: "EDGECMS_EVENT_RETENTION"},
		{args: []string{"--sync-tombstone-retention", "-1d"}, wantErr: "EDGECMS_SYNC_TOMBSTONE_RETENTION"},
		{args: []string{"--sync-tombstone-retention", "30m"}, wantErr: "EDGECMS_SYNC_TOMBSTONE_RETENTION"},
	}
	for i, tt := range tests {
		// A subtest each, so that the variables one case sets are gone
		// for the next.
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c, err := loadConfig(fs, tt.args)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("loadConfig(%v, %v) error = %v, want one naming %s", tt.args, tt.env, err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("loadConfig(%v, %v) = %v", tt.args, tt.env, err)
			case !tt.check(c):
				t.Errorf("loadConfig(%v, %v) = %+v, not what was asked", tt.args, tt.env, c)
			}
		})
	}
}

// TestPurgeHeadersErrorHidesValues: a malformed purge header may hold a
// credential; the error says which line, not what it holds.
func TestPurgeHeadersErrorHidesValues(t *testing.T) {
	t.Setenv("EDGECMS_PURGE_URL", "https://cdn.example/purge")
	t.Setenv("EDGECMS_PURGE_HEADERS", "Authorization Bearer s3cret")
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	_, err := loadConfig(fs, nil)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("loadConfig error = %v, want one that does not show the header", err)
	}
}
